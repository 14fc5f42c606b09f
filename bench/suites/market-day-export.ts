// Issue 39: the candle store's bulk views, each beside DuckDB in the same run.
//
//   1. export: `history export` (src/store/export.ts) of 500 symbols × 5 years of daily bars plus
//      20 days of 1m bars from a SQLite store to Hive-partitioned Parquet, bars/s, beside DuckDB
//      writing the same rows (loaded into its own table first, not timed) to Parquet partitioned
//      the same way (COPY … PARTITION_BY (period, year)). Target: ours ÷ DuckDB ≥ 0.5.
//   2. market day: GET /v1/klines/market for 5,000 symbols (a universe of the bench adapter) and
//      one date, from a warm store (every bar stored; the app new each round, so each answer is
//      the store's, not a memory tier's or the response cache's), p50 on SQLite and PostgreSQL
//      (when DATABASE_URL or postgres://postgres@127.0.0.1:5432/test answers), adjust=none and the
//      default forward, the two backends taking turns request by request (their ratio holds when
//      the machine's load changes); beside DuckDB reading the same day from the exported Parquet files.
//      Target: p50 ≤ 100 ms.
//
//   node bench/suites/market-day-export.ts [--part export|market|both]   (BENCH_QUICK=1: smaller)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import type { CandleQuery } from '../../adapters/types.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { loadDefaultConfig } from '../../config/load.ts';
import { KeyStore, FEATURES, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildApp } from '../../src/app.ts';
import type { BasePeriod, Candles, Region, SymbolRef } from '../../src/domain.ts';
import { localMidnight, tradingDaysBetween } from '../../src/markets/calendar.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { exportHistory } from '../../src/store/export.ts';
import { openHistoryStore, type HistoryStore } from '../../src/store/index.ts';
import { labelsIn } from '../../src/store/labels.ts';
import { dropPostgresSchema } from '../../src/store/postgres.ts';
import { QUICK, reportHeadlines, type Headline } from '../lib/report.ts';
import { median } from '../lib/stats.ts';

const part = process.argv.includes('--part') ? process.argv[process.argv.indexOf('--part') + 1] : 'both';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const log = (line: string) => process.stdout.write(`${line}\n`);
const cn = (iso: string) => Date.parse(`${iso}+08:00`);
/** After the close of Friday 2026-10-30: every bar asked for has closed. */
const NOW = cn('2026-10-30T16:00:00');
const now = () => NOW;
const headlines: Headline[] = [];
const dir = mkdtempSync(join(tmpdir(), 'mdqs-bench-market-'));

const symbolsOf = (n: number): SymbolRef[] => Array.from({ length: n }, (_, i) => parseSymbol(`${600000 + i}.SH`) as SymbolRef);

/** Deterministic bars on every calendar label of the query (a vendor without holes). */
function synth(q: CandleQuery): Candles {
  const region: Region = q.symbol.region;
  let labels = labelsIn(region, q.period, q.start ?? cn('2019-01-01T00:00:00'), Math.min(q.end ?? NOW, NOW));
  if (q.count !== undefined && labels.length > q.count) labels = labels.slice(labels.length - q.count);
  const seed = Number(q.symbol.code);
  const c: Candles = { timestamp: labels, open: [], high: [], low: [], close: [], volume: [], amount: [], prev_close: [] };
  for (const t of labels) {
    const base = 10 + ((seed * 7 + Math.floor(t / 60_000)) % 9000) / 100;
    const round = (x: number) => Math.round(x * 100) / 100;
    c.open.push(round(base));
    c.high.push(round(base * 1.02));
    c.low.push(round(base * 0.98));
    c.close.push(round(base * 1.01));
    c.volume.push(((seed + t / 60_000) % 1000) * 100 + 100);
    c.amount.push(round(base * 1.01 * 1000));
    c.prev_close!.push(round(base * 0.995));
  }
  return c;
}

async function fill(store: HistoryStore, symbols: readonly SymbolRef[], period: BasePeriod, from: string, to: string): Promise<number> {
  let bars = 0;
  for (const symbol of symbols) {
    const got = await store.candles('bench', { symbol, period, start: localMidnight(symbol.region, from), end: localMidnight(symbol.region, to) + 86_399_999 }, async (q) => synth(q));
    bars += got?.timestamp.length ?? 0;
  }
  return bars;
}

