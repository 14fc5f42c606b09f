// Candle history store benchmark (issue 9): clients page backwards and forwards through five years
// of daily and four weeks of minute bars for 50 symbols in random overlapping windows (random
// count, start_time, end_time, derived periods), with a restart of the store half-way. Runs
// directly against the tier with the sim adapter as the vendor, counting every vendor call.
//
//   node bench/suites/history-store.ts [--backend sqlite|postgres] [--requests 4000] [--seed 7]
//
// Reports vendor bars fetched ÷ distinct bars served, vendor calls ÷ client requests, bytes per
// stored bar, and the latency of a cold request (store filling from the vendor) against a warm
// one (answered from the store) and a direct vendor call. The clock is fixed on a Saturday, so no
// bar is forming (a forming bar costs one small vendor call per request by design).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CandleQuery } from '../../adapters/types.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { simPoolMembers } from '../../adapters/sim/instruments.ts';
import type { Period, SymbolRef } from '../../src/domain.ts';
import { localMidnight } from '../../src/markets/calendar.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { baseFetchFor } from '../../src/service/candle-plan.ts';
import { openHistoryStore, type HistoryStore } from '../../src/store/index.ts';
import { labelsIn } from '../../src/store/labels.ts';
import { dropPostgresSchema } from '../../src/store/postgres.ts';
import { QUICK, reportHeadlines } from '../lib/report.ts';
import { table } from '../lib/table.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const backend = arg('backend', 'sqlite') as 'sqlite' | 'postgres';
const REQUESTS = Number(arg('requests', QUICK ? '400' : '4000'));
let seed = Number(arg('seed', '7'));
const rand = () => {
  // mulberry32: reproducible windows for a given seed.
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

const NOW = Date.parse('2026-11-21T12:00:00Z');
const now = () => NOW;
const sim = createSimAdapter({}, { now });

// 50 symbols: 30 A-shares, 10 HK, 10 US.
const SYMBOLS: SymbolRef[] = [
  ...simPoolMembers('CN_Stock').slice(0, 30), ...simPoolMembers('HK_Stock').slice(0, 10), ...simPoolMembers('US_Stock').slice(0, 10),
].map((i) => parseSymbol(i.symbol) as SymbolRef);

const DAILY_PERIODS: Period[] = ['1d', '1d', '1w', '1M'];
const MINUTE_PERIODS: Period[] = ['1m', '5m', '15m', '60m'];

/** One client request: a period, a window kind and bounds inside the symbol's span. */
function clientRequest(): { symbol: SymbolRef; period: Period; window: { start?: number; end?: number; count: number } } {
  const symbol = pick(SYMBOLS);
  const daily = rand() < 0.6;
  const period = pick(daily ? DAILY_PERIODS : MINUTE_PERIODS);
  const labels = daily ? dailyLabels.get(symbol.region)! : minuteLabels.get(symbol.region)!;
  const kind = rand();
  const per = { '1d': 1, '1w': 5, '1M': 21, '1m': 1, '5m': 5, '15m': 15, '60m': 60 }[period as string] ?? 1;
  const maxCount = Math.max(5, Math.floor(labels.length / per / 3));
  const count = between(5, Math.min(500, maxCount));
  if (kind < 0.2) return { symbol, period, window: { count } };
  const endIndex = between(Math.floor(labels.length / 3), labels.length - 1);
  const end = labels[endIndex];
  if (kind < 0.6) return { symbol, period, window: { end, count } };
  const span = between(5, Math.min(endIndex, Math.floor(labels.length / 4)));
  return { symbol, period, window: { start: labels[endIndex - span], end, count: 10_000 } };
}

const dailyLabels = new Map<string, number[]>();
const minuteLabels = new Map<string, number[]>();
for (const region of ['CN', 'HK', 'US'] as const) {
  dailyLabels.set(region, labelsIn(region, '1d', localMidnight(region, '2021-11-22'), localMidnight(region, '2026-11-20')));
  minuteLabels.set(region, labelsIn(region, '1m', localMidnight(region, '2026-10-23'), localMidnight(region, '2026-11-21')));
}

let vendorCalls = 0;
let vendorBars = 0;
const fetchRange = async (q: CandleQuery) => {
  vendorCalls += 1;
  const out = await sim.getCandles(q);
  vendorBars += out?.timestamp.length ?? 0;
  return out;
};

const dir = mkdtempSync(join(tmpdir(), 'mdqs-history-bench-'));
const schema = `hist_bench_${process.pid}`;
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const open = () => openHistoryStore({
  backend, sqlitePath: join(dir, 'history.sqlite'), databaseUrl, postgresSchema: schema, now,
  revision: { dailyBars: 2, minuteBars: 30 }, retentionDays: { '1m': 0, '1d': 0 },
});

const served = new Set<string>();
let servedBars = 0;
const latency = { cold: [] as number[], warm: [] as number[] };

async function run(tier: HistoryStore, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const req = clientRequest();
    const base = baseFetchFor(req.period, req.window);
    const query: CandleQuery = { symbol: req.symbol, period: base.period, start: base.start, end: base.end, count: base.count };
    const callsBefore = vendorCalls;
    const t0 = performance.now();
    const out = await tier.candles('sim', query, fetchRange);
    const ms = performance.now() - t0;
    (vendorCalls > callsBefore ? latency.cold : latency.warm).push(ms);
    for (const t of out?.timestamp ?? []) served.add(`${req.symbol.symbol}|${base.period}|${t}`);
    servedBars += out?.timestamp.length ?? 0;
  }
}

