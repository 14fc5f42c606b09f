// The explorer's older-history pager (public/explorer/history.js) and its XD markers
// (public/explorer/markers.js), run in Node: the same modules the page runs.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ES module without types (the page's own file)
import { History, barsToCover, monthsBefore, nextEndTimeOf, olderPageQuery, olderPart } from '../../public/explorer/history.js';
// @ts-expect-error plain ES module without types (the page's own file)
import { periodStartOf } from '../../public/explorer/format.js';
// @ts-expect-error plain ES module without types (the page's own file)
import { exDividendMarkers, markerText } from '../../public/explorer/markers.js';

type Columns = Record<string, number[]>;
const DAY = 86_400_000;

/** A daily history of `n` bars ending at `last`, one bar a day (close = index, so bars are told apart). */
function series(n: number, last: number): Columns {
  const out: Columns = { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [], prev_close: [] };
  for (let i = 0; i < n; i += 1) {
    out.timestamp.push(last - (n - 1 - i) * DAY);
    for (const c of ['open', 'high', 'low', 'close', 'amount', 'prev_close']) out[c].push(i);
    out.volume.push(100 + i);
  }
  return out;
}

/** The newest `count` bars with timestamp <= end_time: what GET /v1/klines answers. */
function answer(all: Columns, query: URLSearchParams): Columns {
  const end = Number(query.get('end_time'));
  const count = Number(query.get('count'));
  const stop = all.timestamp.findIndex((ts) => ts > end);
  const to = stop < 0 ? all.timestamp.length : stop;
  const from = Math.max(0, to - count);
  return Object.fromEntries(Object.entries(all).map(([k, v]) => [k, v.slice(from, to)]));
}

const headers = (cursor?: number) => new Headers(cursor === undefined ? {} : { 'x-next-end-time': String(cursor) });
const params = { symbol: '600519.SH', period: '1d', adjust: 'forward' };
const LAST = Date.UTC(2025, 5, 17, 16);

