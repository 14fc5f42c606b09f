// `npm run bench:design`: the earlier autocannon suite of docs/architecture.md#quality-bars (coalescing, batching, memory soak) against the real service; `npm run bench:hit` is the wrk cache-hit bench (bench/suites/cache-hit.ts).
// Knobs (environment):
//   BENCH_PAIRS (5)            quiet bare/service pairs per throughput scenario
//   BENCH_WARMUP (1), BENCH_SECONDS (5)   seconds of warm-up and of measurement per round
//   BENCH_MAX_FOREIGN_CPU (0.1)           a round is noisy above this share of CPU used by others
//   BENCH_SOAK_SECONDS (15), BENCH_SOAK_CONNECTIONS (32), BENCH_SOAK_ALL (1: add variant C)
//   BENCH_ONLY (throughput,coalescing,soak)
//   BENCH_CPU_PROF (a directory: the throughput service writes a .cpuprofile there)
//   BENCH_PIN (1: autocannon on CPU 0, the servers on CPU 1, with taskset)
//   BENCH_JSON (a file: the raw results)
import { cpus, totalmem } from 'node:os';
import { writeFileSync } from 'node:fs';
import { runCoalescing, type CoalescingRow } from './coalescing.ts';
import { pinLoadGenerator, startService } from '../lib/processes.ts';
import { int, table } from '../lib/table.ts';
import { simMemory } from '../diagnostics/sim-memory.ts';
import { mib, runSoak, type SoakResult, type SoakVariant } from '../lib/random-key-soak.ts';
import { runThroughput, type ThroughputResult, type ThroughputScenario } from '../lib/autocannon-throughput.ts';

const env = (name: string, fallback: number) => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const only = new Set((process.env.BENCH_ONLY ?? 'throughput,coalescing,soak').split(','));
const log = (line: string) => process.stdout.write(`${line}\n`);

const SCENARIOS: ThroughputScenario[] = [
  { name: 'cache-hit quote (key + rate limit)', path: '/v1/quotes?symbols=600519.SH', resource: 'quotes', target: 0.75 },
  { name: 'cache-hit 1000 candles', path: '/v1/klines?symbol=600519.SH&count=1000', resource: 'candles', target: 0.9 },
];

async function throughput(): Promise<ThroughputResult[]> {
  const cpuProf = process.env.BENCH_CPU_PROF;
  const service = await startService({ nodeArgs: cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : [] });
  log(`service pid ${service.pid} on ${service.url} (node src/server.ts, LOG_LEVEL=warn)`);
  const results: ThroughputResult[] = [];
  try {
    for (const scenario of SCENARIOS) {
      log(`\n${scenario.name}: GET ${scenario.path}`);
      results.push(await runThroughput(service, scenario, {
        pairs: env('BENCH_PAIRS', 5), maxForeignCpu: env('BENCH_MAX_FOREIGN_CPU', 0.1), warmupSeconds: env('BENCH_WARMUP', 1), seconds: env('BENCH_SECONDS', 5), log,
      }));
    }
  } finally {
    await service.stop();
  }
  return results;
}

function throughputTable(results: ThroughputResult[]): string {
  const ms = (r: { p50: number; p99: number }) => `${r.p50} / ${r.p99}`;
  return table(
    ['scenario', 'body', 'service req/s', 'bare req/s', 'ratio (median)', 'per-pair ratios', 'target', 'result', 'ratio per server CPU', 'autocannon-bound rounds', 'service p50/p99 ms', 'bare p50/p99 ms', 'hit share'],
    results.map((r) => [
      r.scenario.name, `${int(r.bodyBytes)} B`, int(r.service.reqPerSec), int(r.bare.reqPerSec), r.ratio.toFixed(3),
      r.rounds.map((p) => `${p.ratio.toFixed(3)}${p.quiet ? '' : '*'}`).join(', '), `≥ ${r.scenario.target.toFixed(2)}`,
      `${r.ratio >= r.scenario.target ? 'PASS' : 'FAIL'}${r.noisy ? ' (noisy)' : ''}`, r.cpuRatio.toFixed(3),
      `${r.generatorBound} / ${2 * r.rounds.filter((p) => p.quiet || r.noisy).length}`, ms(r.service), ms(r.bare),
      `${((100 * r.hits) / Math.max(1, r.hits + r.misses)).toFixed(3)} %`,
    ]),
  );
}

function coalescingTable(rows: CoalescingRow[]): string {
  return table(['scenario', 'upstream calls', 'expected', 'result', 'detail'],
    rows.map((r) => [r.name, String(r.calls), String(r.expected), r.pass ? 'PASS' : 'FAIL', r.detail]));
}

