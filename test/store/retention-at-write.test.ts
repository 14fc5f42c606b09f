// Minute retention applies when bars are written (issue 42.7): a fill older than
// history.retentionDays['1m'] is served whole and not kept, and its range is not recorded as
// covered (the store would otherwise answer it later from bars it does not hold). No retention
// pass runs in these tests after the fills: the store holds nothing older than the retention
// right after them. Both backends; and through the app, paging 60m K-lines back past 60 days.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { CandleQuery } from '../../adapters/types.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { localTimeMs } from '../../src/markets/calendar.ts';
import type { Backend, SeriesKey } from '../../src/store/backend.ts';
import type { HistoryStore } from '../../src/store/index.ts';
import type { Candles } from '../../src/domain.ts';
import { Unkept } from '../../src/store/unkept.ts';
import { openPostgresBackend } from '../../src/store/postgres.ts';
import { openSqliteBackend } from '../../src/store/sqlite.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { direct, place, PG_URL, ref, simVendor, type BackendName, type Place } from './harness.ts';

const DAY = 86_400_000;
/** Friday 2026-11-20 20:00 Shanghai: the day's bars are closed. */
const AFTER_CLOSE = localTimeMs('CN', '2026-11-20', '20:00');
const MOUTAI = ref('600519.SH');
const KEY: SeriesKey = { adapter: 'sim', symbol: '600519.SH', period: '1m' };

const open: HistoryStore[] = [];
const backends: Backend[] = [];
const places: Place[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
  for (const b of backends.splice(0)) await b.close();
  for (const p of places.splice(0)) await p.dispose();
});

/** A store keeping `days` of minute bars, its boot retention pass over (run on the empty store). */
async function storeKeeping(backend: BackendName, days: number): Promise<{ tier: HistoryStore; p: Place }> {
  const p = place(backend);
  places.push(p);
  const tier = await p.open(() => AFTER_CLOSE, { retentionDays: { '1m': days, '1d': 0 }, pruneIntervalMs: 24 * 3_600_000 });
  open.push(tier);
  await tier.retention();
  return { tier, p };
}

/** The store's own backend, opened beside the tier: what it holds, read directly. */
async function rawBackend(p: Place): Promise<Backend> {
  const b = p.backend === 'sqlite' ? openSqliteBackend(p.options.sqlitePath!) : await openPostgresBackend(PG_URL, p.options.postgresSchema);
  backends.push(b);
  return b;
}

describe.each(['sqlite', 'postgres'] as const)('retention at write on %s', (backend) => {
  it('a window reaching past the retention: answered whole; nothing older kept, nor covered; the kept part needs no vendor call', async () => {
    const { tier, p } = await storeKeeping(backend, 10);
    const cut = AFTER_CLOSE - 10 * DAY;
    const vendor = simVendor(() => AFTER_CLOSE);
    // Four weeks of minute bars: two and a half of them older than the retention.
    const q: CandleQuery = { symbol: MOUTAI, period: '1m', start: localTimeMs('CN', '2026-10-23', '09:31'), end: localTimeMs('CN', '2026-11-20', '15:00') };
    const answer = await tier.candles('sim', q, vendor.fetch);
    expect(answer).toEqual(await direct(() => AFTER_CLOSE)(q));
    expect(answer!.timestamp[0]).toBeLessThan(cut);

    const b = await rawBackend(p);
    expect((await b.read(KEY, 0, cut - 1)).timestamp).toEqual([]);
    const kept = await b.read(KEY, cut, AFTER_CLOSE);
    expect(kept.timestamp).toEqual(answer!.timestamp.filter((t) => t >= cut));
    const coverage = await b.coverage(KEY);
    expect(coverage.length).toBeGreaterThan(0);
    for (const s of coverage) expect(s.lo).toBeGreaterThanOrEqual(cut);

    // Inside the retention: a store hit. Past it: the vendor again (never answered from nothing).
    vendor.reset();
    const recent: CandleQuery = { symbol: MOUTAI, period: '1m', start: localTimeMs('CN', '2026-11-16', '09:31'), end: localTimeMs('CN', '2026-11-20', '15:00') };
    expect(await tier.candles('sim', recent, vendor.fetch)).toEqual(await direct(() => AFTER_CLOSE)(recent));
    expect(vendor.calls).toEqual([]);
    const old: CandleQuery = { symbol: MOUTAI, period: '1m', start: localTimeMs('CN', '2026-10-26', '09:31'), end: localTimeMs('CN', '2026-10-30', '15:00') };
    expect(await tier.candles('sim', old, vendor.fetch)).toEqual(await direct(() => AFTER_CLOSE)(old));
    expect(vendor.calls.length).toBe(1);
    // Across the cut: the stored part and the vendor's older part, joined.
    vendor.reset();
    const across: CandleQuery = { symbol: MOUTAI, period: '1m', start: localTimeMs('CN', '2026-11-02', '09:31'), end: localTimeMs('CN', '2026-11-18', '15:00') };
    expect(await tier.candles('sim', across, vendor.fetch)).toEqual(await direct(() => AFTER_CLOSE)(across));
    expect(vendor.calls.map((c) => c.end! < cut)).toEqual([true]);
    expect((await b.read(KEY, 0, cut - 1)).timestamp).toEqual([]);
  });

  it('newest-N walks back past the retention: the count is met, the older bars not kept', async () => {
    const { tier, p } = await storeKeeping(backend, 10);
    const cut = AFTER_CLOSE - 10 * DAY;
    const vendor = simVendor(() => AFTER_CLOSE);
    // 4,000 bars up to 11-06: 16+ trading days, about half of them before the cut.
    const q: CandleQuery = { symbol: MOUTAI, period: '1m', end: localTimeMs('CN', '2026-11-16', '15:00'), count: 4000 };
    const answer = await tier.candles('sim', q, vendor.fetch);
    expect(answer).toEqual(await direct(() => AFTER_CLOSE)(q));
    expect(answer!.timestamp.length).toBe(4000);
    const b = await rawBackend(p);
    expect((await b.read(KEY, 0, cut - 1)).timestamp).toEqual([]);
    for (const s of await b.coverage(KEY)) expect(s.lo).toBeGreaterThanOrEqual(cut);
    // Asked again: the same answer (the old part from the vendor again, the rest from the store).
    expect(await tier.candles('sim', q, vendor.fetch)).toEqual(answer);
  });
});

