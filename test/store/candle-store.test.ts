// The history tier against both backends, with the sim adapter as the vendor.
import { spawn } from 'node:child_process';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { CandleQuery } from '../../adapters/types.ts';
import { localMidnight, localTimeMs } from '../../src/markets/calendar.ts';
import type { HistoryStore } from '../../src/store/index.ts';
import { clock, direct, loopTurnsDuring, place, PG_URL, ref, simVendor, type BackendName, type Place } from './harness.ts';

const d = (date: string) => localMidnight('CN', date);
const AFTER_CLOSE = localTimeMs('CN', '2026-11-20', '20:00');
const MOUTAI = ref('600519.SH');
const YEAR: CandleQuery = { symbol: MOUTAI, period: '1d', start: d('2025-01-01'), end: d('2025-12-31') };

const open: HistoryStore[] = [];
const places: Place[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
  for (const p of places.splice(0)) await p.dispose();
});

function newPlace(backend: BackendName): Place {
  const p = place(backend);
  places.push(p);
  return p;
}

async function tierOn(p: Place, now: () => number, extra = {}): Promise<HistoryStore> {
  const t = await p.open(now, extra);
  open.push(t);
  return t;
}

async function reopen(p: Place, t: HistoryStore, now: () => number): Promise<HistoryStore> {
  await t.close();
  return tierOn(p, now);
}

