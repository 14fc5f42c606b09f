// GET /v1/klines/intraday and /v1/klines/intraday/batch: the latest session's minute bars.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import { aggregate, expectCandles, local, utc8, type CandlesBody } from '../helpers/candles.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

const TODAY = '2025-06-18';

async function getJson(target: FastifyInstance, url: string) {
  const res = await target.inject({ url, headers: { 'x-api-key': KEYS.demo } });
  expect(res.statusCode, `${url}: ${res.body.slice(0, 200)}`).toBe(200);
  expect(res.headers['x-upstream']).toBe('sim');
  return { body: res.json(), headers: res.headers };
}
const intraday = async (q: string, target = app): Promise<CandlesBody> => (await getJson(target, `/v1/klines/intraday?${q}`)).body.data;

/** CN N-minute bucket label (minutes of day) for a 1m label, aligned to the session start. */
function cnBucket(ts: number, n: number): number {
  const t = local('CN', ts).time;
  const m = Number(t.slice(0, 2)) * 60 + Number(t.slice(3));
  const [s, e] = m <= 690 ? [570, 690] : [780, 900];
  return ts + (Math.min(e, s + Math.ceil((m - s) / n) * n) - m) * 60_000;
}

describe('GET /v1/klines/intraday', () => {
  it('period defaults to 1m; at CN_MORNING labels run 09:31 … 10:16: 46 bars, the last one partial', async () => {
    const c = await intraday('symbol=600519.SH');
    expectCandles(c);
    expect(c.timestamp.length).toBe(46);
    expect(c.timestamp[0]).toBe(utc8(TODAY, '09:31'));
    expect(c.timestamp.at(-1)).toBe(utc8(TODAY, '10:16'));
    c.timestamp.forEach((ts, k) => expect(ts).toBe(utc8(TODAY, '09:31') + k * 60_000));
    expect(await intraday('symbol=600519.SH&period=1m')).toEqual(c);
  });

  it("the first bar's prev_close is yesterday's daily close", async () => {
    const c = await intraday('symbol=600519.SH');
    const daily = (await getJson(app, '/v1/klines?symbol=600519.SH&period=1d&count=2&adjust=none')).body.data as CandlesBody;
    expect(daily.timestamp[0]).toBe(utc8('2025-06-17'));
    expect(c.prev_close[0]).toBe(daily.close[0]);
  });

  it('count keeps the newest bars', async () => {
    const all = await intraday('symbol=600519.SH');
    const three = await intraday('symbol=600519.SH&count=3');
    expect(three.timestamp).toEqual(all.timestamp.slice(-3));
    expect(three.close).toEqual(all.close.slice(-3));
    expect(three.prev_close).toEqual(all.prev_close.slice(-3));
    // count above the bars available returns them all.
    expect(await intraday('symbol=600519.SH&count=10000')).toEqual(all);
  });

  it.each([5, 10, 15, 30, 60])('%im equals aggregating the 1m bars by hand', async (n) => {
    const minute = await intraday('symbol=600519.SH&period=1m');
    const bars = await intraday(`symbol=600519.SH&period=${n}m`);
    expectCandles(bars);
    const expected = aggregate(minute, (ts) => String(cnBucket(ts, n)), (key) => Number(key));
    expect(bars.timestamp).toEqual(expected.map((b) => b.timestamp));
    expect(bars.open).toEqual(expected.map((b) => b.open));
    expect(bars.high).toEqual(expected.map((b) => b.high));
    expect(bars.low).toEqual(expected.map((b) => b.low));
    expect(bars.close).toEqual(expected.map((b) => b.close));
    expect(bars.volume).toEqual(expected.map((b) => b.volume));
    bars.amount.forEach((a, k) => expect(a).toBeCloseTo(expected[k].amount, 1));
    expect(bars.prev_close[0]).toBe(minute.prev_close[0]);
  });

  it('5m at CN_MORNING: 09:35 … 10:20 (10 bars, the last one partial)', async () => {
    const bars = await intraday('symbol=600519.SH&period=5m');
    expect(bars.timestamp.map((ts) => local('CN', ts).time)).toEqual(
      ['09:35', '09:40', '09:45', '09:50', '09:55', '10:00', '10:05', '10:10', '10:15', '10:20']);
  });

  it('start_time/end_time are ignored', async () => {
    const plain = await intraday('symbol=600519.SH');
    expect(await intraday(`symbol=600519.SH&start_time=${utc8(TODAY, '10:00')}&end_time=${utc8(TODAY, '10:05')}`)).toEqual(plain);
  });

  it('after the close: a whole day of 240 CN bars, 09:31 … 11:30 then 13:01 … 15:00', async () => {
    const { app: evening } = await buildTestApp({ now: () => utc8(TODAY, '16:00') });
    try {
      const c = await intraday('symbol=600519.SH', evening);
      expect(c.timestamp.length).toBe(240);
      const times = c.timestamp.map((ts) => local('CN', ts).time);
      expect(times[0]).toBe('09:31');
      expect(times[119]).toBe('11:30');
      expect(times[120]).toBe('13:01');
      expect(times[239]).toBe('15:00');
      const hk60 = await intraday('symbol=00700.HK&period=60m', evening);
      expect(hk60.timestamp.map((ts) => local('HK', ts).time)).toEqual(['10:30', '11:30', '12:00', '14:00', '15:00', '16:00']);
    } finally {
      await evening.close();
    }
  });

  it('before the open (and on a closed day) the latest session is served', async () => {
    const { app: early } = await buildTestApp({ now: () => utc8('2025-06-21', '12:00') }); // Saturday
    try {
      const c = await intraday('symbol=600519.SH', early);
      expect(c.timestamp.length).toBe(240);
      expect(local('CN', c.timestamp[0]).date).toBe('2025-06-20');
    } finally {
      await early.close();
    }
  });

  it('US at CN_MORNING: the whole New York session of 2025-06-17, 390 bars', async () => {
    const c = await intraday('symbol=AAPL.US');
    expectCandles(c);
    expect(c.timestamp.length).toBe(390);
    expect(local('US', c.timestamp[0])).toMatchObject({ date: '2025-06-17', time: '09:31' });
    expect(local('US', c.timestamp.at(-1)!)).toMatchObject({ date: '2025-06-17', time: '16:00' });
  });
});

describe('GET /v1/klines/intraday/batch', () => {
  it('maps normalised symbols to the single-symbol answer; unknown ones in X-Missing-Symbols', async () => {
    const { body, headers } = await getJson(app, '/v1/klines/intraday/batch?symbols=700.hk,600519.SH,999999.SH,00700.HK&period=5m&count=3');
    expect(Object.keys(body.data)).toEqual(['00700.HK', '600519.SH']);
    expect(headers['x-missing-symbols']).toBe('999999.SH');
    expect(body.data['00700.HK']).toEqual(await intraday('symbol=00700.HK&period=5m&count=3'));
    expect(body.data['600519.SH']).toEqual(await intraday('symbol=600519.SH&period=5m&count=3'));
    for (const c of Object.values(body.data)) expect((c as CandlesBody).timestamp.length).toBe(3);
  });

  it('README example: period defaults to 1m', async () => {
    const { body } = await getJson(app, '/v1/klines/intraday/batch?symbols=600519.SH,00700.HK&count=3');
    expect(body.data['600519.SH'].timestamp).toEqual([utc8(TODAY, '10:14'), utc8(TODAY, '10:15'), utc8(TODAY, '10:16')]);
    expect(Math.max(...body.data['00700.HK'].timestamp)).toBeLessThanOrEqual(CN_MORNING + 60_000);
  });
});