describe('the older-history pager', () => {
  it('without a cursor asks end_time = first bar − 1 with the same count, joins pages without loss or repeat, and stops at the first empty answer', async () => {
    const all = series(1050, LAST);
    const queries: URLSearchParams[] = [];
    const first = answer(all, new URLSearchParams({ end_time: String(LAST), count: '300' }));
    const history = new History(params, { data: first, headers: headers() }, async (query: URLSearchParams) => {
      queries.push(query);
      return { data: answer(all, query), headers: headers() };
    });
    expect(history.count).toBe(300);
    const added: number[] = [];
    while (!history.exhausted) added.push((await history.older(400)).timestamp.length);
    expect(added).toEqual([400, 350, 0]);
    expect(queries.map((q) => Object.fromEntries(q))).toEqual([
      { ...params, count: '400', end_time: String(all.timestamp[750] - 1) },
      { ...params, count: '400', end_time: String(all.timestamp[350] - 1) },
      { ...params, count: '400', end_time: String(all.timestamp[0] - 1) },
    ]);
    expect(history.data).toEqual(all);
    // Exhausted: no more requests.
    await history.older(400);
    expect(queries.length).toBe(3);
  });

  it('follows X-Next-End-Time when an answer has it, and falls back to first − 1 when one does not', async () => {
    const all = series(600, LAST);
    const queries: URLSearchParams[] = [];
    // The server's cursor: the end of the next page, deliberately not first − 1 (a 2-day gap).
    const cursorOf = (page: Columns) => (page.timestamp.length > 0 ? page.timestamp[0] - 2 * DAY : undefined);
    const first = answer(all, new URLSearchParams({ end_time: String(LAST), count: '200' }));
    let pages = 0;
    const history = new History(params, { data: first, headers: headers(cursorOf(first)) }, async (query: URLSearchParams) => {
      queries.push(query);
      const data = answer(all, query);
      pages += 1;
      return { data, headers: headers(pages === 1 ? cursorOf(data) : undefined) };
    });
    expect(history.nextEndTime).toBe(all.timestamp[400] - 2 * DAY);
    await history.older(200);
    await history.older(200);
    expect(queries[0].get('end_time')).toBe(String(all.timestamp[400] - 2 * DAY));
    // Page one (bars 199..398 of the series: the cursor skipped bar 399) carried a cursor; page two did not.
    expect(queries[1].get('end_time')).toBe(String(all.timestamp[199] - 2 * DAY));
    await history.older(200);
    expect(queries[2].get('end_time')).toBe(String(history.firstTimestamp - 1));
  });

  it('trims a page that overlaps what is loaded, and ends when a page has nothing older', async () => {
    const all = series(50, LAST);
    const first = answer(all, new URLSearchParams({ end_time: String(LAST), count: '20' }));
    // A server that ignores end_time answers the same newest bars again.
    const history = new History(params, { data: first, headers: headers() }, async () => ({ data: first, headers: headers() }));
    const added = await history.older(20);
    expect(added.timestamp).toEqual([]);
    expect(history.exhausted).toBe(true);
    expect(history.count).toBe(20);
    expect(olderPart(all, all.timestamp[10]).timestamp).toEqual(all.timestamp.slice(0, 10));
  });

  it('for weekly and longer bars ends the older page before the first bar\'s period, and drops a cut-short bar of it', async () => {
    // Weekly bars labelled by Friday; the service answers the first bar's week again, cut short,
    // when asked with end_time inside it (a Thursday bar).
    const friday = Date.UTC(2025, 5, 12, 16); // Friday 2025-06-13 00:00 Shanghai
    const first = { timestamp: [friday, friday + 7 * DAY], close: [10, 11], open: [1, 1], high: [1, 1], low: [1, 1], volume: [1, 1], amount: [1, 1], prev_close: [1, 1] };
    const monday = periodStartOf('1w', 'Asia/Shanghai');
    const queries: URLSearchParams[] = [];
    const history = new History({ ...params, period: '1w' }, { data: first, headers: headers() }, async (query: URLSearchParams) => {
      queries.push(query);
      const thursdayOfFirstWeek = friday - DAY;
      const data = { timestamp: [friday - 7 * DAY, thursdayOfFirstWeek], close: [9, 9.5], open: [1, 1], high: [1, 1], low: [1, 1], volume: [1, 1], amount: [1, 1], prev_close: [1, 1] };
      return { data, headers: headers() };
    }, { periodStart: monday });
    const added = await history.older(10);
    // Monday 2025-06-09 00:00 Shanghai − 1 ms.
    expect(queries[0].get('end_time')).toBe(String(Date.UTC(2025, 5, 8, 16) - 1));
    expect(added.timestamp).toEqual([friday - 7 * DAY]);
    expect(history.data.close).toEqual([9, 10, 11]);
  });

  it('knows where each period starts, in the exchange\'s zone', () => {
    const at = (period: string, zone: string, ms: number) => new Date(periodStartOf(period, zone)(ms)).toISOString();
    const friday = Date.UTC(2025, 5, 12, 16); // 2025-06-13 00:00 in Shanghai
    expect(at('1w', 'Asia/Shanghai', friday)).toBe('2025-06-08T16:00:00.000Z');
    expect(at('1M', 'Asia/Shanghai', friday)).toBe('2025-05-31T16:00:00.000Z');
    expect(at('1Q', 'Asia/Shanghai', friday)).toBe('2025-03-31T16:00:00.000Z');
    expect(at('1Y', 'Asia/Shanghai', friday)).toBe('2024-12-31T16:00:00.000Z');
    // New York across the spring change: the week of Friday 2025-03-14 began Monday 03-10 at 04:00Z (EDT).
    expect(at('1w', 'America/New_York', Date.UTC(2025, 2, 14, 4))).toBe('2025-03-10T04:00:00.000Z');
    expect(at('1M', 'America/New_York', Date.UTC(2025, 2, 14, 4))).toBe('2025-03-01T05:00:00.000Z');
    for (const period of ['1m', '5m', '60m', '1d']) expect(periodStartOf(period, 'Asia/Shanghai')(friday)).toBe(friday);
  });

  it('shares one request between concurrent calls', async () => {
    const all = series(100, LAST);
    let calls = 0;
    const first = answer(all, new URLSearchParams({ end_time: String(LAST), count: '10' }));
    const history = new History(params, { data: first, headers: headers() }, async (query: URLSearchParams) => {
      calls += 1;
      return { data: answer(all, query), headers: headers() };
    });
    const [a, b] = await Promise.all([history.older(10), history.older(10)]);
    expect(a).toBe(b);
    expect(calls).toBe(1);
    expect(history.count).toBe(20);
  });

  it('reads the cursor header strictly, builds queries, and sizes range pages', () => {
    expect(nextEndTimeOf(headers(1700000000000))).toBe(1700000000000);
    for (const bad of ['', ' ', 'soon', '-5', '1.5']) expect(nextEndTimeOf(new Headers({ 'x-next-end-time': bad }))).toBeUndefined();
    expect(nextEndTimeOf(new Headers())).toBeUndefined();
    expect(Object.fromEntries(olderPageQuery(params, { firstTimestamp: 1000, count: 5 }))).toEqual({ ...params, count: '5', end_time: '999' });
    expect(Object.fromEntries(olderPageQuery(params, { firstTimestamp: 1000, nextEndTime: 500, count: 5 }))).toEqual({ ...params, count: '5', end_time: '500' });
    // 31 March back one month is the end of February; 5 years back from 29 Feb 2024 is 28 Feb 2019.
    expect(new Date(monthsBefore(Date.UTC(2025, 2, 31) / 1000, 1) * 1000).toISOString().slice(0, 10)).toBe('2025-02-28');
    expect(new Date(monthsBefore(Date.UTC(2024, 1, 29) / 1000, 60) * 1000).toISOString().slice(0, 10)).toBe('2019-02-28');
    expect(barsToCover('1d', 365 * 86_400)).toBe(Math.ceil(365 * (5 / 7) * 1.1));
    expect(barsToCover('1m', 5 * 365 * 86_400)).toBe(5000);
    expect(barsToCover('1Y', 86_400)).toBe(100);
  });
});