describe.each(['sqlite', 'postgres'] as const)('history tier on %s', (backend) => {
  it('after a year of daily bars, shifted windows inside make no vendor call, also after a restart', async () => {
    const p = newPlace(backend);
    let tier = await tierOn(p, () => AFTER_CLOSE);
    const vendor = simVendor(() => AFTER_CLOSE);
    const year = await tier.candles('sim', YEAR, vendor.fetch);
    expect(year).toEqual(await direct(() => AFTER_CLOSE)(YEAR));
    expect(vendor.calls).toEqual([{ symbol: MOUTAI, period: '1d', start: d('2025-01-02'), end: d('2025-12-31') }]);
    vendor.reset();
    const windows: CandleQuery[] = [
      { symbol: MOUTAI, period: '1d', start: d('2025-02-10'), end: d('2025-05-30') },
      { symbol: MOUTAI, period: '1d', start: d('2025-02-11'), end: d('2025-05-31') },
      { symbol: MOUTAI, period: '1d', end: d('2025-12-31'), start: d('2025-06-01'), count: 20 },
      { symbol: MOUTAI, period: '1d', start: d('2025-01-01'), end: d('2025-01-31') },
    ];
    for (const w of windows) expect(await tier.candles('sim', w, vendor.fetch)).toEqual(await direct(() => AFTER_CLOSE)(w));
    expect(vendor.calls).toEqual([]);
    tier = await reopen(p, tier, () => AFTER_CLOSE);
    for (const w of windows) expect(await tier.candles('sim', w, vendor.fetch)).toEqual(await direct(() => AFTER_CLOSE)(w));
    expect(vendor.calls).toEqual([]);
    // A window extending the year by a month: one call, for January 2026 only.
    const longer = { symbol: MOUTAI, period: '1d' as const, start: d('2025-01-01'), end: d('2026-01-31') };
    expect(await tier.candles('sim', longer, vendor.fetch)).toEqual(await direct(() => AFTER_CLOSE)(longer));
    expect(vendor.calls).toEqual([{ symbol: MOUTAI, period: '1d', start: d('2026-01-05'), end: d('2026-01-30') }]);
  });

  it('overlapping concurrent requests fetch each missing range once', async () => {
    const p = newPlace(backend);
    const tier = await tierOn(p, () => AFTER_CLOSE);
    const vendor = simVendor(() => AFTER_CLOSE);
    const queries: CandleQuery[] = [
      { symbol: MOUTAI, period: '1d', start: d('2024-01-01'), end: d('2024-06-30') },
      { symbol: MOUTAI, period: '1d', start: d('2024-03-01'), end: d('2024-09-30') },
      { symbol: MOUTAI, period: '1d', start: d('2024-05-01'), end: d('2024-12-31') },
      { symbol: MOUTAI, period: '1d', end: d('2024-12-31'), count: 50 },
      { symbol: MOUTAI, period: '1d', start: d('2024-01-01'), end: d('2024-06-30') },
    ];
    const results = await Promise.all(queries.map((q) => tier.candles('sim', q, vendor.fetch)));
    for (let i = 0; i < queries.length; i++) expect(results[i]).toEqual(await direct(() => AFTER_CLOSE)(queries[i]));
    // Every label fetched at most once, and exactly the 2024 trading days fetched.
    const fetched = (await Promise.all(vendor.calls.map((q) => direct(() => AFTER_CLOSE)(q)))).flatMap((c) => c!.timestamp);
    expect(new Set(fetched).size).toBe(fetched.length);
    const all = await direct(() => AFTER_CLOSE)({ symbol: MOUTAI, period: '1d', start: d('2024-01-01'), end: d('2024-12-31') });
    expect(fetched.sort((a, b) => a - b)).toEqual(all!.timestamp);
    expect((await tier.stats()).bars).toBe(all!.timestamp.length);
  });

  it('a count past the listing date records the empty history and never refetches it', async () => {
    const p = newPlace(backend);
    const tier = await tierOn(p, () => AFTER_CLOSE);
    const vendor = simVendor(() => AFTER_CLOSE);
    // 600519.SH listed 2001-08-27: 10 000 daily bars reach back before it.
    const q: CandleQuery = { symbol: MOUTAI, period: '1d', count: 10_000 };
    const first = await tier.candles('sim', q, vendor.fetch);
    expect(first).toEqual(await direct(() => AFTER_CLOSE)(q));
    expect(first!.timestamp[0]).toBe(d('2001-08-27'));
    vendor.reset();
    expect(await tier.candles('sim', q, vendor.fetch)).toEqual(first);
    const before: CandleQuery = { symbol: MOUTAI, period: '1d', start: d('1995-01-01'), end: d('1999-12-31') };
    expect((await tier.candles('sim', before, vendor.fetch))!.timestamp).toEqual([]);
    expect(vendor.calls).toEqual([]);
  });

  it('a range wholly before listing is one call, then known empty', async () => {
    const p = newPlace(backend);
    const tier = await tierOn(p, () => AFTER_CLOSE);
    const vendor = simVendor(() => AFTER_CLOSE);
    const q: CandleQuery = { symbol: MOUTAI, period: '1d', start: d('1996-01-01'), end: d('1996-12-31') };
    expect((await tier.candles('sim', q, vendor.fetch))!.timestamp).toEqual([]);
    expect((await tier.candles('sim', q, vendor.fetch))!.timestamp).toEqual([]);
    expect(vendor.calls.length).toBe(1);
  });

  it('suspensions inside a count window walk back until enough bars are held', async () => {
    const p = newPlace(backend);
    const tier = await tierOn(p, () => AFTER_CLOSE);
    // A vendor with a ten-day suspension in November 2026.
    const gapLo = d('2026-11-02');
    const gapHi = d('2026-11-13');
    const drop = (c: NonNullable<Awaited<ReturnType<ReturnType<typeof direct>>>>) => {
      const keep = c.timestamp.map((t, i) => (t < gapLo || t > gapHi ? i : -1)).filter((i) => i >= 0);
      const pick = (col: number[]) => keep.map((i) => col[i]);
      return { timestamp: pick(c.timestamp), open: pick(c.open), high: pick(c.high), low: pick(c.low), close: pick(c.close), volume: pick(c.volume), amount: pick(c.amount), prev_close: pick(c.prev_close!) };
    };
    const vendor = simVendor(() => AFTER_CLOSE, drop);
    const q: CandleQuery = { symbol: MOUTAI, period: '1d', count: 30 };
    const got = await tier.candles('sim', q, vendor.fetch);
    expect(got!.timestamp.length).toBe(30);
    expect(got).toEqual(windowNewest(drop((await direct(() => AFTER_CLOSE)({ symbol: MOUTAI, period: '1d', count: 60 }))!), 30));
    expect(got!.timestamp).not.toContain(gapLo);
    const calls = vendor.calls.length;
    expect(await tier.candles('sim', q, vendor.fetch)).toEqual(got);
    expect(vendor.calls.length).toBe(calls);
  });

  it('the forming bar is served fresh and never stored', async () => {
    const p = newPlace(backend);
    const c = clock(localTimeMs('CN', '2026-11-20', '10:15') + 30_000);
    const tier = await tierOn(p, c.now);
    const vendor = simVendor(c.now);
    const q: CandleQuery = { symbol: MOUTAI, period: '1d', count: 5 };
    const got = await tier.candles('sim', q, vendor.fetch);
    expect(got).toEqual(await direct(c.now)(q));
    expect(got!.timestamp.at(-1)).toBe(d('2026-11-20'));
    // One vendor request for a cold window: the closed gap and the forming bar come together
    // (the closed part stored, the forming bar only returned). The closed part holds `count`
    // closed bars, since it is planned before the forming bar is known to exist.
    expect(vendor.calls).toHaveLength(1);
    expect(vendor.calls[0].end).toBeUndefined();
    expect((await tier.stats()).bars).toBe(5);
    // A second call asks the vendor only for the forming bar.
    vendor.reset();
    await tier.candles('sim', q, vendor.fetch);
    expect(vendor.calls).toEqual([{ symbol: MOUTAI, period: '1d', start: d('2026-11-19') + 1, end: undefined }]);
  });

  it('the revision window is re-fetched once after the next close', async () => {
    const p = newPlace(backend);
    const c = clock(AFTER_CLOSE);
    const tier = await tierOn(p, c.now);
    const vendor = simVendor(c.now);
    const q: CandleQuery = { symbol: MOUTAI, period: '1d', start: d('2026-10-01'), end: d('2026-11-20') };
    await tier.candles('sim', q, vendor.fetch);
    vendor.reset();
    c.set(localTimeMs('CN', '2026-11-23', '09:00'));
    await tier.candles('sim', q, vendor.fetch);
    expect(vendor.calls).toEqual([]);
    c.set(localTimeMs('CN', '2026-11-23', '16:00'));
    expect(await tier.candles('sim', q, vendor.fetch)).toEqual(await direct(c.now)(q));
    expect(vendor.calls).toEqual([{ symbol: MOUTAI, period: '1d', start: d('2026-11-19'), end: d('2026-11-20') }]);
    vendor.reset();
    c.set(localTimeMs('CN', '2026-11-24', '16:00'));
    await tier.candles('sim', q, vendor.fetch);
    expect(vendor.calls).toEqual([]);
  });

  it('bars failing validation are never stored; an unknown symbol stores nothing', async () => {
    const p = newPlace(backend);
    const tier = await tierOn(p, () => AFTER_CLOSE);
    const vendor = simVendor(() => AFTER_CLOSE, (c) => ({ ...c, high: c.high.map((h, i) => (i === 3 ? c.low[i] / 2 : h)) }));
    const got = await tier.candles('sim', YEAR, vendor.fetch);
    const full = await direct(() => AFTER_CLOSE)(YEAR);
    expect(got!.timestamp).toEqual(full!.timestamp.filter((_, i) => i !== 3));
    expect((await tier.stats()).bars).toBe(full!.timestamp.length - 1);
    expect(await tier.candles('sim', { ...YEAR, symbol: ref('999999.SH') }, vendor.fetch)).toBeUndefined();
    expect((await tier.stats()).series).toBe(1);
  });

  it('drop forgets bars and their coverage, so they are fetched again', async () => {
    const p = newPlace(backend);
    const tier = await tierOn(p, () => AFTER_CLOSE);
    const vendor = simVendor(() => AFTER_CLOSE);
    await tier.candles('sim', YEAR, vendor.fetch);
    const june = await direct(() => AFTER_CLOSE)({ symbol: MOUTAI, period: '1d', start: d('2025-06-01'), end: d('2025-06-30') });
    const removed = await tier.drop({ symbol: '600519.SH', period: '1d', from: d('2025-06-01'), to: d('2025-06-30') });
    expect(removed).toBe(june!.timestamp.length);
    expect(removed).toBeGreaterThan(15);
    vendor.reset();
    expect(await tier.candles('sim', YEAR, vendor.fetch)).toEqual(await direct(() => AFTER_CLOSE)(YEAR));
    expect(vendor.calls).toEqual([{ symbol: MOUTAI, period: '1d', start: june!.timestamp[0], end: june!.timestamp.at(-1) }]);
  });

  it('metrics count store and upstream bars and fill requests', async () => {
    const p = newPlace(backend);
    const registry = new Registry();
    const tier = await tierOn(p, () => AFTER_CLOSE, { registry });
    const vendor = simVendor(() => AFTER_CLOSE);
    const first = await tier.candles('sim', YEAR, vendor.fetch);
    await tier.candles('sim', YEAR, vendor.fetch);
    const text = await registry.metrics();
    const n = first!.timestamp.length;
    expect(text).toContain(`mdqs_history_bars_total{period="1d",source="upstream"} ${n}`);
    expect(text).toContain(`mdqs_history_bars_total{period="1d",source="store"} ${n}`);
    expect(text).toContain('mdqs_history_fill_requests_total{adapter="sim",period="1d"} 1');
    expect(text).toMatch(new RegExp(`mdqs_history_store_bytes\\{backend="${backend}"\\} [1-9]`));
  });

  it('a store failing at run time degrades to the vendor and says so', async () => {
    const p = newPlace(backend);
    const tier = await tierOn(p, () => AFTER_CLOSE);
    const vendor = simVendor(() => AFTER_CLOSE);
    await breakStore(p);
    expect(await tier.candles('sim', YEAR, vendor.fetch)).toEqual(await direct(() => AFTER_CLOSE)(YEAR));
    expect(vendor.calls).toEqual([YEAR]);
    const health = tier.health();
    expect(health.ok).toBe(false);
    expect(health.backend).toBe(backend);
    expect(health.error).toMatch(/history store failed/);
  });

  it('a process killed mid-fill leaves no partial range marked covered', async () => {
    const p = newPlace(backend);
    const location = backend === 'sqlite' ? p.options.sqlitePath! : PG_URL;
    await runAndKill([backend, location, p.options.postgresSchema ?? '', String(AFTER_CLOSE)]);
    const tier = await tierOn(p, () => AFTER_CLOSE);
    const stats = await tier.stats();
    expect(stats.bars).toBe(0);
    expect(stats.ranges).toBe(0);
    const vendor = simVendor(() => AFTER_CLOSE);
    const q: CandleQuery = { symbol: MOUTAI, period: '1d', start: d('2024-01-01'), end: d('2024-12-31') };
    expect(await tier.candles('sim', q, vendor.fetch)).toEqual(await direct(() => AFTER_CLOSE)(q));
    expect(vendor.calls.length).toBe(1);
  });
});

