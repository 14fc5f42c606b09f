// Cache-hit cost against a bare server, measured with wrk (issue 15; docs/architecture.md#quality-bars). One run, side
// by side, rounds rotating the order: a bare node:http server and a minimal Fastify app sending
// the service's captured bytes, the service at its shipped log level (info) and at warn, and, with
// BENCH_BEFORE=<checkout>, the same service at an earlier commit (before/after in one run), at
// BENCH_BEFORE_LEVEL (default info, the shipped level).
//   node bench/suites/cache-hit.ts            (BENCH_ROUNDS=3, BENCH_SECONDS=4, BENCH_WARMUP=3, BENCH_CONNECTIONS=100)
// Prints, per scenario and pipelining depth: requests/s, the ratio to bare (median and range over
// rounds), server CPU µs per request and bare's ÷ it (steady where req/s swings with the VM's stolen
// time), and wrk's own CPU (its headroom: it must stay under 0.8 cores).
// BENCH_QUICK=1: 1 round of 1 s + 1 s at pipelining 1 (~40 s), a smoke test. Before/after the way
// issue 23 asks it (alternated pairs, each side against its own bare): bench/suites/cache-hit-before-after.ts.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { captureHit, type CapturedResponse } from '../lib/capture.ts';
import { BENCH_KEY, freePort, pinned, startBare, startService, type Child } from '../lib/processes.ts';
import { envNumber, QUICK, reportHeadlines, type Headline } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import { ensureWrk, runWrk, type WrkResult } from '../lib/wrk.ts';

// One core each: the server under test on CPU 1, wrk on CPU 0 (BENCH_PIN=0 lets them float).
process.env.BENCH_PIN ??= '1';
const ROUNDS = envNumber('BENCH_ROUNDS', 3, 1);
const SECONDS = envNumber('BENCH_SECONDS', 4, 1);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 100);
// Seconds of load before the measured run: a fresh process has a cold JIT and a small young generation.
const WARMUP = envNumber('BENCH_WARMUP', 3, 1);
const log = (line: string) => process.stdout.write(`${line}\n`);
// A US symbol: its market is closed most of the day here, so the hit stays fresh for the run.
const ALL_SCENARIOS = [
  { name: 'quote', path: '/v1/quotes?symbols=AAPL.US' },
  { name: '1000 daily candles', path: '/v1/klines?symbol=AAPL.US&count=1000&adjust=none' },
];
// Narrowing for experiments: BENCH_ONLY=quote, BENCH_PIPELINES=1, BENCH_NODE_FLAGS="--single-threaded-gc".
const SCENARIOS = ALL_SCENARIOS.filter((s) => process.env.BENCH_ONLY === undefined || s.name.startsWith(process.env.BENCH_ONLY));
const PIPELINES = (process.env.BENCH_PIPELINES ?? (QUICK ? '1' : '1,10')).split(',').map(Number);
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');