const openStore = (backend: 'sqlite' | 'postgres', name: string) => openHistoryStore({
  backend, sqlitePath: join(dir, `${name}.sqlite`), databaseUrl: DATABASE_URL, postgresSchema: `bench_${name}_${process.pid}`, now,
  revision: { dailyBars: 0, minuteBars: 0 }, retentionDays: { '1m': 0, '1d': 0 }, seriesLock: null,
});

// ---- 1. export -------------------------------------------------------------------------------

async function benchExport(): Promise<void> {
  const n = QUICK ? 50 : 500;
  const symbols = symbolsOf(n);
  const store = await openStore('sqlite', 'export');
  const t0 = performance.now();
  const daily = await fill(store, symbols, '1d', '2021-11-01', '2026-10-30');
  const minuteDays = tradingDaysBetween('CN', '2026-09-01', '2026-10-30').slice(-20);
  const minute = await fill(store, symbols, '1m', minuteDays[0], minuteDays.at(-1)!);
  log(`filled ${n} symbols: ${daily} daily + ${minute} 1m bars in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const total = daily + minute;
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const ours: number[] = [];
  const theirs: number[] = [];
  const rounds = QUICK ? 1 : 3;
  for (let r = 0; r < rounds; r++) {
    const out = join(dir, `export-${r}`);
    let t = performance.now();
    const result = await exportHistory({ store, out, periods: ['1d', '1m'], format: 'parquet', chain: () => ['bench'] });
    ours.push(result.rows / ((performance.now() - t) / 1000));
    if (result.rows !== total) throw new Error(`exported ${result.rows} rows, stored ${total}`);
    if (r === 0) await duck.run(`CREATE TABLE bars AS SELECT * FROM read_parquet('${out}/**/*.parquet', hive_partitioning = true)`);
    t = performance.now();
    await duck.run(`COPY bars TO '${join(dir, `duck-${r}`)}' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (period, year))`);
    theirs.push(total / ((performance.now() - t) / 1000));
    rmSync(out, { recursive: true, force: true });
    rmSync(join(dir, `duck-${r}`), { recursive: true, force: true });
  }
  const threads = (await duck.runAndReadAll("SELECT current_setting('threads') AS t")).getRowObjectsJS()[0].t;
  duck.closeSync();
  await store.close();
  const ratio = median(ours) / median(theirs);
  log(`\n## export: ${n} symbols × 5 years 1d + 20 days 1m = ${total} bars, median of ${rounds}`);
  log('| writer | bars/s |');
  log('|---|---:|');
  log(`| history export (Parquet, Hive period/year) | ${Math.round(median(ours)).toLocaleString('en')} |`);
  log(`| DuckDB COPY … PARTITION_BY (period, year), ${threads} threads | ${Math.round(median(theirs)).toLocaleString('en')} |`);
  log(`| ratio | ${ratio.toFixed(2)} (target ≥ 0.5) |`);
  headlines.push({ suite: 'market-day-export', figure: 'history export ÷ DuckDB COPY to Parquet, bars/s', value: ratio.toFixed(2), target: '≥ 0.5', pass: ratio >= 0.5 });
}

// ---- 2. market day ---------------------------------------------------------------------------

const KEY = 'bench-market-key';
function keys(): KeyStore {
  return new KeyStore(parseKeysFile({
    plans: { bench: { markets: ['CN', 'HK', 'US'], features: [...FEATURES], rate_limit: { max: 10_000_000, window_ms: 60000 }, max_symbols: 100 } },
    keys: [{ id: 'bench', plan: 'bench', sha256: sha256Hex(KEY) }],
  }));
}

/** The sim under the id `bench`, its CN_Stock listing `symbols`, its candles synthetic and no ex-factors. */
function benchAdapter(symbols: readonly SymbolRef[]) {
  const sim = createSimAdapter({}, { now });
  return {
    ...sim,
    id: 'bench',
    listPool: async () => ({ id: 'CN_Stock' as const, name: 'bench', region: 'CN' as const, category: 'equity', symbol_count: symbols.length, symbols: symbols.map((s) => s.symbol) }),
    getCandles: async (q: CandleQuery) => synth(q),
    getExFactors: async (refs: SymbolRef[]) => new Map(refs.map((r) => [r.symbol, []])),
  };
}

async function pgReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

