// Issue 26, item 5: ranges that say when they are cut. A candle answer with older bars before its
// first one inside [start_time, end_time] (without start_time: anywhere in the history) carries
// X-Next-End-Time and Link rel="next"; following them walks the range with no bar lost or repeated,
// on the sim and on the candle store, in every period's way of stamping bars and in every format.
// Batches list their cut symbols in X-Truncated-Symbols.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { tableFromIPC } from 'apache-arrow';
import { buildTestApp, KEYS } from '../helpers/app.ts';

type Candles = Record<string, number[]>;
const COLUMNS = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prev_close'];

/** 00:00 Asia/Shanghai of a date. */
const cn = (date: string) => Date.parse(`${date}T00:00:00+08:00`);

const dir = mkdtempSync(join(tmpdir(), 'mdqs-paging-'));
let sim: FastifyInstance;
let stored: FastifyInstance;
beforeAll(async () => {
  ({ app: sim } = await buildTestApp());
  ({ app: stored } = await buildTestApp({ configure: (c) => { c.history = { ...c.history, enabled: true, sqlitePath: join(dir, 'history.sqlite') }; } }));
});
afterAll(async () => {
  await sim.close();
  await stored.close();
  rmSync(dir, { recursive: true, force: true });
});

async function get(app: FastifyInstance, url: string) {
  const res = await app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
  expect(res.statusCode, `${url}: ${res.body.slice(0, 200)}`).toBe(200);
  return res;
}

/** Follows Link rel="next" from `url`; the pages' bars joined oldest first, and the pages' sizes. */
async function walk(app: FastifyInstance, url: string): Promise<{ bars: Candles; pages: number[]; cursors: number[] }> {
  const pages: Candles[] = [];
  const cursors: number[] = [];
  let next: string | undefined = url;
  while (next !== undefined) {
    const res = await get(app, next);
    const data = res.json().data as Candles;
    pages.unshift(data);
    const cursor = res.headers['x-next-end-time'] as string | undefined;
    const link = res.headers.link as string | undefined;
    if (cursor === undefined) {
      expect(link).toBeUndefined();
      next = undefined;
    } else {
      const match = /^<([^>]+)>; rel="next"$/.exec(link ?? '');
      expect(match, link).not.toBeNull();
      const target = new URL(match![1], 'http://x');
      expect(target.searchParams.get('end_time')).toBe(cursor);
      // The cursor is the newest bar of the next page, strictly older than this page's first.
      expect(Number(cursor)).toBeLessThan(data.timestamp[0]);
      cursors.push(Number(cursor));
      next = target.pathname + target.search;
      expect(pages.length).toBeLessThan(500);
    }
  }
  const bars: Candles = {};
  for (const column of COLUMNS) bars[column] = pages.flatMap((p) => p[column]);
  return { bars, pages: pages.map((p) => p.timestamp.length).reverse(), cursors };
}

function expectNoneLostOrRepeated(walked: Candles, whole: Candles): void {
  const ts = walked.timestamp;
  for (let i = 1; i < ts.length; i++) expect(ts[i], `bar ${i}`).toBeGreaterThan(ts[i - 1]);
  expect(walked).toEqual(whole);
}

