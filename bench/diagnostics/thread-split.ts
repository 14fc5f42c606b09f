// Where a cache hit's CPU goes per thread, service against bare node:http, on a quiet machine and
// beside a CPU hog (issue 30): the service started as `npm start` starts it (its node flags and
// environment, log level info, nothing pinned), the bare server sending the service's captured
// bytes, `wrk -t1 -c50 -d5s` against each in alternated pairs; every thread's utime + stime from
// /proc/<pid>/task/*/stat around each run, grouped by the thread's name (MainThread, V8Worker: GC
// and compile helpers, libuv-worker, others), as µs per request. With --hog a node busy loop runs
// beside them (one core of two). A developer tool; its figures are in BENCHMARKS.md.
//   node bench/diagnostics/thread-split.ts [quote|candles] [pairs=3] [--hog]
//   THREAD_SPLIT_FLAGS='--single-threaded-gc' adds node flags to the service (MDQS_NODE_FLAGS's place).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { captureHit } from '../lib/capture.ts';
import { BENCH_KEY, startBare, startScriptSettings, startService, type Child } from '../lib/processes.ts';
import { ensureWrk, runWrk } from '../lib/wrk.ts';
import { median } from '../lib/stats.ts';
import { table } from '../lib/table.ts';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const [which = 'quote', pairsArg = '3'] = args;
const HOG = process.argv.includes('--hog');
const path = which === 'quote' ? '/v1/quotes?symbols=600519.SH' : '/v1/klines?symbol=600519.SH&period=1d&count=1000';
const headers = { 'x-api-key': BENCH_KEY };
ensureWrk();

/** utime + stime jiffies per thread name group. */
function threads(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      const group = tid === String(pid) ? 'main' : name.replace(/\d+$/, '');
      out.set(group, (out.get(group) ?? 0) + Number(stat[11]) + Number(stat[12]));
    } catch { /* the thread ended */ }
  }
  return out;
}

function diff(a: Map<string, number>, b: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of b) out.set(k, v - (a.get(k) ?? 0));
  return out;
}

const { flags, env } = startScriptSettings();
const extra = (process.env.THREAD_SPLIT_FLAGS ?? '').split(/\s+/).filter(Boolean);
const service = await startService({ nodeArgs: [...flags, ...extra], env: { ...env, LOG_LEVEL: 'info' } });
await captureHit(`${service.url}${path}`, headers);
const bare = await startBare(await captureHit(`${service.url}${path}`, headers));
const hog = HOG ? spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }) : undefined;

interface Run { rps: number; perThread: Map<string, number>; requests: number; foreign: number }
async function measure(target: Child): Promise<Run> {
  const a = threads(target.pid);
  const r = await runWrk(`${target.url}${path}`, { seconds: 5, connections: 50, pipeline: 1, headers, serverPid: target.pid });
  const b = threads(target.pid);
  const per = new Map<string, number>();
  for (const [k, v] of diff(a, b)) per.set(k, (v * 1e4) / Math.max(1, r.requests));
  return { rps: r.requestsPerSecond, perThread: per, requests: r.requests, foreign: r.foreignCores };
}

const runs: { service: Run; bare: Run }[] = [];
try {
  // Warm-up: both servers' JIT and the service's caches.
  await measure(service);
  await measure(bare);
  for (let p = 0; p < Number(pairsArg); p++) {
    if (p % 2 === 0) {
      const s = await measure(service);
      runs.push({ service: s, bare: await measure(bare) });
    } else {
      const b = await measure(bare);
      runs.push({ service: await measure(service), bare: b });
    }
  }
} finally {
  hog?.kill('SIGKILL');
  await bare.stop();
  await service.stop();
}

const groups = [...new Set(runs.flatMap((r) => [...r.service.perThread.keys(), ...r.bare.perThread.keys()]))].sort();
const us = (run: Run, g: string) => (run.perThread.get(g) ?? 0).toFixed(1);
console.log(`${which}, ${HOG ? 'beside a node busy loop' : 'no hog'}, ${extra.join(' ') || 'default flags'}: wrk -t1 -c50 -d5s, pairs alternated\n`);
console.log(table(['pair', 'service req/s', 'bare req/s', 'service ÷ bare', 'foreign cores (s / b)', ...groups.map((g) => `${g} µs/req (s / b)`)], runs.map((r, i) => [
  String(i + 1), r.service.rps.toFixed(0), r.bare.rps.toFixed(0), (r.service.rps / r.bare.rps).toFixed(2), `${r.service.foreign.toFixed(2)} / ${r.bare.foreign.toFixed(2)}`,
  ...groups.map((g) => `${us(r.service, g)} / ${us(r.bare, g)}`),
])));
console.log(`\nmedian service ÷ bare: ${median(runs.map((r) => r.service.rps / r.bare.rps)).toFixed(2)}`);
