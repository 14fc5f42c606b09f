// /v1/klines adjustment and daily-and-longer aggregation, checked against what the other routes
// serve: adjusted prices are recomputed here from raw daily bars and /v1/klines/ex-factors with the
// formulas of docs/contract.md#ex-factors-and-adjustment; 1w/1M/1Q/1Y are recomputed from the adjusted daily bars.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { aggregate, expectCandles, isLocalMidnight, local, type CandlesBody } from '../helpers/candles.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

const ADJUSTS = ['none', 'forward', 'backward', 'forward_additive', 'backward_additive'] as const;
const PRICES = ['open', 'high', 'low', 'close'] as const;

async function getJson(url: string) {
  const res = await app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
  expect(res.statusCode, `${url}: ${res.body.slice(0, 200)}`).toBe(200);
  return res.json();
}
// Whole-history answers are large; each distinct query is fetched once per file.
const memo = new Map<string, Promise<CandlesBody>>();
const klines = (q: string): Promise<CandlesBody> => {
  let hit = memo.get(q);
  if (hit === undefined) {
    hit = getJson(`/v1/klines?${q}`).then((body) => body.data as CandlesBody);
    memo.set(q, hit);
  }
  return hit;
};

describe('every adjust value is accepted', () => {
  it.each(ADJUSTS)('adjust=%s on 1d, 1w, 5m and 1Y', async (adjust) => {
    for (const period of ['1d', '1w', '5m', '1Y']) {
      const c = await klines(`symbol=600519.SH&period=${period}&count=20&adjust=${adjust}`);
      expectCandles(c, `${period} ${adjust}`);
      expect(c.timestamp.length).toBe(20);
    }
  });

  it('adjust defaults to forward', async () => {
    expect(await klines('symbol=600519.SH&count=30')).toEqual(await klines('symbol=600519.SH&count=30&adjust=forward'));
  });

  it('volume and amount are never adjusted', async () => {
    const none = await klines('symbol=600519.SH&count=500&adjust=none');
    for (const adjust of ADJUSTS) {
      const c = await klines(`symbol=600519.SH&count=500&adjust=${adjust}`);
      expect(c.timestamp).toEqual(none.timestamp);
      expect(c.volume).toEqual(none.volume);
      expect(c.amount).toEqual(none.amount);
    }
  });
});

describe('adjusted prices agree with /v1/klines/ex-factors (whole history of 600519.SH)', () => {
  it.each(ADJUSTS.filter((a) => a !== 'none'))('%s', async (adjust) => {
    const raw = await klines('symbol=600519.SH&period=1d&count=10000&adjust=none');
    const events = (await getJson('/v1/klines/ex-factors?symbols=600519.SH')).data['600519.SH'] as { timestamp: number; ex_factor: number }[];
    expect(events.length).toBeGreaterThan(10);
    // Each ex-date is a trading day of the raw history, at 00:00 Shanghai.
    const days = new Set(raw.timestamp);
    for (const e of events) {
      expect(isLocalMidnight('CN', e.timestamp)).toBe(true);
      expect(days.has(e.timestamp), local('CN', e.timestamp).date).toBe(true);
      expect(e.ex_factor).toBeGreaterThan(1);
    }
    const prevClose = events.map((e) => raw.close[raw.timestamp.indexOf(e.timestamp) - 1]);
    const d = events.map((e, i) => prevClose[i] * (1 - 1 / e.ex_factor));
    const expectedPrice = (p: number, t: number): number => {
      let product = 1;
      let sum = 0;
      events.forEach((e, i) => {
        const after = e.timestamp > t;
        if (adjust === 'forward' && after) product *= e.ex_factor;
        if (adjust === 'backward' && !after) product *= e.ex_factor;
        if (adjust === 'forward_additive' && after) sum -= d[i];
        if (adjust === 'backward_additive' && !after) sum += d[i];
      });
      if (adjust === 'forward') return p / product;
      if (adjust === 'backward') return p * product;
      return p + sum;
    };
    const adjusted = await klines(`symbol=600519.SH&period=1d&count=10000&adjust=${adjust}`);
    expectCandles(adjusted);
    expect(adjusted.timestamp).toEqual(raw.timestamp);
    const mismatches: string[] = [];
    for (let k = 0; k < raw.timestamp.length && mismatches.length < 10; k++) {
      for (const column of PRICES) {
        const want = expectedPrice(raw[column][k], raw.timestamp[k]);
        if (!(Math.abs(adjusted[column][k] - want) < 2e-6 * Math.max(1, Math.abs(want)))) {
          mismatches.push(`${column} ${local('CN', raw.timestamp[k]).date}: ${adjusted[column][k]} ≠ ${want}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
    // forward keeps the latest prices as traded, backward the first ones.
    if (adjust === 'forward' || adjust === 'forward_additive') expect(adjusted.close.at(-1)).toBe(raw.close.at(-1));
    if (adjust === 'backward' || adjust === 'backward_additive') expect(adjusted.close[0]).toBe(raw.close[0]);
  });
});

/** Grouping keys of a Shanghai trade date, per period. */
function periodKey(period: '1w' | '1M' | '1Q' | '1Y', ts: number): string {
  const date = local('CN', ts).date;
  const [y, m, day] = date.split('-').map(Number);
  if (period === '1M') return `${y}-${m}`;
  if (period === '1Q') return `${y}-Q${Math.ceil(m / 3)}`;
  if (period === '1Y') return `${y}`;
  const utc = Date.UTC(y, m - 1, day);
  const monday = utc - ((new Date(utc).getUTCDay() + 6) % 7) * 86_400_000;
  return new Date(monday).toISOString().slice(0, 10);
}

describe('1w/1M/1Q/1Y aggregate the adjusted daily bars, stamped with their last trading day', () => {
  const cases = [['1w', 30], ['1M', 24], ['1Q', 12], ['1Y', 8]] as const;
  for (const adjust of ['none', 'forward', 'backward_additive'] as const) {
    it.each(cases)(`%s (count %i, adjust=${adjust})`, async (period, count) => {
      const daily = await klines(`symbol=600519.SH&period=1d&count=10000&adjust=${adjust}`);
      const bars = await klines(`symbol=600519.SH&period=${period}&count=${count}&adjust=${adjust}`);
      expectCandles(bars);
      expect(bars.timestamp.length).toBe(count);
      const expected = aggregate(daily, (ts) => periodKey(period, ts), (_key, lastTs) => lastTs);
      const tail = expected.slice(-count);
      expect(bars.timestamp).toEqual(tail.map((b) => b.timestamp));
      expect(bars.volume).toEqual(tail.map((b) => b.volume));
      for (const column of PRICES) {
        bars[column].forEach((v, k) => expect(v, `${column} ${k}`).toBeCloseTo(tail[k][column], 6));
      }
      bars.amount.forEach((v, k) => expect(v).toBeCloseTo(tail[k].amount, 0));
      // prev_close of the first bar is the previous period's close.
      expect(bars.prev_close[0]).toBeCloseTo(expected.at(-count - 1)!.close, 6);
      // Stamps are 00:00 Shanghai of a trading day present in the daily series.
      for (const ts of bars.timestamp) expect(daily.timestamp).toContain(ts);
    });
  }
});
