// `history export`: the candle store written out as Hive-partitioned files that DuckDB, polars,
// pandas and Spark read as one table:
//
//   DIR/period=1d/year=2026/part-0.parquet     columns symbol, timestamp, open, high, low, close,
//   DIR/period=1m/year=2026/part-0.parquet     volume, amount, prev_close (the /v1/klines/market table)
//
//   SELECT * FROM read_parquet('DIR/**/*.parquet', hive_partitioning = true)   -- adds period, year
//
// Rows are the stored raw bars as they are (no adjustment, no vendor call), sorted by symbol then
// time; a year is the bar's exchange-local year. One series per symbol and period: the first
// adapter of the market's candle routing that stores it (or `--adapter`). A part holds at most
// ROWS_PER_PART rows. Idempotent: each exported period is written beside the old one and then
// swapped in whole, so a rerun replaces its period's files and never adds to them.
import { mkdirSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../config/load.ts';
import type { BasePeriod, Region, SymbolRef } from '../domain.ts';
import { encodeTable } from '../http/formats/encode.ts';
import { addDays, localMidnight } from '../markets/calendar.ts';
import { parseSymbol } from '../markets/symbols.ts';
import { lowerBound } from '../candles/window.ts';
import { floorMs } from './labels.ts';
import { openHistoryStore, type HistoryStore, type SeriesKey } from './index.ts';
import { historySettings } from './settings.ts';

type Env = Record<string, string | undefined>;

export const EXPORT_USAGE = 'history export --out DIR [--universe U | --symbols A,B] [--period 1d|1m] [--from YYYY-MM-DD --to YYYY-MM-DD] [--format parquet|csv] [--adapter A]';

/** Rows a part file holds at most (a year of a big universe's minute bars spans several parts). */
export const ROWS_PER_PART = 1_000_000;

export class ExportUsageError extends Error {}

export interface ExportOptions {
  store: HistoryStore;
  out: string;
  /** Only these symbols (absent: every stored symbol). */
  symbols?: readonly SymbolRef[];
  periods: readonly BasePeriod[];
  /** Exchange-local dates, inclusive. */
  from?: string;
  to?: string;
  format: 'parquet' | 'csv';
  /** Adapter ids serving candles for a market, in routing order: which stored series a symbol exports. */
  chain: (region: Region) => readonly string[];
  /** Export this adapter's series only. */
  adapter?: string;
  rowsPerPart?: number;
  progress?: (done: number, total: number, label: string) => void;
}

export interface ExportResult {
  files: string[];
  rows: number;
  series: number;
}

interface Columns {
  symbol: string[];
  timestamp: number[];
  open: number[];
  high: number[];
  low: number[];
  close: number[];
  volume: number[];
  amount: number[];
  prev_close: (number | null)[];
}

const emptyColumns = (): Columns => ({ symbol: [], timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [], prev_close: [] });

/** The series each symbol exports: the first adapter of its market's chain that stores it, else the first stored. */
function pick(keys: readonly SeriesKey[], options: ExportOptions): { key: SeriesKey; ref: SymbolRef }[] {
  const bySymbol = new Map<string, SeriesKey[]>();
  for (const key of keys) {
    if (options.adapter !== undefined && key.adapter !== options.adapter) continue;
    const list = bySymbol.get(key.symbol) ?? [];
    list.push(key);
    bySymbol.set(key.symbol, list);
  }
  const out: { key: SeriesKey; ref: SymbolRef }[] = [];
  for (const [symbol, list] of [...bySymbol].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    const ref = parseSymbol(symbol);
    if (ref === undefined) continue;
    const chain = options.chain(ref.region);
    const ranked = [...list].sort((a, b) => rank(chain, a.adapter) - rank(chain, b.adapter));
    out.push({ key: ranked[0], ref });
  }
  return out;
}

function rank(chain: readonly string[], adapter: string): number {
  const i = chain.indexOf(adapter);
  return i < 0 ? chain.length : i;
}

/** Writes the export; returns the files written (relative to `out`), rows and series. */
export async function exportHistory(options: ExportOptions): Promise<ExportResult> {
  const rowsPerPart = options.rowsPerPart ?? ROWS_PER_PART;
  const ext = options.format;
  const result: ExportResult = { files: [], rows: 0, series: 0 };
  mkdirSync(options.out, { recursive: true });
  const work = join(options.out, `.export-${process.pid}-${Date.now()}`);
  try {
    const plans = [];
    for (const period of options.periods) {
      const keys = await options.store.storedSeries!({ period, symbols: options.symbols?.map((r) => r.symbol) });
      plans.push({ period, series: pick(keys, options) });
    }
    const total = plans.reduce((n, p) => n + p.series.length, 0);
    let done = 0;
    for (const { period, series } of plans) {
      const years = new Map<number, { columns: Columns; part: number }>();
      const flush = async (year: number) => {
        const buffer = years.get(year)!;
        if (buffer.columns.timestamp.length === 0) return;
        const dir = join(work, `period=${period}`, `year=${year}`);
        mkdirSync(dir, { recursive: true });
        const name = `part-${buffer.part}.${ext}`;
        writeFileSync(join(dir, name), await encodeTable(options.format, 'market-day', { data: buffer.columns }));
        result.files.push(join(`period=${period}`, `year=${year}`, name));
        buffer.part += 1;
        buffer.columns = emptyColumns();
      };
      for (const { key, ref } of series) {
        const lo = options.from === undefined ? floorMs(ref.region) : localMidnight(ref.region, options.from);
        const hi = options.to === undefined ? Number.MAX_SAFE_INTEGER : localMidnight(ref.region, addDays(options.to, 1)) - 1;
        const bars = await options.store.storedBars!(key, lo, hi);
        const n = bars.timestamp.length;
        let from = 0;
        while (from < n) {
          // The bar's exchange-local year: the run of bars before the next local New Year.
          const yearOf = localYear(ref.region, bars.timestamp[from]);
          const to = Math.min(n, lowerBound(bars.timestamp, localMidnight(ref.region, `${yearOf + 1}-01-01`)));
          let buffer = years.get(yearOf);
          if (buffer === undefined) {
            buffer = { columns: emptyColumns(), part: 0 };
            years.set(yearOf, buffer);
          }
          const c = buffer.columns;
          for (let i = from; i < to; i++) {
            c.symbol.push(ref.symbol);
            c.timestamp.push(bars.timestamp[i]);
            c.open.push(bars.open[i]);
            c.high.push(bars.high[i]);
            c.low.push(bars.low[i]);
            c.close.push(bars.close[i]);
            c.volume.push(bars.volume[i]);
            c.amount.push(bars.amount[i]);
            const prev = bars.prev_close?.[i];
            c.prev_close.push(prev !== undefined && Number.isFinite(prev) ? prev : null);
          }
          result.rows += to - from;
          if (c.timestamp.length >= rowsPerPart) await flush(yearOf);
          from = to;
        }
        result.series += 1;
        done += 1;
        options.progress?.(done, total, `${period} ${ref.symbol}`);
      }
      for (const year of [...years.keys()].sort()) await flush(year);
      // The period's new files replace the old ones whole (a rerun never adds to them).
      const target = join(options.out, `period=${period}`);
      const fresh = join(work, `period=${period}`);
      const old = join(work, `old-period=${period}`);
      if (existsSync(target)) renameSync(target, old);
      if (existsSync(fresh)) renameSync(fresh, target);
    }
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The exchange-local year of `ts` (its UTC year is at most one off, near New Year). */
function localYear(region: Region, ts: number): number {
  const guess = new Date(ts).getUTCFullYear();
  if (ts < localMidnight(region, `${guess}-01-01`)) return guess - 1;
  if (ts >= localMidnight(region, `${guess + 1}-01-01`)) return guess + 1;
  return guess;
}

// ---- the command -----------------------------------------------------------------------------

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function flag(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const value = args[i + 1];
  if (value === undefined || value.startsWith('--')) throw new ExportUsageError(`--${name} needs a value`);
  return value;
}

function bar(done: number, total: number, label: string): void {
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  const line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total} ${label}`;
  if (process.stderr.isTTY) process.stderr.write(`\r${line.padEnd(80)}`);
  else if (done === total || done % Math.max(1, Math.floor(total / 20)) === 0) process.stderr.write(`${line}\n`);
}

/** `history export …` (the words after `export`); returns the exit code. Usage errors throw ExportUsageError. */
export async function runExport(args: readonly string[], env: Env): Promise<number> {
  const out = flag(args, 'out');
  if (out === undefined) throw new ExportUsageError('--out is required');
  const universe = flag(args, 'universe');
  const symbolsArg = flag(args, 'symbols');
  if (universe !== undefined && symbolsArg !== undefined) throw new ExportUsageError('give at most one of --universe and --symbols');
  const periodArg = flag(args, 'period');
  if (periodArg !== undefined && periodArg !== '1d' && periodArg !== '1m') throw new ExportUsageError(`--period must be 1d or 1m, not ${periodArg}`);
  const from = flag(args, 'from');
  const to = flag(args, 'to');
  for (const [name, value] of [['from', from], ['to', to]] as const) {
    if (value !== undefined && (!DATE.test(value) || !Number.isFinite(Date.parse(`${value}T00:00:00Z`)))) throw new ExportUsageError(`--${name} must be YYYY-MM-DD, not ${value}`);
  }
  if (from !== undefined && to !== undefined && from > to) throw new ExportUsageError('--from must not be after --to');
  const format = flag(args, 'format') ?? 'parquet';
  if (format !== 'parquet' && format !== 'csv') throw new ExportUsageError(`--format must be parquet or csv, not ${format}`);
  let symbols: SymbolRef[] | undefined;
  if (symbolsArg !== undefined) {
    symbols = [];
    for (const raw of symbolsArg.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
      const ref = parseSymbol(raw);
      if (ref === undefined) throw new ExportUsageError(`not a symbol: ${raw}`);
      symbols.push(ref);
    }
  }
  const { config } = loadConfig(env);
  const settings = historySettings(config);
  const chain = (region: Region) => (config.routing.overrides.candles?.[region] ?? config.routing.markets[region]).filter((id) => !settings.disabledAdapters.includes(id));
  if (universe !== undefined) symbols = await members(universe, env, chain);
  const store = await openHistoryStore({
    backend: settings.backend, sqlitePath: settings.sqlitePath, databaseUrl: settings.databaseUrl, postgresSchema: settings.postgresSchema,
    // An export only reads: no retention pass runs on its open.
    now: Date.now, revision: settings.revision, retentionDays: { '1m': 0, '1d': 0 },
    log: { warn: (fields, message) => process.stderr.write(`${message} ${JSON.stringify(fields)}\n`) },
  });
  try {
    const started = performance.now();
    const result = await exportHistory({
      store, out, symbols, periods: periodArg === undefined ? ['1d', '1m'] : [periodArg], from, to, format, chain,
      adapter: flag(args, 'adapter'), progress: bar,
    });
    if (process.stderr.isTTY) process.stderr.write('\n');
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`exported ${result.rows} bars of ${result.series} series to ${result.files.length} ${format} files under ${out} in ${seconds.toFixed(1)} s\n`);
    process.stdout.write(`read with: SELECT * FROM read_${format === 'parquet' ? 'parquet' : 'csv'}('${join(out, '**', `*.${format}`)}', hive_partitioning = true)\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/** A universe's members, as its market's first candle adapter lists them (one vendor call). */
async function members(universe: string, env: Env, chain: (region: Region) => readonly string[]): Promise<SymbolRef[]> {
  const { resolvePoolId, POOL_REGION } = await import('../markets/pools.ts');
  const id = resolvePoolId(universe);
  if (id === undefined) throw new ExportUsageError(`unknown universe ${universe}`);
  const { createAdapters, productionDeps } = await import('../upstream/registry.ts');
  const { config } = loadConfig(env);
  const deps = productionDeps(Date.now);
  const adapters = createAdapters(config.routing, config.adapters, deps);
  try {
    for (const adapterId of chain(POOL_REGION[id])) {
      const pool = await adapters.get(adapterId)?.listPool?.(id);
      if (pool !== undefined) return pool.symbols.flatMap((s) => parseSymbol(s) ?? []);
    }
    throw new ExportUsageError(`no adapter of the ${POOL_REGION[id]} routing lists the universe ${universe}`);
  } finally {
    for (const a of adapters.values()) await a.close?.();
    for (const c of deps.clients.values()) await c.close();
  }
}
