// GET /v1/coverage: the store's holdings against the trading calendar. A SQLite store filled
// through the store tier from the sim vendor, one day of it withheld by the vendor (a suspension:
// covered, no bar); the answer counts expected, stored, empty and missing sessions, names the
// holidays (CN Mid-Autumn and National Day 2026) the calendar does not expect, and moves its end
// with the clock: in session today is not expected, after the close it is, and a night and a
// weekend later it is still the newest.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { Candles } from '../../src/domain.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { openHistoryStore, type HistoryStore } from '../../src/store/index.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-coverage-'));
const cn = (iso: string) => Date.parse(`${iso}+08:00`);
let clock = cn('2026-10-16T10:30:00');
const now = () => clock;
let store: HistoryStore;
let app: FastifyInstance;

/** Bars of `c` except the one labelled `day` (00:00 CN). */
function without(c: Candles, day: number): Candles {
  const keep = c.timestamp.map((t) => t !== day);
  const pick = <T>(xs: T[]) => xs.filter((_, i) => keep[i]);
  return {
    timestamp: pick(c.timestamp), open: pick(c.open), high: pick(c.high), low: pick(c.low), close: pick(c.close),
    volume: pick(c.volume), amount: pick(c.amount), ...(c.prev_close === undefined ? {} : { prev_close: pick(c.prev_close) }),
  };
}

beforeAll(async () => {
  store = await openHistoryStore({
    backend: 'sqlite', sqlitePath: join(dir, 'history.sqlite'), now,
    revision: { dailyBars: 0, minuteBars: 0 }, retentionDays: { '1m': 0, '1d': 0 },
  });
  const sim = createSimAdapter({}, { now: () => cn('2026-10-10T12:00:00') });
  const suspended = cn('2026-09-30T00:00:00');
  const bars = await store.candles('sim', { symbol: parseSymbol('600519.SH')!, period: '1d', start: cn('2026-09-28T00:00:00'), end: cn('2026-10-09T23:59:59') },
    async (q) => {
      const c = await sim.getCandles!(q);
      return c === undefined ? undefined : without(c, suspended);
    });
  expect(bars?.timestamp).toEqual(['2026-09-28', '2026-09-29', '2026-10-08', '2026-10-09'].map((d) => cn(`${d}T00:00:00`)));
  ({ app } = await buildTestApp({ now, history: store, adapters: new Map([['sim', createSimAdapter({}, { now })]]) }));
});

