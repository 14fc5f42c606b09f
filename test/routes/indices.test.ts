// Indices through the HTTP routes on the sim (docs/instruments.md: instruments of type index in quotes, K-lines,
// intraday, instruments, universes; no depth, no ex-factors, adjust a no-op). CN index codes collide
// with stock codes: 000001.SH is the SSE Composite and 000001.SZ Ping An Bank on every route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import { HK_INDEX_CODES, US_INDEX_CODES } from '../../src/markets/indices.ts';

const headers = { 'x-api-key': KEYS.demo };
let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

async function get(url: string, status = 200) {
  const res = await app.inject({ url, headers });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(status);
  return res;
}
const data = async <T>(url: string) => (await get(url)).json().data as T;

type Quote = { symbol: string; last_price: number; volume: number; amount: number; ext: { name: string; turnover_rate: number | null } };
type Candles = { timestamp: number[]; open: number[]; close: number[]; volume: number[]; amount: number[] };
type Instrument = { symbol: string; code: string; type: string; name: string; ext: Record<string, unknown> };

describe('000001.SH (上证指数) and 000001.SZ (平安银行) are never confused', () => {
  it('quotes', async () => {
    const quotes = await data<Quote[]>('/v1/quotes?symbols=000001.SH,000001.SZ');
    expect(quotes.map((q) => [q.symbol, q.ext.name])).toEqual([['000001.SH', '上证指数'], ['000001.SZ', '平安银行']]);
    expect(quotes[0].last_price).toBeGreaterThan(1000);
    expect(quotes[1].last_price).toBeLessThan(100);
  });

  it('klines of every period, daily and minute', async () => {
    for (const period of ['1d', '1w', '1M', '1Q', '1Y', '1m', '5m', '10m', '15m', '30m', '60m']) {
      const sh = await data<Candles>(`/v1/klines?symbol=000001.SH&period=${period}&count=5`);
      const sz = await data<Candles>(`/v1/klines?symbol=000001.SZ&period=${period}&count=5`);
      expect(sh.close.length).toBe(5);
      expect(Math.min(...sh.close)).toBeGreaterThan(1000);
      expect(Math.max(...sz.close)).toBeLessThan(100);
    }
  });

  it('intraday', async () => {
    const sh = await data<Candles>('/v1/klines/intraday?symbol=000001.SH');
    const sz = await data<Candles>('/v1/klines/intraday?symbol=000001.SZ');
    expect(sh.timestamp).toEqual(sz.timestamp);
    expect(Math.min(...sh.close)).toBeGreaterThan(1000);
    expect(Math.max(...sz.close)).toBeLessThan(100);
  });

  it('instruments', async () => {
    const list = await data<Instrument[]>('/v1/instruments?symbols=000001.SH,000001.SZ');
    expect(list.map((i) => [i.symbol, i.type, i.name])).toEqual([['000001.SH', 'index', '上证指数'], ['000001.SZ', 'stock', '平安银行']]);
    expect(list[0].ext).toMatchObject({ total_shares: null, float_shares: null, limit_up: null, limit_down: null, tick_size: 0.01 });
    expect(list[0].ext.lot_size).toBeUndefined();
    expect(list[1].ext.total_shares).toBeGreaterThan(0);
  });

  it('ex-factors: an empty list for the index, the bank\'s dividends for the stock', async () => {
    const ex = await data<Record<string, unknown[]>>('/v1/klines/ex-factors?symbols=000001.SH,000001.SZ');
    expect(Object.keys(ex)).toEqual(['000001.SH', '000001.SZ']);
    expect(ex['000001.SH']).toEqual([]);
    expect(ex['000001.SZ'].length).toBeGreaterThan(0);
  });

  it('depth: 404 SYMBOL_NOT_FOUND for the index (it has no order book), five levels for the stock', async () => {
    const res = await get('/v1/depth?symbol=000001.SH', 404);
    expect(res.json()).toMatchObject({ code: 404, error: 'SYMBOL_NOT_FOUND', details: { symbol: '000001.SH', type: 'index' } });
    const book = await data<{ symbol: string; bid_prices: number[] }>('/v1/depth?symbol=000001.SZ');
    expect(book.symbol).toBe('000001.SZ');
    expect(book.bid_prices.length).toBeGreaterThan(0);
    const batch = await get('/v1/depth/batch?symbols=000001.SH,000001.SZ,HSI.HK');
    expect(Object.keys(batch.json().data)).toEqual(['000001.SZ']);
    expect(batch.headers['x-missing-symbols']).toBe('000001.SH,HSI.HK');
  });
});

