// GET /v1/depth and /v1/depth/batch: five-level books, best level first, no padding.
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

interface Depth {
  symbol: string;
  region: string;
  timestamp: number;
  bid_prices: number[];
  bid_volumes: number[];
  ask_prices: number[];
  ask_volumes: number[];
}

const headers = { 'x-api-key': KEYS.demo };

function expectBook(d: Depth): void {
  expect(Object.keys(d).sort()).toEqual(['ask_prices', 'ask_volumes', 'bid_prices', 'bid_volumes', 'region', 'symbol', 'timestamp']);
  expect(d.bid_prices.length).toBe(d.bid_volumes.length);
  expect(d.ask_prices.length).toBe(d.ask_volumes.length);
  expect(d.bid_prices.length).toBeLessThanOrEqual(5);
  expect(d.ask_prices.length).toBeLessThanOrEqual(5);
  for (let k = 1; k < d.bid_prices.length; k++) expect(d.bid_prices[k], `${d.symbol} bid ${k}`).toBeLessThan(d.bid_prices[k - 1]);
  for (let k = 1; k < d.ask_prices.length; k++) expect(d.ask_prices[k], `${d.symbol} ask ${k}`).toBeGreaterThan(d.ask_prices[k - 1]);
  if (d.bid_prices.length > 0 && d.ask_prices.length > 0) expect(d.bid_prices[0]).toBeLessThan(d.ask_prices[0]);
  for (const v of [...d.bid_volumes, ...d.ask_volumes]) {
    expect(Number.isInteger(v)).toBe(true);
    expect(v).toBeGreaterThan(0);
  }
  for (const p of [...d.bid_prices, ...d.ask_prices]) expect(p).toBeGreaterThan(0);
  expect(Number.isInteger(d.timestamp)).toBe(true);
}

describe('GET /v1/depth', () => {
  it.each([['600519.SH', 'CN'], ['00700.HK', 'HK'], ['AAPL.US', 'US'], ['BRK.B.US', 'US']])('%s: a full five-level book', async (symbol, region) => {
    const res = await app.inject({ url: `/v1/depth?symbol=${symbol}`, headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('sim');
    const d = res.json().data as Depth;
    expect(d.symbol).toBe(symbol);
    expect(d.region).toBe(region);
    expectBook(d);
    // Four arrays of equal length: five levels each side.
    expect([d.bid_prices.length, d.bid_volumes.length, d.ask_prices.length, d.ask_volumes.length]).toEqual([5, 5, 5, 5]);
    expect(d.timestamp).toBeLessThanOrEqual(CN_MORNING);
  });

  it('normalises the symbol (700.hk → 00700.HK)', async () => {
    const res = await app.inject({ url: '/v1/depth?symbol=700.hk', headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.symbol).toBe('00700.HK');
  });

  it('CN tick: levels are one tick (0.01) apart for 600519.SH', async () => {
    const d = (await app.inject({ url: '/v1/depth?symbol=600519.SH', headers })).json().data as Depth;
    for (let k = 1; k < 5; k++) {
      expect(d.bid_prices[k - 1] - d.bid_prices[k]).toBeCloseTo(0.01, 6);
      expect(d.ask_prices[k] - d.ask_prices[k - 1]).toBeCloseTo(0.01, 6);
    }
  });
});

describe('GET /v1/depth/batch', () => {
  it('maps normalised symbols to the single answer; unknown ones listed in X-Missing-Symbols', async () => {
    const res = await app.inject({ url: '/v1/depth/batch?symbols=700.hk,600519.SH,999999.SH,00700.HK', headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('sim');
    expect(res.headers['x-missing-symbols']).toBe('999999.SH');
    const data = res.json().data as Record<string, Depth>;
    expect(Object.keys(data)).toEqual(['00700.HK', '600519.SH']);
    const single = await app.inject({ url: '/v1/depth?symbol=600519.SH', headers });
    expect(data['600519.SH']).toEqual(single.json().data);
  });

  it('every book of 100 real symbols is well formed', async () => {
    const pools = await Promise.all(['CN_Stock', 'HK_Stock'].map((id) => app.inject({ url: `/v1/universes/${id}`, headers })));
    const symbols = pools.flatMap((p) => p.json().data.symbols as string[]).slice(0, 100);
    expect(symbols.length).toBe(100);
    const res = await app.inject({ url: `/v1/depth/batch?symbols=${symbols.join(',')}`, headers });
    expect(res.statusCode).toBe(200);
    const data = res.json().data as Record<string, Depth>;
    expect(Object.keys(data)).toEqual(symbols);
    for (const d of Object.values(data)) expectBook(d);
  });
});