describe('the next-page cursor walks a range with no bar lost or repeated', () => {
  const RANGE = `start_time=${cn('2019-01-01')}&end_time=${cn('2025-01-01')}`;

  it.each([['the sim', () => sim], ['the candle store (cold, then warm)', () => stored]])('six years of daily bars in pages of 100, on %s', async (_name, app) => {
    for (let pass = 0; pass < 2; pass++) {
      const { bars, pages } = await walk(app(), `/v1/klines?symbol=600519.SH&period=1d&count=100&${RANGE}`);
      const wholeRes = await get(app(), `/v1/klines?symbol=600519.SH&period=1d&count=10000&${RANGE}`);
      // The whole range fits one answer: nothing is cut, so no cursor.
      expect(wholeRes.headers['x-next-end-time']).toBeUndefined();
      const whole = wholeRes.json().data as Candles;
      expect(whole.timestamp.length).toBeGreaterThan(1400);
      expect(whole.timestamp[0]).toBeGreaterThanOrEqual(cn('2019-01-01'));
      expect(pages.slice(0, -1).every((n) => n === 100)).toBe(true);
      expect(pages.at(-1)).toBe(whole.timestamp.length - 100 * (pages.length - 1));
      expectNoneLostOrRepeated(bars, whole);
    }
  });

  it.each([
    ['1w', 10, `start_time=${cn('2023-01-01')}&end_time=${cn('2025-01-01')}`],
    ['1M', 7, RANGE],
    ['1Q', 5, RANGE],
    ['60m', 50, `start_time=${cn('2025-04-01')}&end_time=${cn('2025-06-01')}`],
    ['15m', 50, `start_time=${cn('2025-05-19')}&end_time=${cn('2025-06-01')}`],
    ['1m', 500, `start_time=${cn('2025-05-26')}&end_time=${cn('2025-06-01')}`],
  ])('%s in pages of %i: weekly and longer bars are whole on every page (the cursor is a bar stamp, never first − 1)', async (period, count, range) => {
    for (const app of [sim, stored]) {
      const { bars, pages } = await walk(app, `/v1/klines?symbol=600519.SH&period=${period}&count=${count}&adjust=forward&${range}`);
      expect(pages.length).toBeGreaterThan(2);
      const whole = (await get(app, `/v1/klines?symbol=600519.SH&period=${period}&count=10000&${range}`)).json().data as Candles;
      expectNoneLostOrRepeated(bars, whole);
    }
  });

  it('without start_time the walk reaches the first bar of the history, and stops there', async () => {
    for (const [period, count] of [['1d', 1500], ['1Y', 4]] as const) {
      const { bars } = await walk(sim, `/v1/klines?symbol=600519.SH&period=${period}&count=${count}&end_time=${cn('2025-01-01')}`);
      const whole = (await get(sim, `/v1/klines?symbol=600519.SH&period=${period}&count=10000&end_time=${cn('2025-01-01')}`)).json().data as Candles;
      // 600519.SH listed on 2001-08-27: the whole history.
      expect(new Date(whole.timestamp[0]).toISOString().slice(0, 4)).toBe('2001');
      expectNoneLostOrRepeated(bars, whole);
    }
  });

  it('an answer that reaches the start of the range or of the history has no cursor', async () => {
    const all = await get(sim, `/v1/klines?symbol=600519.SH&count=10&start_time=${cn('2024-12-20')}&end_time=${cn('2025-01-01')}`);
    expect((all.json().data as Candles).timestamp.length).toBeLessThan(10);
    expect(all.headers['x-next-end-time']).toBeUndefined();
    const exact = await get(sim, `/v1/klines?symbol=600519.SH&count=8&start_time=${cn('2024-12-20')}&end_time=${cn('2025-01-01')}`);
    expect((exact.json().data as Candles).timestamp).toHaveLength(8);
    expect(exact.headers['x-next-end-time']).toBeUndefined();
    const cut = await get(sim, `/v1/klines?symbol=600519.SH&count=7&start_time=${cn('2024-12-20')}&end_time=${cn('2025-01-01')}`);
    expect(cut.headers['x-next-end-time']).toBe(String(cn('2024-12-20')));
  });

  it('every format carries the same cursor, and the Link keeps the format', async () => {
    const url = `/v1/klines?symbol=00700.HK&period=1w&count=20&${RANGE}`;
    const json = await get(sim, url);
    const cursor = json.headers['x-next-end-time'];
    expect(cursor).toMatch(/^\d+$/);
    expect(json.headers.link).not.toContain('format=');
    for (const format of ['csv', 'arrow', 'parquet']) {
      const res = await get(sim, `${url}&format=${format}`);
      expect(res.headers['x-next-end-time']).toBe(cursor);
      expect(res.headers.link).toContain(`end_time=${cursor}`);
      expect(res.headers.link).toContain(`format=${format}`);
    }
    const arrow = await get(sim, `${url}&format=arrow`);
    expect(tableFromIPC(arrow.rawPayload).numRows).toBe(20);
    // The Link never carries the caller's api_key (a cached answer is shared by every key).
    const keyed = await sim.inject({ url: `${url}&api_key=${KEYS.demo}&adjust=backward` });
    expect(keyed.statusCode).toBe(200);
    expect(keyed.headers.link).not.toContain('api_key');
  });
});

