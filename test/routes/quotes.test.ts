// GET/POST /v1/quotes on the sim adapter: symbols, pools (aliases, several pools), order,
// normalisation, X-Missing-Symbols, X-Upstream.
import type { Quote } from '../../src/domain.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});


const get = (url: string) => app.inject({ method: 'GET', url, headers: { 'x-api-key': KEYS.demo } });
const post = (url: string, payload: unknown) => app.inject({ method: 'POST', url, headers: { 'x-api-key': KEYS.demo }, payload: payload as object });
const symbolsOf = (body: { data: Quote[] }) => body.data.map((q) => q.symbol);

async function members(id: string): Promise<string[]> {
  const res = await get(`/v1/universes/${id}`);
  expect(res.statusCode).toBe(200);
  return res.json().data.symbols;
}

describe('GET /v1/quotes by symbols', () => {
  it('answers a Quote per symbol in request order, labelled as simulated', async () => {
    const res = await get('/v1/quotes?symbols=AAPL.US,600519.SH,00700.HK');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('sim');
    expect(res.headers['x-missing-symbols']).toBeUndefined();
    expect(String(res.headers['content-type'])).toContain('application/json');
    const body = res.json() as { data: Quote[] };
    expect(symbolsOf(body)).toEqual(['AAPL.US', '600519.SH', '00700.HK']);
    expect(body.data.map((q) => q.region)).toEqual(['US', 'CN', 'HK']);
    expect(body.data.map((q) => q.ext.type)).toEqual(['us_equity', 'cn_equity', 'hk_equity']);
    expect(body.data.map((q) => q.ext.name)).toEqual(['Apple Inc.', '贵州茅台', '腾讯控股']);
    // CN and HK are in their morning session at CN_MORNING; New York is after its close.
    expect(body.data[1].session).toBe('regular');
    expect(body.data[2].session).toBe('regular');
    expect(['after_hours', 'closed']).toContain(body.data[0].session);
    for (const q of body.data) {
      expect(Object.keys(q).sort()).toEqual(['amount', 'ext', 'high', 'last_price', 'low', 'open', 'prev_close', 'region', 'session', 'symbol', 'timestamp', 'volume']);
      expect(Number.isInteger(q.volume)).toBe(true);
      expect(Number.isInteger(q.timestamp)).toBe(true);
      expect(q.timestamp).toBeLessThanOrEqual(CN_MORNING);
      expect(q.high).toBeGreaterThanOrEqual(q.low);
      expect(q.high).toBeGreaterThanOrEqual(q.last_price);
      expect(q.low).toBeLessThanOrEqual(q.last_price);
      // Ratios are fractions: change_pct = change_amount / prev_close.
      expect(q.ext.change_amount).toBeCloseTo(q.last_price - q.prev_close, 6);
      expect(q.ext.change_pct).toBeCloseTo(q.ext.change_amount / q.prev_close, 5);
      expect(q.ext.amplitude).toBeCloseTo((q.high - q.low) / q.prev_close, 5);
      expect(Math.abs(q.ext.change_pct)).toBeLessThan(1);
    }
    // The CN quote is stamped at the clock, inside the current minute.
    expect(body.data[1].timestamp).toBe(CN_MORNING);
  });

  it('normalises 700.hk, drops duplicates after normalisation, keeps first-occurrence order', async () => {
    const res = await get('/v1/quotes?symbols=700.hk,%20600519.sh%20,00700.HK,600519.SH,,aapl.us,700.HK');
    expect(res.statusCode).toBe(200);
    expect(symbolsOf(res.json())).toEqual(['00700.HK', '600519.SH', 'AAPL.US']);
  });

  it('omits unknown symbols and lists them in X-Missing-Symbols, in request order', async () => {
    const res = await get('/v1/quotes?symbols=999999.SH,600519.SH,ZZZZ.US,99999.HK,00700.HK');
    expect(res.statusCode).toBe(200);
    expect(symbolsOf(res.json())).toEqual(['600519.SH', '00700.HK']);
    expect(res.headers['x-missing-symbols']).toBe('999999.SH,ZZZZ.US,99999.HK');
    expect(res.headers['x-upstream']).toBe('sim');
  });

  it('answers 200 with an empty list and every symbol missing when none is known', async () => {
    const res = await get('/v1/quotes?symbols=999999.SH,ZZZZ.US');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [] });
    expect(res.headers['x-missing-symbols']).toBe('999999.SH,ZZZZ.US');
  });
});

describe('GET /v1/quotes by universes', () => {
  it('quotes every member of a pool, in pool order', async () => {
    const etf = await members('CN_ETF');
    expect(etf.length).toBe(25);
    const res = await get('/v1/quotes?universes=CN_ETF');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('sim');
    expect(symbolsOf(res.json())).toEqual(etf);
  });

  it('accepts the TickFlow alias CN_Equity_A as CN_Stock', async () => {
    const stock = await members('CN_Stock');
    expect(stock.length).toBe(87);
    const alias = await get('/v1/quotes?universes=CN_Equity_A');
    expect(alias.statusCode).toBe(200);
    expect(symbolsOf(alias.json())).toEqual(stock);
  });

  it('returns each member once across several pools (and across a pool and its alias)', async () => {
    const stock = await members('CN_Stock');
    const etf = await members('CN_ETF');
    const union = [...new Set([...stock, ...etf])];
    const res = await get('/v1/quotes?universes=CN_Stock,CN_ETF,CN_Equity_A');
    expect(res.statusCode).toBe(200);
    const symbols = symbolsOf(res.json());
    expect(new Set(symbols).size).toBe(symbols.length);
    expect(symbols).toEqual(union);
  });

  it('mixes markets: HK_Equity and US_Equity', async () => {
    const hk = await members('HK_Stock');
    const us = await members('US_Stock');
    const res = await get('/v1/quotes?universes=HK_Equity,US_Equity');
    expect(res.statusCode).toBe(200);
    expect(symbolsOf(res.json())).toEqual([...hk, ...us]);
    expect(res.headers['x-upstream']).toBe('sim');
  });
});

describe('POST /v1/quotes', () => {
  it('{symbols} answers like the GET, in body order, normalised', async () => {
    const res = await post('/v1/quotes', { symbols: ['00700.HK', '600519.SH', '700.hk', 'AAPL.US', '999999.SH'] });
    expect(res.statusCode).toBe(200);
    expect(symbolsOf(res.json())).toEqual(['00700.HK', '600519.SH', 'AAPL.US']);
    expect(res.headers['x-missing-symbols']).toBe('999999.SH');
    expect(res.headers['x-upstream']).toBe('sim');
    const viaGet = await get('/v1/quotes?symbols=00700.HK,600519.SH,AAPL.US');
    expect(res.json()).toEqual(viaGet.json());
  });

  it('{universes} answers like the GET', async () => {
    const res = await post('/v1/quotes', { universes: ['CN_ETF', 'HK_Stock'] });
    expect(res.statusCode).toBe(200);
    const viaGet = await get('/v1/quotes?universes=CN_ETF,HK_Stock');
    expect(res.json()).toEqual(viaGet.json());
    expect(symbolsOf(res.json())).toEqual([...(await members('CN_ETF')), ...(await members('HK_Stock'))]);
  });

  it('an empty body object is INVALID_PARAMETER (exactly one of symbols, universes)', async () => {
    const res = await post('/v1/quotes', {});
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('INVALID_PARAMETER');
  });
});
