// Cache-hit cost against a bare server, measured with wrk (issue 15; DESIGN.md 7). One run, side
// by side, rounds rotating the order: a bare node:http server and a minimal Fastify app sending
// the service's captured bytes, the service at its shipped log level (info) and at warn, and, with
// BENCH_BEFORE=<checkout>, the same service at an earlier commit (before/after in one run).
//   node bench/hit.ts            (BENCH_ROUNDS=3, BENCH_SECONDS=4, BENCH_CONNECTIONS=100)
// Prints, per scenario and pipelining depth: requests/s, the ratio to bare, server CPU µs per
// request, and wrk's own CPU (its headroom: it must stay under 0.8 cores).
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { captureHit, type CapturedResponse } from './lib/capture.ts';
import { BENCH_KEY, freePort, startBare, startService, type Child } from './lib/processes.ts';
import { ensureWrk, runWrk, type WrkResult } from './lib/wrk.ts';

const env = (name: string, fallback: number) => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const ROUNDS = env('BENCH_ROUNDS', 3);
const SECONDS = env('BENCH_SECONDS', 4);
const CONNECTIONS = env('BENCH_CONNECTIONS', 100);
const log = (line: string) => process.stdout.write(`${line}\n`);
// A US symbol: its market is closed most of the day here, so the hit stays fresh for the run.
const ALL_SCENARIOS = [
  { name: 'quote', path: '/v1/quotes?symbols=AAPL.US' },
  { name: '1000 daily candles', path: '/v1/klines?symbol=AAPL.US&count=1000&adjust=none' },
];
// Narrowing for experiments: BENCH_ONLY=quote, BENCH_PIPELINES=1, BENCH_NODE_FLAGS="--single-threaded-gc".
const SCENARIOS = ALL_SCENARIOS.filter((s) => process.env.BENCH_ONLY === undefined || s.name.startsWith(process.env.BENCH_ONLY));
const PIPELINES = (process.env.BENCH_PIPELINES ?? '1,10').split(',').map(Number);
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');

async function startMinimalFastify(response: CapturedResponse): Promise<Child> {
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-minimal-'));
  const file = join(dir, 'response.json');
  writeFileSync(file, JSON.stringify({ status: response.status, headers: response.headers, body: response.body.toString('base64') }));
  const port = await freePort();
  const child = spawn(process.execPath, [fileURLToPath(new URL('./minimal-fastify.ts', import.meta.url)), file, String(port)], { stdio: 'ignore' });
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

ensureWrk();
const headers = { 'x-api-key': BENCH_KEY };
const services: Array<{ label: string; child: Child }> = [];
services.push({ label: 'service (info)', child: await startService({ nodeArgs: NODE_FLAGS, env: { LOG_LEVEL: 'info', MDQS__history__enabled: 'false' } }) });
services.push({ label: 'service (warn)', child: await startService({ nodeArgs: NODE_FLAGS, env: { LOG_LEVEL: 'warn', MDQS__history__enabled: 'false' } }) });
if (process.env.BENCH_BEFORE) {
  services.push({ label: `before (${process.env.BENCH_BEFORE_LABEL ?? 'earlier commit'}, warn)`, child: await startService({ root: process.env.BENCH_BEFORE, env: { LOG_LEVEL: 'warn' } }) });
}
const rows: string[] = [];
try {
  for (const scenario of SCENARIOS) {
    const hit = await captureHit(`${services[0].child.url}${scenario.path}`, headers);
    for (const { child } of services.slice(1)) await captureHit(`${child.url}${scenario.path}`, headers);
    const bare = await startBare(hit);
    const minimal = await startMinimalFastify(hit);
    const servers = [{ label: 'bare node:http', child: bare }, { label: 'minimal Fastify', child: minimal }, ...services];
    for (const pipeline of PIPELINES) {
      log(`\n${scenario.name} (${hit.body.length} bytes), pipelining ${pipeline}: ${ROUNDS} rounds × ${SECONDS} s, wrk -t1 -c${CONNECTIONS}`);
      const results = new Map<string, WrkResult[]>();
      for (let round = 0; round < ROUNDS; round++) {
        const order = servers.map((_, i) => servers[(i + round) % servers.length]);
        for (const server of order) {
          await runWrk(`${server.child.url}${scenario.path}`, { seconds: 1, connections: CONNECTIONS, pipeline, headers, serverPid: server.child.pid });
          const result = await runWrk(`${server.child.url}${scenario.path}`, { seconds: SECONDS, connections: CONNECTIONS, pipeline, headers, serverPid: server.child.pid });
          if (result.non2xx > 0 || result.errors > 0) log(`  ! ${server.label}: ${result.non2xx} non-2xx, ${result.errors} socket errors`);
          results.set(server.label, [...(results.get(server.label) ?? []), result]);
        }
      }
      const bareRps = results.get('bare node:http')!.map((r) => r.requestsPerSecond);
      for (const server of servers) {
        const runs = results.get(server.label)!;
        const ratio = median(runs.map((r, i) => r.requestsPerSecond / bareRps[i]));
        const row = `| ${scenario.name} | ${pipeline} | ${server.label} | ${Math.round(median(runs.map((r) => r.requestsPerSecond)))} | ${ratio.toFixed(2)} | ${median(runs.map((r) => r.serverCpuUs)).toFixed(1)} | ${Math.max(...runs.map((r) => r.generatorCores)).toFixed(2)} |`;
        rows.push(row);
        log(row);
      }
    }
    await bare.stop();
    await minimal.stop();
  }
} finally {
  for (const { child } of services) await child.stop();
}
log('\n| scenario | pipelining | server | req/s (median) | ÷ bare (median of rounds) | server CPU µs/req | wrk cores (max) |');
log('|---|---|---|---|---|---|---|');
for (const row of rows) log(row);