afterAll(async () => {
  await app.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = (url: string, key: string = KEYS.demo) => app.inject({ url, headers: { 'x-api-key': key } });
const RANGE = '&start_date=2026-09-21&end_date=2026-10-16';

describe('GET /v1/coverage', () => {
  it('counts expected, stored, empty and missing sessions; holidays are the calendar\'s, never missing', async () => {
    clock = cn('2026-10-16T10:30:00');
    const res = await get(`/v1/coverage?symbols=600519.SH,000001.SZ&period=1d${RANGE}`);
    expect(res.statusCode).toBe(200);
    const stored = res.json().data['600519.SH'];
    expect(stored).toEqual({
      adapter: 'sim',
      first: cn('2026-09-28T00:00:00'),
      last: cn('2026-10-09T00:00:00'),
      start_date: '2026-09-21',
      // In session on the 16th: its bar has not closed, so it is not expected yet.
      end_date: '2026-10-15',
      expected: 13,
      stored: 4,
      empty: 1,
      missing_count: 8,
      missing: ['2026-09-21', '2026-09-22', '2026-09-23', '2026-09-24', '2026-10-12', '2026-10-13', '2026-10-14', '2026-10-15'],
      holidays: [
        { date: '2026-09-25', name: expect.stringMatching(/Mid-Autumn/) },
        ...['2026-10-01', '2026-10-02', '2026-10-05', '2026-10-06', '2026-10-07'].map((date) => ({ date, name: 'National Day' })),
      ],
    });
    expect(stored.expected).toBe(stored.stored + stored.empty + stored.missing_count);
    // Nothing stored: every expected session is missing.
    const none = res.json().data['000001.SZ'];
    expect(none).toMatchObject({ adapter: null, first: null, last: null, expected: 13, stored: 0, empty: 0, missing_count: 13 });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('without start_date counts from the first stored bar; the end follows the clock across the close, the night and the weekend', async () => {
    clock = cn('2026-10-16T10:30:00');
    const inSession = (await get('/v1/coverage?symbols=600519.SH&period=1d')).json().data['600519.SH'];
    expect(inSession).toMatchObject({ start_date: '2026-09-28', end_date: '2026-10-15', expected: 9, stored: 4, empty: 1, missing_count: 4 });
    clock = cn('2026-10-16T15:30:00');
    const closed = (await get('/v1/coverage?symbols=600519.SH&period=1d')).json().data['600519.SH'];
    expect(closed).toMatchObject({ end_date: '2026-10-16', expected: 10, missing_count: 5 });
    expect(closed.missing.at(-1)).toBe('2026-10-16');
    // Past midnight and over the weekend, before Monday's open: Friday is still the newest session.
    for (const at of ['2026-10-17T00:30:00', '2026-10-19T09:00:00']) {
      clock = cn(at);
      expect((await get('/v1/coverage?symbols=600519.SH&period=1d')).json().data['600519.SH']).toMatchObject({ end_date: '2026-10-16', expected: 10 });
    }
    // An end_date past the newest closed session is cut to it.
    clock = cn('2026-10-16T10:30:00');
    expect((await get('/v1/coverage?symbols=600519.SH&period=1d&end_date=2026-12-31')).json().data['600519.SH'].end_date).toBe('2026-10-15');
  });

  it('caps the missing list and keeps the count', async () => {
    clock = cn('2026-10-16T15:30:00');
    const body = (await get('/v1/coverage?symbols=000001.SZ&period=1d&start_date=2025-01-01')).json().data['000001.SZ'];
    expect(body.missing).toHaveLength(100);
    expect(body.missing[0]).toBe('2025-01-02');
    expect(body.missing_count).toBeGreaterThan(200);
    expect(body.missing_count).toBe(body.expected);
  });

  it('1m counts a session stored when its minute bars are', async () => {
    clock = cn('2026-10-16T15:30:00');
    const symbol = parseSymbol('600000.SH')!;
    const sim = createSimAdapter({}, { now });
    await store.candles('sim', { symbol, period: '1m', start: cn('2026-10-15T00:00:00'), end: cn('2026-10-15T23:59:59') }, (q) => sim.getCandles!(q));
    const body = (await get('/v1/coverage?symbols=600000.SH&period=1m&start_date=2026-10-14')).json().data['600000.SH'];
    expect(body).toMatchObject({ adapter: 'sim', expected: 3, stored: 1, empty: 0, missing: ['2026-10-14', '2026-10-16'] });
    expect(body.first).toBe(cn('2026-10-15T09:31:00'));
    expect(body.last).toBe(cn('2026-10-15T15:00:00'));
  });

  it('needs the period\'s feature (403) and refuses bad input with the documented errors', async () => {
    const minute = await get('/v1/coverage?symbols=600519.SH&period=1m', KEYS.cnDaily);
    expect(minute.statusCode).toBe(403);
    expect(minute.json().error).toBe('NO_KLINES_MINUTE_PERMISSION');
    expect((await get('/v1/coverage?symbols=600519.SH&period=1d', KEYS.cnDaily)).statusCode).toBe(200);
    const reversed = await get('/v1/coverage?symbols=600519.SH&period=1d&start_date=2026-10-10&end_date=2026-10-01');
    expect(reversed.statusCode).toBe(400);
    expect(reversed.json().error).toBe('INVALID_TIME_RANGE');
    for (const url of ['/v1/coverage?symbols=600519.SH&period=1d&start_date=2026-13-45', '/v1/coverage?symbols=600519.SH&period=5m', '/v1/coverage?symbols=600519.SH', '/v1/coverage?symbols=nope&period=1d']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error, url).toMatch(/^INVALID_|^VALIDATION/);
    }
    const tooMany = await get(`/v1/coverage?symbols=600519.SH,000001.SZ,600000.SH,000002.SZ&period=1d`, KEYS.cnDaily);
    expect(tooMany.json().error).toBe('TOO_MANY_SYMBOLS');
  });

  it('is 404 on a server that keeps no history', async () => {
    const { app: plain } = await buildTestApp({ now });
    const res = await plain.inject({ url: '/v1/coverage?symbols=600519.SH&period=1d', headers: { 'x-api-key': KEYS.demo } });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBe('NOT_FOUND');
    await plain.close();
  });
});