describe('indices in the lists', () => {
  const byType = async (exchange: string, type: string) => (await get(`/v1/exchanges/${exchange}/instruments?type=${type}`)).json().data as Instrument[];

  it('/v1/exchanges/{ex}/instruments?type=index lists each exchange\'s indices, and only them', async () => {
    expect((await byType('SH', 'index')).map((i) => i.symbol)).toEqual(['000001.SH', '000300.SH', '000905.SH', '000852.SH', '000016.SH', '000688.SH']);
    expect((await byType('SZ', 'index')).map((i) => i.symbol)).toEqual(['399001.SZ', '399006.SZ']);
    expect((await byType('BJ', 'index')).map((i) => i.symbol)).toEqual(['899050.BJ']);
    expect((await byType('hk', 'index')).map((i) => i.symbol)).toEqual(['HSI.HK', 'HSCEI.HK', 'HSTECH.HK']);
    expect((await byType('US', 'index')).map((i) => i.symbol)).toEqual(['SPX.US', 'NDX.US', 'DJI.US']);
    expect((await byType('SH', 'stock')).some((i) => i.type === 'index' || i.symbol === '000001.SH')).toBe(false);
  });

  it('the universes CN_Index, HK_Index, US_Index', async () => {
    const got = await data<Record<string, { symbols: string[]; category: string }>>('/v1/universes/CN_Index');
    expect(got).toMatchObject({ id: 'CN_Index', region: 'CN', category: 'index', symbol_count: 9 });
    expect((await data<{ symbols: string[] }>('/v1/universes/HK_Index')).symbols).toEqual(['HSI.HK', 'HSCEI.HK', 'HSTECH.HK']);
    expect((await data<{ symbols: string[] }>('/v1/universes/US_Index')).symbols).toEqual(['SPX.US', 'NDX.US', 'DJI.US']);
    const quotes = await data<Quote[]>('/v1/quotes?universes=HK_Index,US_Index');
    expect(quotes.map((q) => q.symbol)).toEqual(['HSI.HK', 'HSCEI.HK', 'HSTECH.HK', 'SPX.US', 'NDX.US', 'DJI.US']);
  });

  it('no HK or US index symbol equals a listed ticker in the instrument lists', async () => {
    for (const [exchange, codes] of [['HK', HK_INDEX_CODES], ['US', US_INDEX_CODES]] as const) {
      const all = (await get(`/v1/exchanges/${exchange}/instruments`)).json().data as Instrument[];
      const listed = new Set(all.filter((i) => i.type !== 'index').map((i) => i.code));
      const indices = all.filter((i) => i.type === 'index').map((i) => i.code);
      expect(indices.sort()).toEqual([...codes].sort());
      for (const code of codes) expect(listed.has(code), `${code}.${exchange}`).toBe(false);
      // HK tickers are digits; index codes are letters.
      if (exchange === 'HK') for (const code of listed) expect(code).toMatch(/^\d{5}$/);
    }
  });
});

describe('units and adjustment', () => {
  it('adjust is accepted and changes nothing on an index', async () => {
    for (const symbol of ['000001.SH', 'HSI.HK', 'SPX.US']) {
      const none = await data<Candles>(`/v1/klines?symbol=${symbol}&period=1d&count=300&adjust=none`);
      for (const adjust of ['forward', 'backward', 'forward_additive', 'backward_exrights']) {
        expect(await data<Candles>(`/v1/klines?symbol=${symbol}&period=1d&count=300&adjust=${adjust}`), `${symbol} ${adjust}`).toEqual(none);
      }
    }
  });

  it('an index quote: volume in constituent shares, amount in currency at share prices (not volume × level), no turnover', async () => {
    const [q] = await data<Quote[]>('/v1/quotes?symbols=000300.SH');
    expect(q.volume).toBeGreaterThan(0);
    expect(q.ext.turnover_rate).toBeNull();
    const perShare = q.amount / q.volume;
    expect(perShare).toBeGreaterThan(1);
    expect(perShare).toBeLessThan(200);
    expect(q.last_price / perShare).toBeGreaterThan(50);
  });
});

describe('index sessions follow their market, at several hours', () => {
  // 2025-06-18 (Wednesday) 10:15:30 Beijing; after the close; the next morning before the open.
  const instants = [CN_MORNING, Date.UTC(2025, 5, 18, 8, 0), Date.UTC(2025, 5, 19, 0, 30)];
  it.each(instants)('intraday of 000001.SH and HSI.HK has the bars of 600519.SH and 00700.HK at %i', async (now) => {
    const { app: at } = await buildTestApp({ now: () => now });
    try {
      const bars = async (symbol: string) => ((await at.inject({ url: `/v1/klines/intraday?symbol=${symbol}`, headers })).json().data as Candles).timestamp;
      const sh = await bars('000001.SH');
      expect(sh).toEqual(await bars('600519.SH'));
      expect(await bars('HSI.HK')).toEqual(await bars('00700.HK'));
      expect(sh.length).toBeGreaterThan(0);
    } finally {
      await at.close();
    }
  });
});