describe('ex-dividend markers', () => {
  const week = 7 * DAY;
  // Weekly bars labelled by their last day.
  const bars = Array.from({ length: 6 }, (_, i) => ({ time: i, timestamp: LAST - (5 - i) * week }));

  it('one marker per bar: events inside one bar merge, with the combined factor and how many', () => {
    const events = [
      { timestamp: bars[1].timestamp - 2 * DAY, ex_factor: 1.01 },
      { timestamp: bars[1].timestamp - DAY, ex_factor: 1.02 },
      { timestamp: bars[1].timestamp, ex_factor: 1.03 },
      { timestamp: bars[4].timestamp - 3 * DAY, ex_factor: 1.0183 },
      { timestamp: bars[0].timestamp - 3 * DAY, ex_factor: 2 }, // before the first bar: not shown
    ];
    const placed = exDividendMarkers(bars, events);
    expect(placed.map((m: { time: number; text: string }) => [m.time, m.text])).toEqual([
      [1, `XD ×${(1.01 * 1.02 * 1.03).toFixed(4)} (3 events)`],
      [4, 'XD ×1.0183'],
    ]);
    expect(bars[1]).toMatchObject({ xd: { count: 3 } });
    expect(bars[2]).not.toHaveProperty('xd');
    expect(markerText(1, 1.5)).toBe('XD ×1.5000');
    // Recomputed on fewer events, a bar loses its old marker.
    expect(exDividendMarkers(bars, [])).toEqual([]);
    expect(bars[1]).not.toHaveProperty('xd');
  });
});
