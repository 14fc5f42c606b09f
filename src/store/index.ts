// The candle history store: raw closed 1m and 1d bars per (adapter, symbol, period) with the
// ranges known to be covered, so each closed bar is fetched from the vendor once, and the reference
// data adjusted answers and symbol checks need (ex-factors, instruments) per adapter beside them.
// It is a tier of the loader behind the in-memory (and Redis) tiers, in front of the router: the
// loader asks `stored()` (no vendor), then drives a `pass()`, which yields the vendor requests it
// needs and never calls a vendor itself; `salvage()` answers the stored closed bars when every
// vendor of the chain failed. The store never sees adjusted or derived periods (those are computed
// from raw base bars on top).
//
//   const history = await openHistoryStore({ backend: 'sqlite', sqlitePath, now, revision, retentionDays, registry, log });
//   const whole = await history.stored(adapter.id, query);             // or undefined
//   const raw = whole ?? await runPass(history.pass(adapter.id, query), (q) => adapter.getCandles(q, ctx));
//
// Decisions (docs/store.md has the operator's view):
// - Coverage is a list of inclusive [lo, hi] label ranges per series, stored with the bars in the
//   same transaction. Ranges known to hold no bars (holidays, suspensions, before listing) are
//   covered like any other, so they are never asked for twice.
// - A `count` query is mapped to a range with the trading calendar (the count-th newest possible
//   label); when suspensions leave it short, the tier walks further back with count calls, and a
//   short vendor answer means history ends there: [floor, …] is recorded as empty coverage.
// - The newest `revision.dailyBars` / `revision.minuteBars` closed bars of a fill are
//   provisional: re-fetched once at the first session close after the fill, then final.
// - The forming bar is fetched fresh on every call and never stored.
// - Retention applies when bars are written: a fill's bars older than `retentionDays` are served
//   and never kept, nor their range covered (unkept.ts); the retention pass removes what aged out.
// - Readiness probes the store (a shared one also in the background); a write failure of the own
//   SQLite file (full, read-only) is reported until a write succeeds (candle-store.ts).
import type { Registry } from 'prom-client';
import type { CandleQuery } from '../../adapters/types.ts';
import type { BasePeriod, Candles } from '../domain.ts';
import type { Backend, FillHook, HistoryStats } from './backend.ts';
import { createHistoryMetrics } from './metrics.ts';
import { openSqliteBackend } from './sqlite.ts';
import { createSeriesLockMetrics, type SeriesLock } from './series-lock.ts';
import { CandleStore, PROBE_EVERY_MS, type FetchRange, type StorePass, type StoreHealth } from './candle-store.ts';
import type { LedgerKind, LedgerQuery, LedgerRow, ReferenceKind, SeriesFilter, SeriesKey } from './backend.ts';
import type { Segment } from './coverage.ts';
import type { StoredWindow } from './backend.ts';
import type { ReadinessCheck } from '../health.ts';

export type { HistoryStats, PeriodStats, DropFilter, LedgerKind, LedgerRow, ReferenceKind, SeriesFilter, SeriesKey } from './backend.ts';
export { DEFAULT_MAX_BARS_PER_CALL, runPass } from './candle-store.ts';
export type { FetchRange, StorePass, VendorRequest } from './candle-store.ts';
export type { StoreHealth } from './candle-store.ts';