async function benchMarketDay(): Promise<void> {
  const n = QUICK ? 500 : 5000;
  const symbols = symbolsOf(n);
  const days = tradingDaysBetween('CN', '2026-09-15', '2026-10-30');
  const dates = days.slice(-(QUICK ? 5 : 15));
  const rounds = QUICK ? 2 : 4;
  const config = loadDefaultConfig();
  config.routing.markets = { CN: ['bench'], HK: ['bench'], US: ['bench'] };
  const rows: string[] = [];
  const stores: { backend: 'sqlite' | 'postgres'; store: HistoryStore }[] = [];
  for (const backend of ['sqlite', 'postgres'] as const) {
    if (backend === 'postgres' && !(await pgReachable())) {
      log(`PostgreSQL at ${DATABASE_URL} does not answer: skipped`);
      continue;
    }
    const store = await openStore(backend, 'market');
    const t0 = performance.now();
    const bars = await fill(store, symbols, '1d', days[0], days.at(-1)!);
    log(`${backend}: filled ${n} symbols × ${days.length} days (${bars} bars) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    stores.push({ backend, store });
  }
  const exportDir = join(dir, 'market-export');
  await exportHistory({ store: stores[0].store, out: exportDir, periods: ['1d'], format: 'parquet', chain: () => ['bench'] });
  const p50s = new Map<string, number>();
  for (const adjust of ['none', 'forward']) {
    // The backends take turns request by request, so a change in the machine's load falls on both.
    const times = new Map<string, number[]>(stores.map(({ backend }) => [backend, []]));
    for (let r = 0; r < rounds; r++) {
      // A new app each round: empty memory tiers and response cache, the same (warm) store.
      const apps = [];
      for (const { backend, store } of stores) {
        const app = await buildApp({ config, keys: keys(), adapters: new Map([['bench', benchAdapter(symbols) as never]]), now, logger: false, history: store });
        await app.ready();
        apps.push({ backend, app });
      }
      for (const date of dates) {
        for (const { backend, app } of apps) {
          const t = performance.now();
          const res = await app.inject({ url: `/v1/klines/market?universe=CN_Stock&date=${date}&adjust=${adjust}`, headers: { 'x-api-key': KEY } });
          const ms = performance.now() - t;
          if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body.slice(0, 300)}`);
          const answered = (res.json() as { data: { symbol: string[] } }).data.symbol.length;
          if (answered !== n) throw new Error(`${date}: ${answered} of ${n} symbols`);
          // The first round warms the store's hot blocks and the JIT.
          if (r > 0) times.get(backend)!.push(ms);
        }
      }
      for (const { app } of apps) await app.close();
    }
    for (const { backend } of stores) {
      const p50 = median(times.get(backend)!);
      p50s.set(`${backend}|${adjust}`, p50);
      rows.push(`| ${backend}, adjust=${adjust} | ${p50.toFixed(1)} | ${times.get(backend)!.length} |`);
      headlines.push({ suite: 'market-day-export', figure: `market day, ${n} symbols, ${backend}, adjust=${adjust}: p50 ms`, value: p50.toFixed(1), target: '≤ 100', pass: p50 <= 100 });
    }
  }
  for (const { backend, store } of stores) {
    await store.close();
    if (backend === 'postgres') await dropPostgresSchema(DATABASE_URL, `bench_market_${process.pid}`);
  }
  // DuckDB: the same day from the exported files.
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const date of dates) {
      const t = performance.now();
      const result = await duck.runAndReadAll(`SELECT * FROM read_parquet('${exportDir}/**/*.parquet', hive_partitioning = true) WHERE timestamp = to_timestamp(${localMidnight('CN', date) / 1000})`);
      const ms = performance.now() - t;
      if (result.currentRowCount !== n) throw new Error(`DuckDB read ${result.currentRowCount} rows for ${date}`);
      if (r > 0) times.push(ms);
    }
  }
  duck.closeSync();
  rows.push(`| DuckDB read_parquet of the exported files (hive_partitioning) | ${median(times).toFixed(1)} | ${times.length} |`);
  log(`\n## market day: ${n} symbols, one date (1d), from a warm store`);
  log('| source | p50 ms | requests |');
  log('|---|---:|---:|');
  for (const row of rows) log(row);
  for (const adjust of ['none', 'forward']) {
    const pg = p50s.get(`postgres|${adjust}`);
    const lite = p50s.get(`sqlite|${adjust}`);
    if (pg !== undefined && lite !== undefined) log(`| PostgreSQL ÷ SQLite, adjust=${adjust} | ${(pg / lite).toFixed(2)} | |`);
  }
}

try {
  if (part === 'export' || part === 'both') await benchExport();
  if (part === 'market' || part === 'both') await benchMarketDay();
  reportHeadlines(headlines);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