describe('history tier: one backend each', () => {
  it('two tier instances on one PostgreSQL share the history and never duplicate bars', async () => {
    const p = newPlace('postgres');
    const a = await tierOn(p, () => AFTER_CLOSE);
    const b = await tierOn(p, () => AFTER_CLOSE);
    const va = simVendor(() => AFTER_CLOSE);
    const vb = simVendor(() => AFTER_CLOSE);
    const q1: CandleQuery = { symbol: MOUTAI, period: '1d', start: d('2023-01-01'), end: d('2023-09-30') };
    const q2: CandleQuery = { symbol: MOUTAI, period: '1d', start: d('2023-04-01'), end: d('2023-12-31') };
    await Promise.all([a.candles('sim', q1, va.fetch), b.candles('sim', q2, vb.fetch)]);
    va.reset();
    vb.reset();
    const whole: CandleQuery = { symbol: MOUTAI, period: '1d', start: d('2023-01-01'), end: d('2023-12-31') };
    expect(await b.candles('sim', whole, vb.fetch)).toEqual(await direct(() => AFTER_CLOSE)(whole));
    expect(await a.candles('sim', whole, va.fetch)).toEqual(await direct(() => AFTER_CLOSE)(whole));
    expect(va.calls.length + vb.calls.length).toBe(0);
    expect((await a.stats()).bars).toBe((await direct(() => AFTER_CLOSE)(whole))!.timestamp.length);
  });

  it('reopening the SQLite file keeps the history', async () => {
    const p = newPlace('sqlite');
    let tier = await tierOn(p, () => AFTER_CLOSE);
    const vendor = simVendor(() => AFTER_CLOSE);
    const q: CandleQuery = { symbol: MOUTAI, period: '1m', start: localTimeMs('CN', '2026-11-16', '09:31'), end: localTimeMs('CN', '2026-11-20', '15:00') };
    const first = await tier.candles('sim', q, vendor.fetch);
    expect(first!.timestamp.length).toBe(5 * 240);
    tier = await reopen(p, tier, () => AFTER_CLOSE);
    vendor.reset();
    expect(await tier.candles('sim', q, vendor.fetch)).toEqual(first);
    expect(vendor.calls).toEqual([]);
  });

  it('a store written by newer code stops the boot with a clear message; an unopenable path is named', async () => {
    const p = newPlace('sqlite');
    const t = await tierOn(p, () => AFTER_CLOSE);
    await t.close();
    const db = new DatabaseSync(p.options.sqlitePath!);
    db.exec('UPDATE history_schema SET version = 99');
    db.close();
    await expect(p.open(() => AFTER_CLOSE)).rejects.toThrow(/schema version 99, newer than this service knows \(4\)/);
    const bad = '/proc/version/nope/history.sqlite';
    await expect(place('sqlite').open.call(undefined, () => AFTER_CLOSE, { sqlitePath: bad })).rejects.toThrow(bad);
  });

  it.each(['sqlite', 'postgres'] as const)('retention removes old minute bars and their coverage (%s)', async (backend) => {
    const p = newPlace(backend);
    const tier = await tierOn(p, () => AFTER_CLOSE);
    const vendor = simVendor(() => AFTER_CLOSE);
    const q: CandleQuery = { symbol: MOUTAI, period: '1m', start: localTimeMs('CN', '2026-11-02', '09:31'), end: localTimeMs('CN', '2026-11-20', '15:00') };
    await tier.candles('sim', q, vendor.fetch);
    await tier.close();
    const kept = await tierOn(p, () => AFTER_CLOSE, { retentionDays: { '1m': 7, '1d': 0 } });
    // The boot pass runs in the background: wait for it (or run one).
    await kept.retention();
    // 7 days back from Friday 20:00 keeps 11-14 (Sat) onward: 11-16 … 11-20, five days.
    expect((await kept.stats()).byPeriod['1m'].bars).toBe(5 * 240);
    vendor.reset();
    await kept.candles('sim', q, vendor.fetch);
    expect(vendor.calls.length).toBe(1);
    expect(vendor.calls[0].end).toBe(localTimeMs('CN', '2026-11-13', '15:00'));
  });
});

