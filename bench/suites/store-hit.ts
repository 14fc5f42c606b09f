// A window inside stored history against a memory hit of the same rows (issue 30): five years of
// daily bars for one symbol are filled into the candle store, then random windows of ~220 bars
// inside them are asked for. Two parts, per backend (SQLite, and PostgreSQL when DATABASE_URL or
// postgres://postgres@127.0.0.1:5432/test answers; a schema of its own, dropped at the end):
//
//   1. Store reads in-process: the history tier answering the service's raw query for each window
//      (what /v1/klines asks the store for: start_time − 20 days, end_time, count + 2) with its hot
//      blocks in memory (as shipped) and with that cache off (every window one statement, every
//      block's checksum verified), against a bare query of the same blocks (node:sqlite, or one pg
//      client: the blobs, nothing decoded) in the same run, passes alternated. Windows/s and bars/s
//      by wall time, and CPU µs per window of this process (process.cpuUsage; for PostgreSQL the
//      server's own CPU is not in it).
//   2. Over HTTP: the service (bench/servers/store-hit-server.ts, a child process with a fresh
//      store) answering /v1/klines for each window three ways, one after the other so a slow
//      moment hits all three: a store hit (a window never asked before: the memory tier misses,
//      the store answers), a memory-tier hit of the same rows (the same window with the other
//      adjustment, forward/backward swapped every pair: the raw window is then in the memory tier,
//      the response is built anew), and a response-cache hit (the store hit's URL again). p50/p90
//      of each and the p50 ratios; no vendor call may happen after the fill (checked on /metrics).
//      Run with the store's hot-block cache as shipped and with it off (a service of its own each).
//
//   node bench/suites/store-hit.ts [--backend sqlite|postgres|both] [--windows 300] [--rounds 5]
//   BENCH_CPU_PROF=<dir>: the HTTP part's service writes a .cpuprofile there
import { mkdtempSync, rmSync } from 'node:fs';
import { request, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import type { CandleQuery } from '../../adapters/types.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { SymbolRef } from '../../src/domain.ts';
import { localMidnight } from '../../src/markets/calendar.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { baseFetchFor } from '../../src/service/candle-plan.ts';
import { blockOf } from '../../src/store/blocks.ts';
import { openHistoryStore } from '../../src/store/index.ts';
import { labelsIn } from '../../src/store/labels.ts';
import { dropPostgresSchema } from '../../src/store/postgres.ts';
import { BENCH_KEY, startService } from '../lib/processes.ts';
import { QUICK, reportHeadlines } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import { table } from '../lib/table.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const WINDOWS = Number(arg('windows', QUICK ? '60' : '300'));
const ROUNDS = Number(arg('rounds', QUICK ? '2' : '5'));
const WANT = arg('backend', 'both');
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SYMBOL = '600519.SH';
const REF = parseSymbol(SYMBOL) as SymbolRef;
/** Bars of a window, and the client's count (larger: the window's start cuts it, not the count). */
const SPAN = 220;
const COUNT = 1000;
const DAY_MS = 86_400_000;

const log = (line: string) => process.stdout.write(`${line}\n`);
const f1 = (x: number) => x.toFixed(1);
const f2 = (x: number) => x.toFixed(2);
const pct = (xs: readonly number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

let seed = 30;
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

/** `n` distinct windows of SPAN labels inside `labels` (leaving the first 30 for the look-back). */
function windows(labels: readonly number[], n: number): { start: number; end: number }[] {
  const used = new Set<number>();
  const out: { start: number; end: number }[] = [];
  while (out.length < n && used.size < labels.length - SPAN - 30) {
    const s = 30 + Math.floor(rand() * (labels.length - SPAN - 30));
    if (used.has(s)) continue;
    used.add(s);
    out.push({ start: labels[s], end: labels[s + SPAN - 1] });
  }
  return out;
}

async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// 1. Store reads in-process

type Side = 'tier' | 'cold' | 'bare';

interface ReadFigures {
  backend: string;
  windowsPerS: Record<Side, number>;
  barsPerS: number;
  cpuUs: Record<Side, number>;
  bars: number;
  vendorCalls: number;
}

async function storeReads(backend: 'sqlite' | 'postgres'): Promise<ReadFigures> {
  // Saturday: no bar forming, the store answers every window alone.
  const NOW = Date.parse('2026-11-21T12:00:00Z');
  const now = () => NOW;
  const sim = createSimAdapter({}, { now });
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-store-hit-'));
  const schema = `store_hit_${process.pid}`;
  if (backend === 'postgres') await dropPostgresSchema(DATABASE_URL, schema);
  const open = (blockCacheBytes?: number) => openHistoryStore({
    backend, sqlitePath: join(dir, 'history.sqlite'), databaseUrl: DATABASE_URL, postgresSchema: schema, now,
    revision: { dailyBars: 2, minuteBars: 30 }, retentionDays: { '1m': 0, '1d': 0 }, blockCacheBytes,
  });
  const tier = await open();
  /** The same store without hot blocks: every window one statement. */
  const cold = await open(0);
  let vendorCalls = 0;
  const fetchRange = async (q: CandleQuery) => {
    vendorCalls += 1;
    return sim.getCandles(q);
  };
  const labels = labelsIn('CN', '1d', localMidnight('CN', '2021-11-22'), localMidnight('CN', '2026-11-20'));
  await tier.candles('sim', { symbol: REF, period: '1d', start: labels[0], end: labels[labels.length - 1], count: 60_000 }, fetchRange);
  const filled = vendorCalls;
  const queries: CandleQuery[] = windows(labels, WINDOWS).map((w) => {
    const base = baseFetchFor('1d', { start: w.start, end: w.end, count: COUNT });
    return { symbol: REF, period: base.period, start: base.start, end: base.end, count: base.count };
  });

  // The bare side: the same blocks, by the same index, on a connection of its own.
  let bare: (q: CandleQuery) => Promise<number>;
  let closeBare: () => Promise<void>;
  if (backend === 'sqlite') {
    const db = new DatabaseSync(join(dir, 'history.sqlite'), { readOnly: true });
    const id = (db.prepare("SELECT id FROM series WHERE adapter = 'sim' AND symbol = ? AND period = '1d'").get(SYMBOL) as { id: number }).id;
    const st = db.prepare('SELECT data FROM blocks WHERE series = ? AND block BETWEEN ? AND ? ORDER BY block');
    bare = async (q) => st.all(id, blockOf('1d', q.start as number), blockOf('1d', q.end as number)).length;
    closeBare = async () => db.close();
  } else {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    const id = (await client.query(`SELECT id FROM "${schema}".series WHERE adapter = 'sim' AND symbol = $1 AND period = '1d'`, [SYMBOL])).rows[0].id as number;
    const sql = `SELECT data FROM "${schema}".blocks WHERE series = $1 AND block BETWEEN $2 AND $3 ORDER BY block`;
    bare = async (q) => (await client.query(sql, [id, blockOf('1d', q.start as number), blockOf('1d', q.end as number)])).rows.length;
    closeBare = () => client.end();
  }

  let bars = 0;
  const pass = async (side: Side) => {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let n = 0;
    for (const q of queries) {
      if (side === 'bare') await bare(q);
      else n += (await (side === 'tier' ? tier : cold).candles('sim', q, fetchRange))?.timestamp.length ?? 0;
    }
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (side === 'tier') bars = n;
    return { perS: (queries.length * 1000) / ms, cpuUs: (cpu.user + cpu.system) / queries.length };
  };
  const sides: Side[] = ['tier', 'cold', 'bare'];
  for (const side of sides) await pass(side);
  const runs: Record<Side, { perS: number; cpuUs: number }[]> = { tier: [], cold: [], bare: [] };
  for (let r = 0; r < ROUNDS; r++) {
    // Each round in another order, so no side always runs after the same one.
    const order = [...sides.slice(r % 3), ...sides.slice(0, r % 3)];
    for (const side of order) runs[side].push(await pass(side));
  }
  await closeBare();
  await tier.close();
  await cold.close();
  if (backend === 'postgres') await dropPostgresSchema(DATABASE_URL, schema);
  rmSync(dir, { recursive: true, force: true });
  const of = (side: Side, f: 'perS' | 'cpuUs') => median(runs[side].map((x) => x[f]));
  return {
    backend,
    windowsPerS: { tier: of('tier', 'perS'), cold: of('cold', 'perS'), bare: of('bare', 'perS') },
    barsPerS: (of('tier', 'perS') * bars) / queries.length,
    cpuUs: { tier: of('tier', 'cpuUs'), cold: of('cold', 'cpuUs'), bare: of('bare', 'cpuUs') },
    bars: bars / queries.length,
    vendorCalls: vendorCalls - filled,
  };
}

// ---------------------------------------------------------------------------------------------
// 2. Over HTTP

interface HttpFigures {
  backend: string;
  cache: boolean;
  ms: { store: number[]; memory: number[]; response: number[] };
  bars: number;
  vendorCallsAfterFill: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function get(port: number, path: string): Promise<{ status: number; body: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { 'x-api-key': BENCH_KEY } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function fillCalls(metrics: string): number {
  let n = 0;
  for (const line of metrics.split('\n')) if (line.startsWith('mdqs_history_fill_requests_total{')) n += Number(line.split(' ').pop());
  return n;
}

async function overHttp(backend: 'sqlite' | 'postgres', cache: boolean): Promise<HttpFigures> {
  const schema = `store_hit_http_${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-store-hit-http-'));
  if (backend === 'postgres') await dropPostgresSchema(DATABASE_URL, schema);
  const service = await startService({
    entry: 'bench/servers/store-hit-server.ts',
    env: {
      MDQS__history__backend: backend,
      ...(backend === 'postgres' ? { DATABASE_URL, STORE_HIT_PG_SCHEMA: schema } : { MDQS__history__sqlitePath: join(dir, 'history.sqlite') }),
      LOG_LEVEL: 'info',
      ...(cache ? {} : { STORE_HIT_BLOCK_CACHE_BYTES: '0' }),
    },
    nodeArgs: process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [],
  });
  try {
    // Five years up to last Friday's close (the clock is real here: the newest bars are left out,
    // so no window reaches the revision window or a forming bar).
    const today = new Date().toISOString().slice(0, 10);
    const hi = localMidnight('CN', today) - 7 * DAY_MS;
    const labels = labelsIn('CN', '1d', hi - 5 * 365 * DAY_MS, hi);
    const path = (w: { start: number; end: number }, adjust: string) =>
      `/v1/klines?symbol=${SYMBOL}&period=1d&start_time=${w.start}&end_time=${w.end}&count=${COUNT}&adjust=${adjust}`;
    const fill = await get(service.port, `/v1/klines?symbol=${SYMBOL}&period=1d&start_time=${labels[0] - 30 * DAY_MS}&end_time=${labels[labels.length - 1]}&count=1500&adjust=none`);
    if (fill.status !== 200) throw new Error(`fill: ${fill.status} ${fill.body.slice(0, 300)}`);
    // Warm-up on windows not measured: the route, the ex-factors, the JIT.
    for (const w of windows(labels, 20)) {
      await get(service.port, path(w, 'forward'));
      await get(service.port, path(w, 'backward'));
    }
    const before = fillCalls((await get(service.port, '/metrics')).body);
    const ms = { store: [] as number[], memory: [] as number[], response: [] as number[] };
    let bars = 0;
    const list = windows(labels, WINDOWS);
    for (let i = 0; i < list.length; i++) {
      const [first, second] = i % 2 === 0 ? ['forward', 'backward'] : ['backward', 'forward'];
      const store = await get(service.port, path(list[i], first));
      if (store.status !== 200) throw new Error(`store hit: ${store.status} ${store.body.slice(0, 300)}`);
      bars += (JSON.parse(store.body) as { data: { timestamp: number[] } }).data.timestamp.length;
      // The other two in alternating order, so neither always follows the store hit.
      const memory = () => get(service.port, path(list[i], second));
      const response = () => get(service.port, path(list[i], first));
      let m: { ms: number };
      let r: { ms: number };
      if (i % 4 < 2) {
        m = await memory();
        r = await response();
      } else {
        r = await response();
        m = await memory();
      }
      ms.store.push(store.ms);
      ms.memory.push(m.ms);
      ms.response.push(r.ms);
    }
    const after = fillCalls((await get(service.port, '/metrics')).body);
    return { backend, cache, ms, bars: bars / list.length, vendorCallsAfterFill: after - before };
  } finally {
    await service.stop();
    if (backend === 'postgres') await dropPostgresSchema(DATABASE_URL, schema);
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------

const backends: ('sqlite' | 'postgres')[] = WANT === 'both' ? ['sqlite', 'postgres'] : [WANT as 'sqlite' | 'postgres'];
const pgUp = backends.includes('postgres') ? await postgresAvailable() : false;
const run = backends.filter((b) => b === 'sqlite' || pgUp);
if (backends.includes('postgres') && !pgUp) log(`PostgreSQL at ${DATABASE_URL} does not answer: its rows are skipped`);

const reads: ReadFigures[] = [];
const http: HttpFigures[] = [];
for (const backend of run) {
  reads.push(await storeReads(backend));
  http.push(await overHttp(backend, true));
  http.push(await overHttp(backend, false));
}

log(`store-hit bench: ${WINDOWS} windows of ${SPAN} daily bars (count ${COUNT}) inside five years of ${SYMBOL}, ${ROUNDS} alternated rounds in-process\n`);
log('1. store reads in-process (the tier answering the service\'s raw query vs a bare query of the same blocks)\n');
log(table(['backend', 'bars a window', 'tier windows/s (bars/s)', 'no hot blocks windows/s', 'bare query windows/s', 'time ÷ bare: tier, no hot blocks', 'CPU µs/window: tier, no hot blocks, bare', 'vendor calls'], reads.map((r) => [
  r.backend, f1(r.bars), `${f1(r.windowsPerS.tier)} (${Math.round(r.barsPerS)})`, f1(r.windowsPerS.cold), f1(r.windowsPerS.bare),
  `${f2(r.windowsPerS.bare / r.windowsPerS.tier)}, ${f2(r.windowsPerS.bare / r.windowsPerS.cold)}`,
  `${f1(r.cpuUs.tier)}, ${f1(r.cpuUs.cold)}, ${f1(r.cpuUs.bare)}`, String(r.vendorCalls),
])));
log('\n2. over HTTP, one connection, requests in sequence (ms)\n');
log(table(['backend', 'hot blocks', 'bars', 'store hit p50 / p90', 'memory-tier hit p50 / p90', 'response-cache hit p50 / p90', 'store ÷ memory (p50)', 'target', 'vendor calls after fill'], http.map((h) => {
  const ratio = pct(h.ms.store, 50) / pct(h.ms.memory, 50);
  return [
    h.backend, h.cache ? 'on' : 'off', f1(h.bars), `${f2(pct(h.ms.store, 50))} / ${f2(pct(h.ms.store, 90))}`, `${f2(pct(h.ms.memory, 50))} / ${f2(pct(h.ms.memory, 90))}`,
    `${f2(pct(h.ms.response, 50))} / ${f2(pct(h.ms.response, 90))}`, f2(ratio), h.cache ? (h.backend === 'sqlite' ? '≤ 1.5' : '≤ 2') : '(recorded)', String(h.vendorCallsAfterFill),
  ];
})));
reportHeadlines([
  ...reads.map((r) => ({
    suite: 'store hit', figure: `${r.backend}: store reads, windows/s (bars/s) in-process; time ÷ a bare query of the blocks (no hot blocks)`,
    value: `${f1(r.windowsPerS.tier)} (${Math.round(r.barsPerS)}); ${f2(r.windowsPerS.bare / r.windowsPerS.tier)} (${f2(r.windowsPerS.bare / r.windowsPerS.cold)})`,
  })),
  ...http.map((h) => {
    const ratio = pct(h.ms.store, 50) / pct(h.ms.memory, 50);
    const limit = h.backend === 'sqlite' ? 1.5 : 2;
    // The target is the service's as shipped (hot blocks on); without them the figure is recorded.
    return {
      suite: 'store hit', figure: `${h.backend}${h.cache ? '' : ', no hot blocks'}: HTTP p50 store hit ÷ memory-tier hit, same rows`,
      value: f2(ratio), ...(h.cache ? { target: `≤ ${limit}`, pass: ratio <= limit && h.vendorCallsAfterFill === 0 } : {}),
    };
  }),
]);
