// Cross-route consistency on the sim adapter: a quote, today's intraday and daily bars and the
// book all describe the same market at the same instant.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import type { CandlesBody } from '../helpers/candles.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

async function data(url: string) {
  const res = await app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
  expect(res.statusCode, `${url}: ${res.body.slice(0, 200)}`).toBe(200);
  return res.json().data;
}

// CN and HK are mid-session at CN_MORNING; the US symbols show the finished 2025-06-17 session.
const SYMBOLS = ['600519.SH', '000001.SZ', '300750.SZ', '00700.HK', '09988.HK', 'AAPL.US', 'BRK.B.US'];

async function snapshot(symbol: string) {
  const [quotes, intraday, daily, depth, minute, events] = await Promise.all([
    data(`/v1/quotes?symbols=${symbol}`),
    data(`/v1/klines/intraday?symbol=${symbol}&period=1m`),
    data(`/v1/klines?symbol=${symbol}&period=1d&count=2&adjust=none`),
    data(`/v1/depth?symbol=${symbol}`),
    data(`/v1/klines?symbol=${symbol}&period=1m&count=5&adjust=none`),
    data(`/v1/klines/ex-factors?symbols=${symbol}`),
  ]);
  return {
    quote: quotes[0] as { last_price: number; prev_close: number; open: number; high: number; low: number; volume: number; amount: number; timestamp: number },
    intraday: intraday as CandlesBody,
    daily: daily as CandlesBody,
    depth: depth as { bid_prices: number[]; ask_prices: number[] },
    minute: minute as CandlesBody,
    exDates: (events[symbol] as { timestamp: number }[]).map((e) => e.timestamp),
  };
}

describe.each(SYMBOLS)('%s', (symbol) => {
  it("quote.last_price == newest intraday 1m close == today's 1d close (adjust none), inside the best bid/ask", async () => {
    const s = await snapshot(symbol);
    expect(s.quote.last_price).toBe(s.intraday.close.at(-1));
    expect(s.quote.last_price).toBe(s.daily.close.at(-1));
    expect(s.depth.bid_prices[0]).toBeLessThanOrEqual(s.quote.last_price);
    expect(s.depth.ask_prices[0]).toBeGreaterThanOrEqual(s.quote.last_price);
    expect(s.depth.bid_prices[0]).toBeLessThan(s.depth.ask_prices[0]);
  });

  it("quote.prev_close == yesterday's daily close (adjust none); the quote's day is today's daily bar", async () => {
    const s = await snapshot(symbol);
    // Fixture guard: on an ex-date the quote's base is the ex-rights reference price instead.
    expect(s.exDates).not.toContain(s.daily.timestamp.at(-1));
    expect(s.quote.prev_close).toBe(s.daily.close[0]);
    expect(s.daily.prev_close.at(-1)).toBe(s.daily.close[0]);
    expect(s.quote.open).toBe(s.daily.open.at(-1));
    expect(s.quote.high).toBe(s.daily.high.at(-1));
    expect(s.quote.low).toBe(s.daily.low.at(-1));
    expect(s.quote.volume).toBe(s.daily.volume.at(-1));
    expect(s.quote.volume).toBe(s.intraday.volume.reduce((a, b) => a + b, 0));
    expect(s.quote.timestamp).toBeLessThanOrEqual(CN_MORNING);
  });

  it('/v1/klines 1m ends with the same bar as the intraday route (the partial current bar in session)', async () => {
    const s = await snapshot(symbol);
    expect(s.minute.timestamp.at(-1)).toBe(s.intraday.timestamp.at(-1));
    expect(s.minute.close.at(-1)).toBe(s.quote.last_price);
    expect(s.minute.timestamp).toEqual(s.intraday.timestamp.slice(-5));
    expect(s.minute.close).toEqual(s.intraday.close.slice(-5));
  });
});