describe('retention on sqlite', () => {
  it('deletes a big series in chunks, giving the event loop turns, and keeps coverage true', async () => {
    const p = newPlace('sqlite');
    const tier = await tierOn(p, () => AFTER_CLOSE);
    const vendor = simVendor(() => AFTER_CLOSE);
    // ~80 trading days of 1m bars: more than one 10,000-bar chunk to delete.
    const q: CandleQuery = { symbol: MOUTAI, period: '1m', start: localTimeMs('CN', '2026-07-20', '09:31'), end: localTimeMs('CN', '2026-11-20', '15:00') };
    const all = await tier.candles('sim', q, vendor.fetch);
    expect(all!.timestamp.length).toBeGreaterThan(15_000);
    await tier.close();
    const kept = await tierOn(p, () => AFTER_CLOSE, { retentionDays: { '1m': 7, '1d': 0 } });
    const { turns } = await loopTurnsDuring(() => kept.retention());
    // One turn per chunk at least: the pass did not hold the loop in one block.
    expect(turns).toBeGreaterThanOrEqual(2);
    expect((await kept.stats()).byPeriod['1m'].bars).toBe(5 * 240);
    vendor.reset();
    const again = await kept.candles('sim', q, vendor.fetch);
    expect(again!.timestamp).toEqual(all!.timestamp);
    // Only the pruned part is fetched again (in calls bounded by maxBarsPerCall).
    expect(Math.max(...vendor.calls.map((c) => c.end!))).toBe(localTimeMs('CN', '2026-11-13', '15:00'));
  });
});

function windowNewest<T extends { timestamp: number[] }>(c: T, n: number): T {
  const from = Math.max(0, c.timestamp.length - n);
  const out: Record<string, number[]> = {};
  for (const [k, v] of Object.entries(c)) out[k] = (v as number[]).slice(from);
  return out as unknown as T;
}

async function breakStore(p: Place): Promise<void> {
  if (p.backend === 'sqlite') {
    const db = new DatabaseSync(p.options.sqlitePath!);
    db.exec('DROP TABLE series');
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP TABLE "${p.options.postgresSchema}".series CASCADE`);
  await client.end();
}

function runAndKill(args: string[]): Promise<void> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./fixtures/fill-child.ts', import.meta.url)), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (b: Buffer) => { err += b.toString(); });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      if (b.toString().includes('in-fill')) child.kill('SIGKILL');
    });
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited without being killed: ${err}`))));
  });
}
