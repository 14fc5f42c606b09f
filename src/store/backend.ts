// What a storage backend does for the history tier. Both backends keep the same three tables
// (series, blocks, coverage; schema.ts) and compute coverage changes with coverage.ts inside their
// fill transaction, so the two agree by construction.
import type { BasePeriod, Candles } from '../domain.ts';
import type { Segment } from './coverage.ts';

export interface SeriesKey {
  adapter: string;
  symbol: string;
  period: BasePeriod;
}

export interface DropFilter {
  adapter?: string;
  symbol?: string;
  period?: BasePeriod;
  /** Inclusive bounds on bar labels, epoch ms. */
  from?: number;
  to?: number;
}

export interface SeriesFilter {
  adapter?: string;
  period?: BasePeriod;
  /** Only these symbols (absent: all). */
  symbols?: readonly string[];
}

export interface PeriodStats {
  series: number;
  bars: number;
  ranges: number;
}

export interface HistoryStats {
  backend: 'sqlite' | 'postgres';
  /** File path, or the PostgreSQL schema. */
  location: string;
  symbols: number;
  series: number;
  bars: number;
  ranges: number;
  /** Bytes the store occupies (SQLite: used pages; PostgreSQL: the tables with their indexes). */
  bytes: number;
  byPeriod: Record<BasePeriod, PeriodStats>;
  byAdapter: Record<string, number>;
}

export interface StoredWindow {
  coverage: Segment[];
  /** The blocks blockOf(lo)…blockOf(hi) the series has, ascending; a block not listed holds no bar. */
  blocks: { block: number; data: Uint8Array }[];
}

export interface FillInput {
  key: SeriesKey;
  /** Validated closed bars, all inside `covers`. */
  bars: Candles;
  covers: Segment[];
}

/** Reference data kept beside the bars (schema.ts `reference`). */
export type ReferenceKind = 'exFactors' | 'instruments';

/** One stored reference document: `data` is the adapter's normalised value as JSON. */
export interface ReferenceRow {
  symbol: string;
  fetchedAt: number;
  data: string;
}

/** The recorder's records (schema.ts `ledger`). */
export type LedgerKind = 'run' | 'members' | 'series';

export interface LedgerRow {
  name: string;
  /** YYYY-MM-DD (a trading day), or '' for an undated record. */
  day: string;
  updatedAt: number;
  data: string;
}

/**
 * Ledger rows of one name (or every name starting with `prefix`), days within [from, to] when
 * given; `last`: only the newest such day per name; `first`: only the oldest.
 */
export interface LedgerQuery {
  name?: string;
  prefix?: string;
  from?: string;
  to?: string;
  last?: boolean;
  first?: boolean;
}

/** Which series a retention pass removes from: the ad-hoc fills' or the recorded ones (ledger 'series'). */
export type PruneScope = 'adhoc' | 'recorded';

/** Test seam: runs inside a fill transaction after the bars are written, before coverage and commit. */
export type FillHook = () => void | Promise<void>;