const MIB = 1048576;
// A is the soak as specified (npm start's server). B isolates the service: the sim adapter's own
// memos are filled before it listens (bench/servers/soak-server.ts). C (BENCH_SOAK_ALL=1): B, 4 MiB bounds.
const SOAK_VARIANTS: SoakVariant[] = [
  { name: 'A: 5000 symbols, src/server.ts', universe: 5000, cacheBytes: 16 * MIB },
  { name: 'B: 500 symbols, sim memos filled first', universe: 500, cacheBytes: 16 * MIB, primedSim: true },
  ...(process.env.BENCH_SOAK_ALL === '1' ? [{ name: 'C: as B, 4 MiB bounds', universe: 500, cacheBytes: 4 * MIB, primedSim: true }] : []),
];

/** Retained growth after a full GC (heap + external) must fit the configured bounds. */
const retainedGrowth = (s: SoakResult) => s.end.heapUsed + s.end.external - s.baseline.heapUsed - s.baseline.external;
const flat = (s: SoakResult) => s.secondHalfMax <= s.firstHalfMax * 1.1;

function soakTable(results: SoakResult[]): string {
  const grow = (s: SoakResult, key: 'heapUsed' | 'external' | 'dataCacheBytes' | 'responseCacheBytes') => mib(s.end[key] - s.baseline[key]);
  return table(
    ['variant', 'cache bounds', 'req/s', 'statuses (process lifetime)', 'baseline RSS', 'max RSS', 'max − baseline − bounds', 'RSS max 1st / 2nd half', 'peak heapUsed', 'retained growth after GC: heap + external', 'accounted cache growth: data + response', 'retained ≤ bounds', 'RSS flat'],
    results.map((s) => [
      s.variant.name, `2 × ${mib(s.variant.cacheBytes)}`, s.load.reqPerSec.toFixed(1), s.statuses, mib(s.baseline.rss), mib(s.maxRss),
      mib(s.maxRss - s.baseline.rss - 2 * s.variant.cacheBytes), `${mib(s.firstHalfMax)} / ${mib(s.secondHalfMax)}`, mib(s.maxHeapUsed),
      `${mib(retainedGrowth(s))} = ${grow(s, 'heapUsed')} + ${grow(s, 'external')}`,
      `${mib(s.end.cacheBytes - s.baseline.cacheBytes)} = ${grow(s, 'dataCacheBytes')} + ${grow(s, 'responseCacheBytes')}`,
      retainedGrowth(s) <= 2 * s.variant.cacheBytes ? 'PASS' : 'FAIL', flat(s) ? 'PASS' : 'FAIL',
    ]),
  );
}

async function main(): Promise<void> {
  const pin = pinLoadGenerator();
  log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${mib(totalmem())} RAM; ${pin ? 'autocannon pinned to CPU 0, servers to CPU 1' : 'the servers and autocannon share these cores'}`);
  const out: Record<string, unknown> = { node: process.version, cpus: cpus().length, pinned: pin, startedAt: new Date().toISOString() };
  const sections: string[] = [];

  if (only.has('throughput')) {
    const results = await throughput();
    out.throughput = results;
    sections.push(`Cache-hit throughput (autocannon -c 100 -p 10, ${env('BENCH_WARMUP', 1)} s warm-up + ${env('BENCH_SECONDS', 5)} s measured per round, bare/service in ABBA order; * = noisy pair, other processes used > ${100 * env('BENCH_MAX_FOREIGN_CPU', 0.1)} % of the CPU, left out of the median):\n${throughputTable(results)}`);
  }
  if (only.has('coalescing')) {
    log('\ncoalescing and batching (in-process buildApp, sim latency 200 ms, counted at the adapter):');
    const rows = await runCoalescing({ latencyMs: 200, log });
    out.coalescing = rows;
    sections.push(`Upstream calls for cold requests:\n${coalescingTable(rows)}`);
  }
  if (only.has('soak')) {
    const seconds = env('BENCH_SOAK_SECONDS', 15);
    const results: SoakResult[] = [];
    for (const variant of SOAK_VARIANTS) {
      log(`\nrandom-key soak ${variant.name}, cache bounds 2 × ${mib(variant.cacheBytes)}:`);
      results.push(await runSoak(variant, { seconds, connections: env('BENCH_SOAK_CONNECTIONS', 32), log }));
    }
    const sim = await simMemory();
    out.soak = { results, sim };
    sections.push(`Random-key soak (${seconds} s each, ${env('BENCH_SOAK_CONNECTIONS', 32)} connections, RSS from /proc/<pid>/status; retained = heap + external after a forced full GC, end minus baseline):\n${soakTable(results)}\n\nThe sim adapter runs inside the service process. Measured in-process, it retains ${mib(sim.first200)} after quoting 200 fresh symbols (its 64-history LRU) and ${(sim.perSymbol / 1024).toFixed(1)} KiB per further symbol (tails, up to 20,000); in A that lands on top of the service's caches.`);
  }

  log(`\n${'='.repeat(40)} results\n`);
  log(sections.join('\n\n'));
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(out, null, 2));
}

main().catch((error) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