export interface HistoryStore {
  /** A window the store holds whole, with no vendor call; undefined when the vendor is needed (candle-store.ts). */
  stored(adapterId: string, query: CandleQuery): Promise<Candles | undefined>;
  /** A sans-I/O pass over one series: yields vendor requests, returns the window (candle-store.ts). */
  pass(adapterId: string, query: CandleQuery, opts?: { maxBarsPerCall?: number; final?: boolean }): StorePass;
  /** The stored closed bars of `query` when the vendor chain failed, if the store covers them (candle-store.ts). */
  salvage(adapterId: string, query: CandleQuery): Promise<Candles | undefined>;
  /** Stored reference documents (ex-factors, instruments) of an adapter, by symbol. */
  reference(kind: ReferenceKind, adapterId: string, symbols: readonly string[]): Promise<Map<string, { value: unknown; fetchedAt: number }>>;
  /** Keeps reference documents the vendor just sent (each replaces the symbol's stored one). */
  keepReference(kind: ReferenceKind, adapterId: string, entries: ReadonlyArray<{ symbol: string; value: unknown }>): Promise<void>;
  /** `stored`, else `pass` driven by `fetchRange` (operator commands that call an adapter themselves,
   *  tests): raw closed+open candles for `query` (base period 1m or 1d) from adapter `adapterId`.
   *  Covered parts come from the store; only missing ranges go to `fetchRange` (merged into as few
   *  calls as possible, each bounded by `maxBarsPerCall`); results are validated, closed bars stored
   *  with their covered range in one transaction, the still-open bar returned but never stored.
   *  `undefined` when the vendor does not know the symbol (never stored as coverage). */
  candles(adapterId: string, query: CandleQuery, fetchRange: FetchRange, opts?: { maxBarsPerCall?: number }): Promise<Candles | undefined>;
  stats(): Promise<HistoryStats>;
  /** What is stored, as it is (no vendor, no retention): the coverage of one series (coverage route). */
  storedCoverage?(key: SeriesKey): Promise<Segment[]>;
  /** What is stored, as it is: the bars of one series labelled in [lo, hi], ascending (coverage, market day, export). */
  storedBars?(key: SeriesKey, lo: number, hi: number): Promise<Candles>;
  /** The recorder's records (schema.ts `ledger`). */
  ledgerPut(kind: LedgerKind, rows: readonly LedgerRow[]): Promise<void>;
  ledgerGet(kind: LedgerKind, query: LedgerQuery): Promise<LedgerRow[]>;
  /** Marks series as recorded: kept by the recorder's retention from now on (every instance within a retention interval). */
  markRecorded(keys: readonly SeriesKey[]): Promise<void>;
  /** The stored series matching `filter` (export). */
  storedSeries?(filter: SeriesFilter): Promise<SeriesKey[]>;
  /** What is stored, as it is: many series' windows in one read (backend.ts windowsOf; the whole-market day). */
  storedWindows?(adapter: string, period: BasePeriod, symbols: readonly string[], lo: number, hi: number): Promise<Map<string, StoredWindow>>;
  drop(filter: { adapter?: string; symbol?: string; period?: BasePeriod; from?: number; to?: number }): Promise<number>;
  health(): StoreHealth;
  /** health() after probing the store (at most once a second; a shared store also in the background): readiness. */
  probe(): Promise<StoreHealth>;
  /** A retention pass: the one under way if any (one runs at boot, in the background), else a new one. */
  retention(): Promise<number>;
  /** Bytes the hot-block cache holds now (mdqs_cache_bytes{layer="store_blocks"}). */
  blockCacheBytes?(): number;
  close(): Promise<void>;
}