export interface Backend {
  readonly kind: 'sqlite' | 'postgres';
  readonly location: string;
  coverage(key: SeriesKey): Promise<Segment[]>;
  /** The stored series (adapter, symbol, period) matching `filter`, ordered by symbol, period, adapter (coverage and export). */
  listSeries?(filter: SeriesFilter): Promise<SeriesKey[]>;
  /**
   * The whole-market read (GET /v1/klines/market): for `adapter`'s series of `period` among
   * `symbols`, each series' coverage overlapping [lo, hi] and its blocks holding labels in [lo, hi],
   * as stored (not yet verified), in one statement. Symbols without a series are absent.
   */
  windowsOf?(adapter: string, period: BasePeriod, symbols: readonly string[], lo: number, hi: number): Promise<Map<string, StoredWindow>>;
  /** Bars with labels in [lo, hi], ascending; only the newest `newest` when given. */
  read(key: SeriesKey, lo: number, hi: number, newest?: number): Promise<Candles>;
  countBars(key: SeriesKey, lo: number, hi: number): Promise<number>;
  /**
   * The store-hit read: the series' coverage and its blocks holding labels in [lo, hi], as stored
   * (not yet verified), from one consistent snapshot in one statement (one round trip).
   * undefined: the series is not stored. The tier answers a window from it when the coverage
   * needs no vendor call (candle-store.ts #stored).
   */
  window?(key: SeriesKey, lo: number, hi: number): Promise<StoredWindow | undefined>;
  /** One transaction: upsert the bars, overlay the coverage. */
  fill(input: FillInput): Promise<void>;
  /** The stored reference rows of `adapter` for `symbols` (absent symbols: no row). */
  referenceGet(kind: ReferenceKind, adapter: string, symbols: readonly string[]): Promise<ReferenceRow[]>;
  /** One transaction: each row replaces the symbol's stored one. */
  referencePut(kind: ReferenceKind, adapter: string, rows: readonly ReferenceRow[]): Promise<void>;
  /** Upserts ledger rows of `kind` (each replaces the row of its name and day). */
  ledgerPut(kind: LedgerKind, rows: readonly LedgerRow[]): Promise<void>;
  /** Ledger rows of `kind` matching `query` (LedgerQuery), ascending by name then day. */
  ledgerGet(kind: LedgerKind, query: LedgerQuery): Promise<LedgerRow[]>;
  /** Deletes bars and uncovers their ranges; returns the number of bars deleted. */
  drop(filter: DropFilter): Promise<number>;
  /** Retention: bars (and coverage) of `period` labelled before `before`. */
  /** Deletes bars (and coverage) before `before`; may stop early once `signal` aborts (shutdown). */
  prune(period: BasePeriod, before: number, signal?: AbortSignal, scope?: PruneScope): Promise<number>;
  stats(): Promise<HistoryStats>;
  sizeBytes(): Promise<number>;
  /**
   * Readiness: reads the store itself (its file, not a cache; the database server), bounded in
   * time; throws what the store would. `write`: also commits a small write that needs new space
   * (and undoes it in the same transaction), to learn whether the store can be written again.
   */
  probe?(options?: { write?: boolean }): Promise<void>;
  close(): Promise<void>;
}

export type MigrationLog = { warn(obj: object, msg: string): void };

/** Converting a schema-1 store holds the boot (~2 s per million bars): say so once it is done. */
export function logConversion(log: MigrationLog | undefined, location: string, bars: number, ms: number): void {
  log?.warn({ store: location, bars, ms: Math.round(ms) }, 'history store converted from schema 1 (a row per bar) to schema 2 (day blocks)');
}

export function emptyStats(backend: 'sqlite' | 'postgres', location: string): HistoryStats {
  const zero = (): PeriodStats => ({ series: 0, bars: 0, ranges: 0 });
  return { backend, location, symbols: 0, series: 0, bars: 0, ranges: 0, bytes: 0, byPeriod: { '1m': zero(), '1d': zero() }, byAdapter: {} };
}

/** One row per series (its bar and range counts) added into `out`; empty series are skipped. */
export interface SeriesCount {
  adapter: string;
  symbol: string;
  period: BasePeriod;
  bars: number | string;
  ranges: number | string;
}

export function tallySeries(out: HistoryStats, rows: readonly SeriesCount[]): void {
  const symbols = new Set<string>();
  for (const row of rows) {
    // PostgreSQL sends bigint counts as strings.
    const bars = Number(row.bars);
    const ranges = Number(row.ranges);
    if (bars === 0 && ranges === 0) continue;
    symbols.add(row.symbol);
    out.series += 1;
    out.bars += bars;
    out.ranges += ranges;
    out.byPeriod[row.period].series += 1;
    out.byPeriod[row.period].bars += bars;
    out.byPeriod[row.period].ranges += ranges;
    out.byAdapter[row.adapter] = (out.byAdapter[row.adapter] ?? 0) + bars;
  }
  out.symbols = symbols.size;
}
