// /v1/klines?adjust=… equals the candle engine applied to adjust=none and /v1/klines/ex-factors
// from the same service, for every adjust type, including windows that cut through events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { adjustCandles, type AdjustEvent } from '../../src/candles/adjust.ts';
import { aggregateBy, periodKeyFn } from '../../src/candles/aggregate.ts';
import { localDate } from '../../src/markets/calendar.ts';
import type { AdjustType, Candles, ExFactor } from '../../src/domain.ts';
import { ADJUST_TYPES } from '../../src/domain.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

async function get<T>(url: string): Promise<T> {
  const res = await app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
  expect(res.statusCode, `${url}: ${res.body.slice(0, 200)}`).toBe(200);
  return (res.json() as { data: T }).data;
}

const SYMBOL = '600519.SH'; // several cash dividends and bonus events in the sim since 2001

/** The events with P_prev taken from the raw daily bars (the close of the last bar before t_i). */
function eventsWithPrev(factors: ExFactor[], rawDaily: Candles): AdjustEvent[] {
  return factors.map((f) => {
    let k = rawDaily.timestamp.length - 1;
    while (k >= 0 && rawDaily.timestamp[k] >= f.timestamp) k -= 1;
    // The parts (cash_dividend, bonus_ratio, …) travel with the record: the ex-rights methods read them.
    return { ...f, prevClose: rawDaily.close[k] };
  });
}

describe('adjustment through the routes agrees with the engine and the served ex-factors', () => {
  let factors: ExFactor[];
  let rawAll: Candles;

  beforeAll(async () => {
    factors = (await get<Record<string, ExFactor[]>>(`/v1/klines/ex-factors?symbols=${SYMBOL}`))[SYMBOL];
    rawAll = await get<Candles>(`/v1/klines?symbol=${SYMBOL}&adjust=none&count=10000`);
  });

  it('the instrument has several events, and raw candles show the ex-date gap', () => {
    expect(factors.length).toBeGreaterThanOrEqual(5);
    // The biggest event (a bonus issue): the ex-date opens near ref = P_prev / f, not near P_prev.
    const big = factors.reduce((a, b) => (b.ex_factor > a.ex_factor ? b : a));
    expect(big.ex_factor).toBeGreaterThan(1.1);
    const k = rawAll.timestamp.indexOf(big.timestamp);
    expect(k).toBeGreaterThan(0);
    const pPrev = rawAll.close[k - 1];
    // On the ex-date, raw prev_close is the raw previous close.
    expect(rawAll.prev_close?.[k]).toBe(pPrev);
    const ref = pPrev / big.ex_factor;
    expect(Math.abs(rawAll.open[k] - ref) / ref).toBeLessThan(0.1);
    expect(Math.abs(rawAll.open[k] - pPrev)).toBeGreaterThan(Math.abs(rawAll.open[k] - ref));
  });

  it.each(ADJUST_TYPES.filter((a) => a !== 'none'))('%s over the full history', async (adjust) => {
    const served = await get<Candles>(`/v1/klines?symbol=${SYMBOL}&adjust=${adjust}&count=10000`);
    const expected = adjustCandles(rawAll, eventsWithPrev(factors, rawAll), adjust as AdjustType);
    expect(served.timestamp).toEqual(rawAll.timestamp);
    for (const column of ['open', 'high', 'low', 'close'] as const) {
      served[column].forEach((v, i) => expect(v).toBeCloseTo(expected[column][i], 5));
    }
    expect(served.volume).toEqual(rawAll.volume);
    expect(served.amount).toEqual(rawAll.amount);
    // prev_close is the previous bar's close in the same adjustment.
    for (let i = 1; i < served.close.length; i++) expect(served.prev_close?.[i]).toBe(served.close[i - 1]);
  });

  it.each(ADJUST_TYPES.filter((a) => a !== 'none'))('%s on windows that cut through events', async (adjust) => {
    const all = await get<Candles>(`/v1/klines?symbol=${SYMBOL}&adjust=${adjust}&count=10000`);
    // A window from 3 bars before the 3rd-last event to 3 bars after the 2nd-last event.
    const e1 = factors[factors.length - 3].timestamp;
    const e2 = factors[factors.length - 2].timestamp;
    const i1 = all.timestamp.indexOf(e1);
    const i2 = all.timestamp.indexOf(e2);
    const start = all.timestamp[i1 - 3];
    const end = all.timestamp[i2 + 3];
    const window = await get<Candles>(`/v1/klines?symbol=${SYMBOL}&adjust=${adjust}&start_time=${start}&end_time=${end}&count=10000`);
    const from = i1 - 3;
    const to = i2 + 4;
    expect(window.timestamp).toEqual(all.timestamp.slice(from, to));
    expect(window.close).toEqual(all.close.slice(from, to));
    expect(window.open).toEqual(all.open.slice(from, to));
    expect(window.prev_close).toEqual(all.prev_close?.slice(from, to));
    // Newest `count` inside the range.
    const tail = await get<Candles>(`/v1/klines?symbol=${SYMBOL}&adjust=${adjust}&start_time=${start}&end_time=${end}&count=4`);
    expect(tail.timestamp).toEqual(all.timestamp.slice(to - 4, to));
    expect(tail.close).toEqual(all.close.slice(to - 4, to));
  });

  it('forward keeps the latest prices as traded; backward keeps the first', async () => {
    const forward = await get<Candles>(`/v1/klines?symbol=${SYMBOL}&adjust=forward&count=10000`);
    const backward = await get<Candles>(`/v1/klines?symbol=${SYMBOL}&adjust=backward&count=10000`);
    const n = rawAll.close.length;
    expect(forward.close[n - 1]).toBe(rawAll.close[n - 1]);
    expect(backward.close[0]).toBe(rawAll.close[0]);
    expect(forward.close[0]).toBeLessThan(rawAll.close[0]);
  });

  it('weekly bars are aggregated from adjusted daily bars', async () => {
    const weekly = await get<Candles>(`/v1/klines?symbol=${SYMBOL}&adjust=backward&period=1w&count=10000`);
    const daily = await get<Candles>(`/v1/klines?symbol=${SYMBOL}&adjust=backward&count=10000`);
    const expected = aggregateBy(daily, periodKeyFn('1w', (ts) => localDate('CN', ts)), 'last');
    expect(weekly.timestamp).toEqual(expected.timestamp.slice(-weekly.timestamp.length));
    const n = weekly.close.length;
    for (let i = Math.max(0, n - 300); i < n; i++) {
      const j = expected.close.length - n + i;
      expect(weekly.close[i]).toBeCloseTo(expected.close[j], 6);
      expect(weekly.high[i]).toBeCloseTo(expected.high[j], 6);
      expect(weekly.low[i]).toBeCloseTo(expected.low[j], 6);
      expect(weekly.open[i]).toBeCloseTo(expected.open[j], 6);
    }
  });

  it('minute bars take their trade date factor', async () => {
    const raw = await get<Candles>(`/v1/klines?symbol=${SYMBOL}&period=1m&adjust=none&count=300`);
    const fwd = await get<Candles>(`/v1/klines?symbol=${SYMBOL}&period=1m&adjust=backward&count=300`);
    const lastDay = localDate('CN', raw.timestamp[raw.timestamp.length - 1]);
    // Backward factor of today = product of every event up to today.
    const factor = factors.reduce((p, f) => p * f.ex_factor, 1);
    raw.timestamp.forEach((ts, i) => {
      if (localDate('CN', ts) === lastDay) expect(fwd.close[i]).toBeCloseTo(raw.close[i] * factor, 4);
    });
  });
});
