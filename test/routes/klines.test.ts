// GET /v1/klines on the sim adapter at CN_MORNING (Wed 2025-06-18 10:15:30 Shanghai): every
// period, bar labels, count, [start_time, end_time] windows, prev_close continuity.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { aggregate, expectCandles, isLocalMidnight, local, utc8, type CandlesBody, type Region } from '../helpers/candles.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

const PERIODS = ['1m', '5m', '10m', '15m', '30m', '60m', '1d', '1w', '1M', '1Q', '1Y'] as const;
const TODAY = '2025-06-18';

async function klines(query: string, status = 200): Promise<CandlesBody> {
  const res = await app.inject({ url: `/v1/klines?${query}`, headers: { 'x-api-key': KEYS.demo } });
  expect(res.statusCode, `${query}: ${res.body.slice(0, 200)}`).toBe(status);
  expect(res.headers['x-upstream']).toBe('sim');
  const body = res.json() as { data: CandlesBody };
  expect(Object.keys(body)).toEqual(['data']);
  return body.data;
}

const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

/** Session windows in local minutes; bars align to each session's start (docs/contract.md#candle-time-semantics). */
const SESSIONS: Record<Region, [number, number][]> = {
  CN: [[570, 690], [780, 900]],
  HK: [[570, 720], [780, 960]],
  US: [[570, 960]],
};

/** The label of the N-minute bar that holds the 1m bar labelled `ts`. */
function bucketOf(region: Region, ts: number, n: number): number {
  const m = minutesOf(local(region, ts).time);
  const [s, e] = SESSIONS[region].find(([lo, hi]) => m > lo && m <= hi)!;
  const label = Math.min(e, s + Math.ceil((m - s) / n) * n);
  return ts + (label - m) * 60_000;
}

/** Every label an N-minute period can carry in a session day. */
function allLabels(region: Region, n: number): string[] {
  const out: string[] = [];
  for (const [s, e] of SESSIONS[region]) for (let m = s + n; ; m += n) {
    out.push(hhmm(Math.min(m, e)));
    if (m >= e) break;
  }
  return out;
}

describe('every period', () => {
  it.each(PERIODS)('period=%s: 200, equal columns, strictly ascending, count honoured, prev_close chain', async (period) => {
    for (const count of [1, 7]) {
      const c = await klines(`symbol=600519.SH&period=${period}&count=${count}&adjust=none`);
      expectCandles(c, `${period}/${count}`);
      expect(c.timestamp.length).toBe(count);
    }
    // The first bar's prev_close is the close of the bar before it (same period, same adjustment).
    for (const adjust of ['none', 'forward']) {
      const six = await klines(`symbol=600519.SH&period=${period}&count=6&adjust=${adjust}`);
      const five = await klines(`symbol=600519.SH&period=${period}&count=5&adjust=${adjust}`);
      expect(five.timestamp).toEqual(six.timestamp.slice(1));
      expect(five.close).toEqual(six.close.slice(1));
      expect(five.prev_close[0]).toBe(six.close[0]);
    }
  });

  it('count defaults to 100 and period to 1d', async () => {
    const c = await klines('symbol=600519.SH&adjust=none');
    expect(c.timestamp.length).toBe(100);
    const daily = await klines('symbol=600519.SH&period=1d&count=100&adjust=none');
    expect(c).toEqual(daily);
  });

  it('count=10000 returns the whole history when it is shorter (1Y from the 2001 listing)', async () => {
    const c = await klines('symbol=600519.SH&period=1Y&count=10000&adjust=none');
    expectCandles(c);
    expect(local('CN', c.timestamp[0]).date.slice(0, 4)).toBe('2001');
    expect(local('CN', c.timestamp.at(-1)!).date).toBe(TODAY);
    expect(c.timestamp.length).toBe(25);
  });

  it.each(['1d', '1w', '1Y'])('the first bar of the history (%s) has the listing-day previous close (the issue price) as prev_close', async (period) => {
    const c = await klines(`symbol=600519.SH&period=${period}&count=10000&adjust=none`);
    const daily = await klines('symbol=600519.SH&period=1d&count=10000&adjust=none');
    expect(local('CN', c.timestamp[0]).date.slice(0, 7)).toBe(period === '1Y' ? '2001-12' : '2001-08');
    expect(c.prev_close[0]).toBeGreaterThan(0);
    // Every period starts from the same listing-day reference: the adapter's prev_close of day one.
    expect(c.prev_close[0]).toBe(daily.prev_close[0]);
    expect(daily.prev_close[0]).not.toBe(daily.close[0]);
  });
});

