// GET/POST /v1/instruments: metadata in request order, normalised, unknown symbols listed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

interface Instrument {
  code: string;
  exchange: string;
  name: string;
  region: string;
  symbol: string;
  type: string;
  ext: Record<string, unknown> & { type: string; listing_date: string | null; tick_size: number; limit_up: number | null; limit_down: number | null; lot_size?: number };
}

const headers = { 'x-api-key': KEYS.demo };

describe('GET /v1/instruments', () => {
  it('answers exact metadata for CN, HK and US symbols in request order', async () => {
    const res = await app.inject({ url: '/v1/instruments?symbols=600519.SH,700.hk,brk.b.us', headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('sim');
    const data = res.json().data as Instrument[];
    expect(data.map((i) => i.symbol)).toEqual(['600519.SH', '00700.HK', 'BRK.B.US']);
    expect(data.map(({ code, exchange, name, region, symbol, type }) => ({ code, exchange, name, region, symbol, type }))).toEqual([
      { code: '600519', exchange: 'SH', name: '贵州茅台', region: 'CN', symbol: '600519.SH', type: 'stock' },
      { code: '00700', exchange: 'HK', name: '腾讯控股', region: 'HK', symbol: '00700.HK', type: 'stock' },
      { code: 'BRK.B', exchange: 'US', name: data[2].name, region: 'US', symbol: 'BRK.B.US', type: 'stock' },
    ]);
    expect(data[2].name).toMatch(/Berkshire/);
    expect(data.map((i) => i.ext.type)).toEqual(['cn_equity', 'hk_equity', 'us_equity']);
    expect(data[0].ext.listing_date).toBe('2001-08-27');
    expect(data[1].ext.listing_date).toBe('2004-06-16');
    expect(data[0].ext.lot_size).toBe(100);
    expect(data[0].ext.tick_size).toBe(0.01);
    for (const i of data) {
      expect(Object.keys(i.ext).sort()).toEqual(['float_shares', 'limit_down', 'limit_up', 'listing_date', 'lot_size', 'tick_size', 'total_shares', 'type']);
      expect(i.ext.listing_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(Number.isInteger(i.ext.total_shares)).toBe(true);
      expect(Number(i.ext.float_shares)).toBeLessThanOrEqual(Number(i.ext.total_shares));
    }
  });

  it("CN limit prices are ±10% of the quote's prev_close (main board)", async () => {
    const [inst, quote] = await Promise.all([
      app.inject({ url: '/v1/instruments?symbols=600519.SH', headers }),
      app.inject({ url: '/v1/quotes?symbols=600519.SH', headers }),
    ]);
    const ext = (inst.json().data as Instrument[])[0].ext;
    const prev = quote.json().data[0].prev_close as number;
    expect(ext.limit_up).toBeCloseTo(Math.round(prev * 1.1 * 100) / 100, 2);
    expect(ext.limit_down).toBeCloseTo(Math.round(prev * 0.9 * 100) / 100, 2);
  });

  it('an ETF has type etf', async () => {
    const pool = await app.inject({ url: '/v1/universes/CN_ETF', headers });
    const first = pool.json().data.symbols[0] as string;
    const res = await app.inject({ url: `/v1/instruments?symbols=${first}`, headers });
    expect((res.json().data as Instrument[])[0].type).toBe('etf');
  });

  it('omits unknown symbols and lists them in X-Missing-Symbols', async () => {
    const res = await app.inject({ url: '/v1/instruments?symbols=ZZZZ.US,600519.SH,999999.SZ', headers });
    expect(res.statusCode).toBe(200);
    expect((res.json().data as Instrument[]).map((i) => i.symbol)).toEqual(['600519.SH']);
    expect(res.headers['x-missing-symbols']).toBe('ZZZZ.US,999999.SZ');
  });
});

describe('POST /v1/instruments', () => {
  it('{symbols} answers exactly like the GET', async () => {
    const post = await app.inject({ method: 'POST', url: '/v1/instruments', headers, payload: { symbols: ['AAPL.US', 'msft.us', 'AAPL.US', '600519.SH', 'NOPE.US'] } });
    expect(post.statusCode).toBe(200);
    expect(post.headers['x-missing-symbols']).toBe('NOPE.US');
    const get = await app.inject({ url: '/v1/instruments?symbols=AAPL.US,MSFT.US,600519.SH,NOPE.US', headers });
    expect(post.json()).toEqual(get.json());
    expect((post.json().data as Instrument[]).map((i) => i.symbol)).toEqual(['AAPL.US', 'MSFT.US', '600519.SH']);
  });

  it('a body without symbols is INVALID_PARAMETER', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/instruments', headers, payload: {} });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('INVALID_PARAMETER');
  });
});