export interface HistoryStoreOptions {
  backend: 'sqlite' | 'postgres';
  /** Default data/history.sqlite (its directory is created). */
  sqlitePath?: string;
  databaseUrl?: string;
  now: () => number;
  revision: { dailyBars: number; minuteBars: number };
  /**
   * Days kept per base period; 0 keeps forever. Applied when bars are written (older ones are
   * served, not kept) and by the retention pass (what aged out since).
   */
  retentionDays: { '1m': number; '1d': number };
  /**
   * The recorder's retention of its series (ledger 'series'), days per base period; 0 keeps
   * forever (the default). Recorded series are written whole at fill and pruned by this, not by
   * `retentionDays`.
   */
  recordedRetentionDays?: { '1m': number; '1d': number };
  registry?: Registry;
  log?: { warn(obj: object, msg: string): void; error?(obj: object, msg: string): void };
  /** PostgreSQL schema holding the tables (default mdqs_history); tests use one per run. */
  postgresSchema?: string;
  /** How often retention runs, ms (default hourly; it also starts at boot, without holding it up). */
  pruneIntervalMs?: number;
  /** Test seam: runs inside each fill transaction after the bars are written. */
  fillHook?: FillHook;
  /** Bytes of hot blocks kept in memory for store hits (tier.ts BLOCK_CACHE_BYTES by default; 0: none). */
  blockCacheBytes?: number;
  /**
   * The fleet-wide lock per series for a shared PostgreSQL store (series-lock.ts): the Redis fill
   * lock when Redis is configured (the app passes it); unset: a PostgreSQL advisory lock; null: none.
   * SQLite (one instance's own file) never takes one.
   */
  seriesLock?: SeriesLock | null;
  /** Longest wait for the series lock, ms (the upstream deadline). Default 5000. */
  lockWaitMs?: number;
}

export const DEFAULT_SQLITE_PATH = 'data/history.sqlite';

/** A recorded series' ledger name (schema.ts): adapter/symbol/period. */
export function recordedName(key: SeriesKey): string {
  return `${key.adapter}/${key.symbol}/${key.period}`;
}

export async function openBackend(options: Pick<HistoryStoreOptions, 'backend' | 'sqlitePath' | 'databaseUrl' | 'postgresSchema' | 'fillHook' | 'log'>): Promise<Backend> {
  if (options.backend === 'postgres') {
    if (options.databaseUrl === undefined || options.databaseUrl === '') {
      throw new Error('history.backend is postgres but DATABASE_URL is not set');
    }
    // pg (45 modules) loads only for this backend: the default SQLite start never pays for it.
    const { openPostgresBackend } = await import('./postgres.ts');
    return openPostgresBackend(options.databaseUrl, options.postgresSchema, options.fillHook, options.log);
  }
  return openSqliteBackend(options.sqlitePath ?? DEFAULT_SQLITE_PATH, options.fillHook, options.log);
}