async function directLatency(n: number): Promise<number[]> {
  const out: number[] = [];
  const fresh = createSimAdapter({}, { now });
  for (let i = 0; i < n; i++) {
    const req = clientRequest();
    const base = baseFetchFor(req.period, req.window);
    const t0 = performance.now();
    await fresh.getCandles({ symbol: req.symbol, period: base.period, start: base.start, end: base.end, count: base.count });
    out.push(performance.now() - t0);
  }
  return out;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const started = performance.now();
if (backend === 'postgres') await dropPostgresSchema(databaseUrl, schema);
let tier = await open();
await run(tier, REQUESTS / 2);
await tier.close();
// The restart: a new tier on the same file/schema, nothing in memory.
const callsBeforeRestart = vendorCalls;
tier = await open();
await run(tier, REQUESTS / 2);
const stats = await tier.stats();
await tier.close();
const direct = await directLatency(500);
const seconds = (performance.now() - started) / 1000;
if (backend === 'postgres') await dropPostgresSchema(databaseUrl, schema);
rmSync(dir, { recursive: true, force: true });

const f2 = (x: number) => x.toFixed(2);
process.stdout.write(`history store bench: backend ${backend}, ${SYMBOLS.length} symbols, ${REQUESTS} client requests (restart after ${REQUESTS / 2}), ${seconds.toFixed(1)} s\n\n`);
process.stdout.write(`${table(['figure', 'value'], [
  ['vendor bars fetched', String(vendorBars)],
  ['distinct bars served', String(served.size)],
  ['bars served (with repeats)', String(servedBars)],
  ['vendor bars fetched ÷ distinct bars served', vendorBars === 0 ? '-' : (vendorBars / served.size).toFixed(3)],
  ['vendor calls', String(vendorCalls)],
  ['vendor calls after the restart', String(vendorCalls - callsBeforeRestart)],
  ['vendor calls ÷ client requests', (vendorCalls / REQUESTS).toFixed(3)],
  ['stored bars', String(stats.bars)],
  ['covered ranges', String(stats.ranges)],
  ['store bytes', String(stats.bytes)],
  ['bytes per stored bar', (stats.bytes / Math.max(1, stats.bars)).toFixed(1)],
])}\n\n`);
const fetchedPerServed = vendorBars / Math.max(1, served.size);
reportHeadlines([
  { suite: 'history store', figure: `vendor bars fetched ÷ distinct bars served (${backend}, ${REQUESTS} requests)`, value: fetchedPerServed.toFixed(3), target: '≤ 1.05', pass: fetchedPerServed <= 1.05 },
  { suite: 'history store', figure: 'vendor calls ÷ client requests', value: (vendorCalls / REQUESTS).toFixed(3) },
]);
process.stdout.write(`${table(['request', 'n', 'p50 ms', 'p95 ms', 'p99 ms'], [
  ['cold (store fills from the vendor)', String(latency.cold.length), f2(pct(latency.cold, 50)), f2(pct(latency.cold, 95)), f2(pct(latency.cold, 99))],
  ['warm (answered from the store)', String(latency.warm.length), f2(pct(latency.warm, 50)), f2(pct(latency.warm, 95)), f2(pct(latency.warm, 99))],
  ['direct sim call, no store', String(direct.length), f2(pct(direct, 50)), f2(pct(direct, 95)), f2(pct(direct, 99))],
])}\n`);