describe('bar labels (bars labelled by their end)', () => {
  it('CN 1m: the newest label is 10:16, the partial current bar, and labels run 09:31…11:30, 13:01…15:00', async () => {
    const c = await klines('symbol=600519.SH&period=1m&count=600&adjust=none');
    expect(c.timestamp.at(-1)).toBe(utc8(TODAY, '10:16'));
    const allowed = new Set(allLabels('CN', 1));
    expect(allowed.size).toBe(240);
    for (const ts of c.timestamp) {
      const t = local('CN', ts);
      expect(t.seconds).toBe(0);
      expect(allowed.has(t.time), t.time).toBe(true);
    }
    // A whole earlier day is exactly the 240 labels, lunch break skipped.
    const yesterday = c.timestamp.filter((ts) => local('CN', ts).date === '2025-06-17').map((ts) => local('CN', ts).time);
    expect(yesterday).toEqual(allLabels('CN', 1));
    // Today so far: 09:31 … 10:16.
    const today = c.timestamp.filter((ts) => local('CN', ts).date === TODAY);
    expect(today.length).toBe(46);
  });

  it.each([
    ['5m', 5, '10:20'], ['10m', 10, '10:20'], ['15m', 15, '10:30'], ['30m', 30, '10:30'], ['60m', 60, '10:30'],
  ] as const)('CN %s: newest label %s (partial), labels aligned to session starts', async (period, n, newest) => {
    const c = await klines(`symbol=600519.SH&period=${period}&count=40&adjust=none`);
    expect(local('CN', c.timestamp.at(-1)!).time).toBe(newest);
    expect(c.timestamp.at(-1)).toBe(utc8(TODAY, newest));
    const allowed = new Set(allLabels('CN', n));
    for (const ts of c.timestamp) expect(allowed.has(local('CN', ts).time), local('CN', ts).time).toBe(true);
  });

  it('CN 60m bars are 10:30, 11:30, 14:00, 15:00', () => {
    expect(allLabels('CN', 60)).toEqual(['10:30', '11:30', '14:00', '15:00']);
  });

  it('HK 60m: the morning session ends with a short 12:00 bar', async () => {
    const c = await klines('symbol=00700.HK&period=60m&count=13&adjust=none');
    const yesterday = c.timestamp.filter((ts) => local('HK', ts).date === '2025-06-17').map((ts) => local('HK', ts).time);
    expect(yesterday).toEqual(['10:30', '11:30', '12:00', '14:00', '15:00', '16:00']);
  });

  it('US 1m: labels 09:31…16:00 New York; at CN_MORNING the newest bar is the 16:00 bar of Tue 2025-06-17', async () => {
    const c = await klines('symbol=AAPL.US&period=1m&count=390&adjust=none');
    expectCandles(c);
    expect(c.timestamp.map((ts) => local('US', ts).time)).toEqual(allLabels('US', 1));
    expect(local('US', c.timestamp.at(-1)!)).toMatchObject({ date: '2025-06-17', time: '16:00' });
    expect(c.timestamp.at(-1)).toBe(Date.UTC(2025, 5, 17, 20, 0));
  });

  it.each([['600519.SH', 'CN'], ['00700.HK', 'HK'], ['AAPL.US', 'US']] as const)('%s daily bars at 00:00 exchange-local, trading days only', async (symbol, region) => {
    const c = await klines(`symbol=${symbol}&period=1d&count=300&adjust=none`);
    expectCandles(c);
    for (const ts of c.timestamp) {
      expect(isLocalMidnight(region, ts), `${symbol} ${new Date(ts).toISOString()}`).toBe(true);
      expect(['Sat', 'Sun']).not.toContain(local(region, ts).weekday);
    }
    expect(local(region, c.timestamp.at(-1)!).date).toBe(region === 'US' ? '2025-06-17' : TODAY);
  });

  it('CN daily: today (in session) is the newest bar, stamped 00:00 Shanghai of 2025-06-18', async () => {
    const c = await klines('symbol=600519.SH&period=1d&count=3&adjust=none');
    expect(c.timestamp).toEqual([utc8('2025-06-16'), utc8('2025-06-17'), utc8(TODAY)]);
  });

  it('weekly bars are stamped with the last trading day of the week; the current week with today', async () => {
    const c = await klines('symbol=600519.SH&period=1w&count=3&adjust=none');
    expect(c.timestamp).toEqual([utc8('2025-06-06'), utc8('2025-06-13'), utc8(TODAY)]);
    // 2025-05-30 (Friday) was no holiday, 2025-05-31…06-02 was (Dragon Boat): a week ending on Friday.
    // The Labour Day week 2025-04-28…05-02 traded Mon–Wed only, so it is stamped Wednesday 04-30.
    const long = await klines('symbol=600519.SH&period=1w&count=10&adjust=none');
    expect(long.timestamp).toContain(utc8('2025-04-30'));
  });
});