/** Opens (creating and migrating) the store; a store that cannot be opened throws naming it. */
export async function openHistoryStore(options: HistoryStoreOptions): Promise<HistoryStore> {
  const backend = await openBackend(options);
  const metrics = createHistoryMetrics(options.registry, backend.kind, () => backend.sizeBytes(), options.now);
  let seriesLock: SeriesLock | undefined;
  if (backend.kind === 'postgres' && options.seriesLock !== null) {
    if (options.seriesLock !== undefined) seriesLock = options.seriesLock;
    else {
      const { openAdvisoryLock } = await import('./postgres.ts');
      seriesLock = openAdvisoryLock(options.databaseUrl as string, options.postgresSchema);
    }
  }
  // The recorded series, as every instance learns them: loaded now and at each retention pass.
  let recorded = new Set<string>();
  const loadRecorded = async (): Promise<void> => {
    recorded = new Set((await backend.ledgerGet('series', {})).map((row) => row.name));
  };
  try {
    await loadRecorded();
  } catch (error) {
    await backend.close();
    throw error;
  }
  const tier = new CandleStore({
    backend,
    now: options.now,
    revision: { bars: { '1d': options.revision.dailyBars, '1m': options.revision.minuteBars } },
    metrics,
    log: options.log,
    seriesLock,
    lockMetrics: seriesLock === undefined ? undefined : createSeriesLockMetrics(options.registry),
    lockWaitMs: options.lockWaitMs,
    blockCacheBytes: options.blockCacheBytes,
    retentionDays: options.retentionDays,
    ownRetention: (key) => recorded.has(recordedName(key)),
    recordedRetentionDays: options.recordedRetentionDays,
  });
  // Retention never holds up boot or shutdown: a big store's first pass takes seconds (the sqlite
  // pass deletes in chunks with turns of the event loop between; close() stops it between chunks).
  const stop = new AbortController();
  let running: Promise<number> | undefined;
  const prune = (): Promise<number> => {
    if (stop.signal.aborted) return Promise.resolve(0);
    running ??= loadRecorded()
      .then(() => tier.prune(options.retentionDays, stop.signal, options.recordedRetentionDays))
      .catch((error: unknown) => {
        if (!stop.signal.aborted) options.log?.warn({ err: error }, 'history store: retention pass failed');
        return 0;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  setImmediate(() => void prune()).unref();
  const timer = setInterval(prune, options.pruneIntervalMs ?? 3_600_000);
  timer.unref();
  // A shared store fails and recovers whatever this instance does: probed in the background, so
  // readiness follows it and the bypass after a failure ends with no request. An own SQLite file
  // changes with this instance's own use: /readyz's probe is enough.
  const probes = backend.kind === 'postgres' ? setInterval(() => void tier.probe(), PROBE_EVERY_MS) : undefined;
  probes?.unref();
  let closed = false;
  return {
    stored: (adapterId, query) => tier.stored(adapterId, query),
    pass: (adapterId, query, opts) => tier.pass(adapterId, query, opts?.maxBarsPerCall, opts?.final),
    salvage: (adapterId, query) => tier.salvage(adapterId, query),
    reference: (kind, adapterId, symbols) => tier.reference(kind, adapterId, symbols),
    keepReference: (kind, adapterId, entries) => tier.keepReference(kind, adapterId, entries),
    candles: (adapterId, query, fetchRange, opts) => tier.candles(adapterId, query, fetchRange, opts?.maxBarsPerCall),
    stats: () => tier.stats(),
    storedCoverage: (key) => backend.coverage(key),
    storedBars: (key, lo, hi) => backend.read(key, lo, hi),
    ledgerPut: (kind, rows) => backend.ledgerPut(kind, rows),
    ledgerGet: (kind, query) => backend.ledgerGet(kind, query),
    async markRecorded(keys) {
      const fresh = keys.filter((k) => !recorded.has(recordedName(k)));
      if (fresh.length === 0) return;
      const at = options.now();
      await backend.ledgerPut('series', fresh.map((k) => ({ name: recordedName(k), day: '', updatedAt: at, data: '{}' })));
      for (const k of fresh) recorded.add(recordedName(k));
    },
    storedSeries: async (filter) => backend.listSeries?.(filter) ?? [],
    storedWindows: backend.windowsOf === undefined ? undefined : (adapter, period, symbols, lo, hi) => backend.windowsOf!(adapter, period, symbols, lo, hi),
    drop: (filter) => tier.drop(filter),
    health: () => tier.health(),
    probe: () => tier.probe(),
    retention: prune,
    blockCacheBytes: () => tier.blockCacheBytes,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      clearInterval(probes);
      stop.abort();
      await Promise.all([running, tier.stopProbing()]);
      // A lock the app passed in (Redis) is the app's to close; the advisory lock is ours.
      if (seriesLock !== undefined && options.seriesLock === undefined) await seriesLock.close();
      await backend.close();
    },
  };
}

/**
 * The store's part of /readyz, by the readiness policy: this instance's own SQLite file failing
 * (unreadable, damaged, or unwritable: a full disk) makes it unready (another instance can do
 * better); a shared PostgreSQL store failing is a fault every instance shares: reported as
 * degraded (history then comes from the vendor).
 */
export function historyReadiness(store: Pick<HistoryStore, 'probe'>): ReadinessCheck {
  return {
    name: 'history',
    run: async () => {
      const health = await store.probe();
      if (health.ok) return { ready: true, detail: health };
      if (health.backend === 'sqlite') return { ready: false, detail: health };
      return { ready: true, detail: health, degraded: { problem: 'store failing: history from the vendor', since: health.since } };
    },
  };
}