async function startMinimalFastify(response: CapturedResponse): Promise<Child> {
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-minimal-'));
  const file = join(dir, 'response.json');
  writeFileSync(file, JSON.stringify({ status: response.status, headers: response.headers, body: response.body.toString('base64') }));
  const port = await freePort();
  const child = spawn(...pinned(1, [process.execPath, fileURLToPath(new URL('../servers/minimal-fastify.ts', import.meta.url)), file, String(port)]), { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      await (await fetch(url)).arrayBuffer();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    name: 'minimal-fastify', pid: child.pid!, port, url,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

ensureWrk();
const headers = { 'x-api-key': BENCH_KEY };
// Every server is a fresh process in every round: one process can land on a better or worse JIT
// and memory layout for a whole run (seen as ±20 % between otherwise identical processes), so a
// server's figure is the median over ROUNDS processes, not over rounds of one process.
type Starter = { label: string; start: (hit: CapturedResponse) => Promise<Child> };
const starters: Starter[] = [
  { label: 'bare node:http', start: (hit) => startBare(hit) },
  { label: 'minimal Fastify', start: (hit) => startMinimalFastify(hit) },
  { label: 'service (info)', start: () => startService({ nodeArgs: NODE_FLAGS, env: { LOG_LEVEL: 'info', MDQS__history__enabled: 'false' } }) },
  { label: 'service (warn)', start: () => startService({ nodeArgs: NODE_FLAGS, env: { LOG_LEVEL: 'warn', MDQS__history__enabled: 'false' } }) },
];
if (process.env.BENCH_BEFORE) {
  const beforeLevel = process.env.BENCH_BEFORE_LEVEL ?? 'info';
  starters.push({ label: `before (${process.env.BENCH_BEFORE_LABEL ?? 'earlier commit'}, ${beforeLevel})`, start: () => startService({ root: process.env.BENCH_BEFORE, env: { LOG_LEVEL: beforeLevel, MDQS__history__enabled: 'false' } }) });
}
const rows: string[] = [];
const headlines: Headline[] = [];
// The targets for the service at its shipped level (info), with and without pipelining.
const TARGETS: Record<string, number> = { quote: 0.9, '1000 daily candles': 0.92 };
for (const scenario of SCENARIOS) {
  // The bytes the baselines send: the service's own answer, captured once.
  const probe = await starters[2].start(undefined as never);
  const hit = await captureHit(`${probe.url}${scenario.path}`, headers);
  await probe.stop();
  for (const pipeline of PIPELINES) {
    log(`\n${scenario.name} (${hit.body.length} bytes), pipelining ${pipeline}: ${ROUNDS} rounds × ${SECONDS} s, wrk -t1 -c${CONNECTIONS}, fresh processes each round`);
    const results = new Map<string, WrkResult[]>();
    for (let round = 0; round < ROUNDS; round++) {
      const order = starters.map((_, i) => starters[(i + round) % starters.length]);
      for (const starter of order) {
        const child = await starter.start(hit);
        try {
          // A service answers the first request with a miss: warm it (and the JIT) before measuring.
          if (starter.label !== 'bare node:http' && starter.label !== 'minimal Fastify') await captureHit(`${child.url}${scenario.path}`, headers);
          await runWrk(`${child.url}${scenario.path}`, { seconds: WARMUP, connections: CONNECTIONS, pipeline, headers, serverPid: child.pid });
          const result = await runWrk(`${child.url}${scenario.path}`, { seconds: SECONDS, connections: CONNECTIONS, pipeline, headers, serverPid: child.pid });
          if (result.non2xx > 0 || result.errors > 0) log(`  ! ${starter.label}: ${result.non2xx} non-2xx, ${result.errors} socket errors`);
          results.set(starter.label, [...(results.get(starter.label) ?? []), result]);
        } finally {
          await child.stop();
        }
      }
    }
    const bareRuns = results.get('bare node:http')!;
    const bareRps = bareRuns.map((r) => r.requestsPerSecond);
    for (const { label } of starters) {
      const runs = results.get(label)!;
      const ratios = runs.map((r, i) => r.requestsPerSecond / bareRps[i]);
      // CPU per request does not move with the VM's stolen time the way req/s does: bare's µs ÷ this server's.
      const cpuRatios = runs.map((r, i) => bareRuns[i].serverCpuUs / r.serverCpuUs);
      const row = `| ${scenario.name} | ${pipeline} | ${label} | ${Math.round(median(runs.map((r) => r.requestsPerSecond)))} | ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) | ${median(runs.map((r) => r.serverCpuUs)).toFixed(1)} | ${median(cpuRatios).toFixed(2)} | ${Math.max(...runs.map((r) => r.generatorCores)).toFixed(2)} |`;
      rows.push(row);
      log(row);
      if (label === 'service (info)' || label.startsWith('before')) {
        const target = label === 'service (info)' ? TARGETS[scenario.name] : undefined;
        headlines.push({
          suite: 'cache hit', figure: `${scenario.name}, pipelining ${pipeline}: ${label} ÷ bare node:http, req/s (bare CPU ÷ its CPU), median of ${ROUNDS}`,
          value: `${median(ratios).toFixed(2)} (${median(cpuRatios).toFixed(2)})`,
          ...(target === undefined ? {} : { target: `≥ ${target.toFixed(2)}`, pass: median(ratios) >= target }),
        });
      }
    }
  }
}
log('\n| scenario | pipelining | server | req/s (median) | ÷ bare: median (range) of rounds | server CPU µs/req | bare CPU µs ÷ this (median) | wrk cores (max) |');
log('|---|---|---|---|---|---|---|---|');
for (const row of rows) log(row);
reportHeadlines(headlines);