describe('batches list the symbols that were cut', () => {
  const YEAR = `start_time=${cn('2024-01-01')}&end_time=${cn('2024-12-31')}`;
  const batch = (count: number, more = '') => get(sim, `/v1/klines/batch?symbols=600519.SH,AAPL.US,NOPE.US&period=1d&count=${count}&${YEAR}${more}`);

  it('X-Truncated-Symbols names exactly the symbols with older bars in the range, in request order, in every format', async () => {
    // 2024 has fewer trading days in Shanghai (242) than in New York (the range ends before the
    // last New York bar, stamped 00:00 New York time on 2024-12-31).
    const whole = (await batch(10000)).json().data as Record<string, Candles>;
    const cnBars = whole['600519.SH'].timestamp.length;
    const usBars = whole['AAPL.US'].timestamp.length;
    expect(cnBars).toBe(242);
    expect(usBars).toBeGreaterThan(cnBars);
    expect((await batch(10000)).headers['x-truncated-symbols']).toBeUndefined();
    expect((await batch(usBars)).headers['x-truncated-symbols']).toBeUndefined();
    expect((await batch(cnBars)).headers['x-truncated-symbols']).toBe('AAPL.US');
    expect((await batch(cnBars - 1)).headers['x-truncated-symbols']).toBe('600519.SH,AAPL.US');
    for (const format of ['csv', 'arrow', 'parquet']) {
      const res = await batch(cnBars + 1, `&format=${format}`);
      expect(res.headers['x-truncated-symbols']).toBe('AAPL.US');
      expect(res.headers['x-missing-symbols']).toBe('NOPE.US');
    }
  });
});

describe('intraday answers cut by count', () => {
  it('give the next, older page of the session: a /v1/klines request whose bars are the session bars just before', async () => {
    // 10:15:30 in Shanghai: 45 one-minute bars of the session so far.
    for (const period of ['1m', '5m']) {
      const full = (await get(sim, `/v1/klines/intraday?symbol=600519.SH&period=${period}`)).json().data as Candles;
      expect(full.timestamp.length).toBeGreaterThan(6);
      const cut = await get(sim, `/v1/klines/intraday?symbol=600519.SH&period=${period}&count=3`);
      const cursor = Number(cut.headers['x-next-end-time']);
      expect(cursor).toBe(full.timestamp.at(-4));
      const link = /^<([^>]+)>; rel="next"$/.exec(cut.headers.link as string)![1];
      expect(link).toContain('/v1/klines?');
      expect(link).toContain('adjust=none');
      const { bars } = await walk(sim, link);
      // The session's bars before the last three, every one of them, as the intraday route has them.
      const expected: Candles = {};
      for (const column of ['timestamp', 'open', 'high', 'low', 'close', 'volume']) expected[column] = full[column].slice(0, -3);
      expect(Object.fromEntries(Object.keys(expected).map((c) => [c, bars[c]]))).toEqual(expected);
    }
    const uncut = await get(sim, '/v1/klines/intraday?symbol=600519.SH');
    expect(uncut.headers['x-next-end-time']).toBeUndefined();
  });

  it('intraday batches list the cut symbols', async () => {
    expect((await get(sim, '/v1/klines/intraday/batch?symbols=600519.SH,00700.HK&count=5')).headers['x-truncated-symbols']).toBe('600519.SH,00700.HK');
    expect((await get(sim, '/v1/klines/intraday/batch?symbols=600519.SH,00700.HK')).headers['x-truncated-symbols']).toBeUndefined();
  });
});