describe('paging 60m K-lines back past the minute retention (app, SQLite, default 60 days)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-retention-write-'));
  const apps: FastifyInstance[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('every page complete; the store holds no minute bar older than 60 days right after', async () => {
    // Saturday 2025-06-21 12:00 Shanghai.
    const NOW = Date.UTC(2025, 5, 21, 4, 0, 0);
    const now = () => NOW;
    const path = join(dir, 'history.sqlite');
    const { app, config } = await buildTestApp({
      now,
      adapters: new Map([['sim', createSimAdapter({}, { now })]]),
      configure: (c) => {
        c.history = { ...c.history!, enabled: true, sqlitePath: path };
      },
    });
    const { app: plain } = await buildTestApp({ now, adapters: new Map([['sim', createSimAdapter({}, { now })]]) });
    apps.push(app, plain);
    expect(config.history?.retentionDays?.['1m'] ?? 60).toBe(60);
    const cut = NOW - 60 * DAY;

    // Four pages of 150 hourly bars (~37 trading days each), each ending before the last one began.
    const get = (target: FastifyInstance, end: string) =>
      target.inject({ url: `/v1/klines?symbol=600519.SH&period=60m&adjust=none&count=150${end}`, headers: { 'x-api-key': KEYS.demo } });
    let end = '';
    let oldest = Infinity;
    for (let page = 0; page < 4; page++) {
      const res = await get(app, end);
      expect(res.statusCode).toBe(200);
      const data = res.json().data as { timestamp: number[] };
      expect(data).toEqual((await get(plain, end)).json().data);
      expect(data.timestamp.length).toBe(150);
      oldest = data.timestamp[0];
      end = `&end_time=${oldest - 1}`;
    }
    expect(oldest).toBeLessThan(cut - 60 * DAY);

    const b = openSqliteBackend(path);
    backends.push(b);
    expect((await b.read(KEY, 0, cut - 1)).timestamp).toEqual([]);
    expect((await b.read(KEY, cut, NOW)).timestamp.length).toBeGreaterThan(0);
    for (const s of await b.coverage(KEY)) expect(s.lo).toBeGreaterThanOrEqual(cut);
    const stats = await b.stats();
    // About 40 trading days of 240 bars: what 60 days hold, not the 150 days paged.
    expect(stats.byPeriod['1m'].bars).toBeLessThanOrEqual(45 * 240);
  }, 60_000);
});

describe('bars served unkept beside stored ones keep a futures contract\'s columns', () => {
  const futures = (ts: number[]): Candles => ({
    timestamp: ts, open: ts.map(() => 10), high: ts.map(() => 11), low: ts.map(() => 9), close: ts.map(() => 10.5),
    volume: ts.map(() => 3), amount: ts.map(() => 31.5), prev_close: ts.map(() => 10),
    open_interest: ts.map((t) => 1000 + t), settlement_price: ts.map((t) => 10 + t / 100),
  });

  it('open_interest and settlement_price of both sides, in label order (an unkept bar wins a tie)', () => {
    const unkept = new Unkept(10);
    // A fill of [0, 12]: the bars before 10 are served, not written.
    const written = unkept.keep(futures([2, 4, 10, 12]), { lo: 0, hi: 12 });
    expect(written?.bars.timestamp).toEqual([10, 12]);
    const out = unkept.merge(futures([10, 12]), 0, 12);
    expect(out.timestamp).toEqual([2, 4, 10, 12]);
    expect(out.open_interest).toEqual([1002, 1004, 1010, 1012]);
    expect(out.settlement_price).toEqual([10.02, 10.04, 10.1, 10.12]);
    expect(unkept.merge(futures([10, 12]), 0, 12, 3).open_interest).toEqual([1004, 1010, 1012]);
  });

  it('a column one side lacks is left out, as the store leaves out a column some bars lack', () => {
    const unkept = new Unkept(10);
    unkept.keep(futures([2, 4]), { lo: 0, hi: 9 });
    const { open_interest: _oi, ...stored } = futures([10, 12]);
    const out = unkept.merge(stored, 0, 12);
    expect(out.open_interest).toBeUndefined();
    expect(out.settlement_price).toEqual([10.02, 10.04, 10.1, 10.12]);
  });
});