describe('time windows', () => {
  it('[start_time, end_time] is inclusive and count keeps the newest bars inside it', async () => {
    const start = utc8('2025-03-03');
    const end = utc8('2025-03-31');
    const all = await klines(`symbol=600519.SH&period=1d&count=10000&adjust=none&start_time=${start}&end_time=${end}`);
    expectCandles(all);
    expect(all.timestamp[0]).toBe(start);
    expect(all.timestamp.at(-1)).toBe(end);
    expect(all.timestamp.length).toBe(21);
    const newest = await klines(`symbol=600519.SH&period=1d&count=5&adjust=none&start_time=${start}&end_time=${end}`);
    expect(newest.timestamp).toEqual(all.timestamp.slice(-5));
    expect(newest.close).toEqual(all.close.slice(-5));
    expect(newest.prev_close[0]).toBe(all.close.at(-6));
    // One millisecond inside the bounds drops the bars stamped on them.
    const inner = await klines(`symbol=600519.SH&period=1d&count=10000&adjust=none&start_time=${start + 1}&end_time=${end - 1}`);
    expect(inner.timestamp).toEqual(all.timestamp.slice(1, -1));
  });

  it('only start_time: the newest count bars from start_time up to now', async () => {
    const start = utc8('2025-06-02');
    const c = await klines(`symbol=600519.SH&period=1d&count=100&adjust=none&start_time=${start}`);
    expect(c.timestamp[0]).toBe(utc8('2025-06-03'));
    expect(c.timestamp.at(-1)).toBe(utc8(TODAY));
    const three = await klines(`symbol=600519.SH&period=1d&count=3&adjust=none&start_time=${start}`);
    expect(three.timestamp).toEqual([utc8('2025-06-16'), utc8('2025-06-17'), utc8(TODAY)]);
  });

  it('only end_time: the newest count bars up to end_time', async () => {
    const c = await klines(`symbol=600519.SH&period=1d&count=2&adjust=none&end_time=${utc8('2025-06-15')}`);
    expect(c.timestamp).toEqual([utc8('2025-06-12'), utc8('2025-06-13')]);
  });

  it('1m window: 10:00…10:30 of 2025-06-17 is 31 bars; count=5 keeps 10:26…10:30', async () => {
    const start = utc8('2025-06-17', '10:00');
    const end = utc8('2025-06-17', '10:30');
    const all = await klines(`symbol=600519.SH&period=1m&count=10000&adjust=none&start_time=${start}&end_time=${end}`);
    expect(all.timestamp.length).toBe(31);
    expect(all.timestamp[0]).toBe(start);
    expect(all.timestamp.at(-1)).toBe(end);
    const five = await klines(`symbol=600519.SH&period=1m&count=5&adjust=none&start_time=${start}&end_time=${end}`);
    expect(five.timestamp.map((ts) => local('CN', ts).time)).toEqual(['10:26', '10:27', '10:28', '10:29', '10:30']);
  });

  it('a window with no trading day (a weekend) gives empty columns, not an error', async () => {
    const c = await klines(`symbol=600519.SH&period=1d&adjust=none&start_time=${utc8('2025-06-14')}&end_time=${utc8('2025-06-15', '23:59')}`);
    expect(c).toEqual({ timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [], prev_close: [] });
  });
});

describe('minute periods aggregate the 1m bars', () => {
  it.each([5, 10, 15, 30, 60])('CN %im equals aggregating /v1/klines 1m bars by hand', async (n) => {
    const minute = await klines('symbol=600519.SH&period=1m&count=1000&adjust=none');
    const bars = await klines(`symbol=600519.SH&period=${n}m&count=10&adjust=none`);
    const expected = aggregate(minute, (ts) => String(bucketOf('CN', ts, n)), (key) => Number(key)).slice(-10);
    expect(bars.timestamp).toEqual(expected.map((b) => b.timestamp));
    expect(bars.open).toEqual(expected.map((b) => b.open));
    expect(bars.high).toEqual(expected.map((b) => b.high));
    expect(bars.low).toEqual(expected.map((b) => b.low));
    expect(bars.close).toEqual(expected.map((b) => b.close));
    expect(bars.volume).toEqual(expected.map((b) => b.volume));
    bars.amount.forEach((a, k) => expect(a).toBeCloseTo(expected[k].amount, 1));
  });
});
