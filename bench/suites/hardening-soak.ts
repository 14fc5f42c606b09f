// The bounded soak of issue 14: the real service (`node src/server.ts`) with a Redis of its own,
// injected vendor faults (the sim's errorRate / timeoutRate / invalidRowRate), mixed routes over
// hot and cold keys, and a Redis restart half-way. Reports per 10 s window the request rate, the
// answers outside the injected faults (must be 0), the event-loop delay p99 (prom-client's
// histogram from /metrics) and RSS.
//   node bench/suites/hardening-soak.ts          (SOAK_SECONDS=120, SOAK_WORKERS=24)
import { spawn, type ChildProcess } from 'node:child_process';
import { BENCH_KEY, freePort, rssOf, startService } from '../lib/processes.ts';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 120);
const WORKERS = Number(process.env.SOAK_WORKERS ?? 24);
const WINDOW_MS = 10_000;
const log = (line: string) => process.stdout.write(`${line}\n`);

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300));
  return child;
}

const redisPort = await freePort();
let redis = await startRedis(redisPort);
const service = await startService({
  probe: false,
  env: {
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    MDQS__history__enabled: 'false',
    MDQS__adapters__sim__faults: '{ errorRate: 0.02, timeoutRate: 0.005, invalidRowRate: 0.02, seed: 7 }',
    MDQS__adapters__sim__syntheticUniverse: '2000',
    MDQS__upstream__deadlineMs: '1500',
  },
});

const HOT = ['600519.SH', '000001.SZ', '00700.HK', 'AAPL.US', 'MSFT.US'];
const PERIODS = ['1d', '1w', '5m', '15m', '60m'];
const ADJUST = ['none', 'forward', 'backward'];
const pick = <T>(items: readonly T[]) => items[Math.floor(Math.random() * items.length)];
const cold = () => `SIM${String(1 + Math.floor(Math.random() * 2000)).padStart(4, '0')}.US`;
function nextPath(): string {
  const roll = Math.random();
  if (roll < 0.35) return `/v1/quotes?symbols=${pick(HOT)},${pick(HOT)}`;
  if (roll < 0.5) return `/v1/depth?symbol=${pick(HOT)}`;
  if (roll < 0.7) return `/v1/klines?symbol=${pick(HOT)}&period=${pick(PERIODS)}&count=${50 + Math.floor(Math.random() * 300)}&adjust=${pick(ADJUST)}`;
  if (roll < 0.85) return `/v1/klines?symbol=${cold()}&period=1d&count=${20 + Math.floor(Math.random() * 200)}&adjust=${pick(ADJUST)}`;
  if (roll < 0.93) return `/v1/quotes?symbols=${cold()},${cold()},${cold()}`;
  return `/v1/klines/ex-factors?symbols=${pick(HOT)},${cold()}`;
}

// Answers the injected faults may cause: the vendor's 502/503/504 (one symbol, or all failed).
const INJECTED = new Set(['UPSTREAM_ERROR', 'UPSTREAM_TIMEOUT', 'UPSTREAM_BAD_RESPONSE', 'UPSTREAM_UNAVAILABLE']);
interface Window { requests: number; injected: number; unexpected: number; samples: string[] }
let window: Window = { requests: 0, injected: 0, unexpected: 0, samples: [] };
const windows: Array<Window & { rps: number; lagP99Ms: number; rssMiB: number }> = [];
const deadline = Date.now() + SECONDS * 1000;

async function worker(): Promise<void> {
  while (Date.now() < deadline) {
    const path = nextPath();
    try {
      const res = await fetch(`${service.url}${path}`, { headers: { 'x-api-key': BENCH_KEY }, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      window.requests += 1;
      if (res.status === 200 || res.status === 404) continue;
      const reason = (JSON.parse(text) as { error?: string }).error ?? '';
      if (res.status >= 502 && INJECTED.has(reason)) window.injected += 1;
      else {
        window.unexpected += 1;
        if (window.samples.length < 3) window.samples.push(`${res.status} ${reason} ${path}`);
      }
    } catch (error) {
      window.requests += 1;
      window.unexpected += 1;
      if (window.samples.length < 3) window.samples.push(`${(error as Error).name} ${path}`);
    }
  }
}

async function lagP99Ms(): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const match = /^nodejs_eventloop_lag_p99_seconds (\S+)/m.exec(text);
  return match === null ? Number.NaN : Number(match[1]) * 1000;
}

const ticker = setInterval(async () => {
  const done = window;
  window = { requests: 0, injected: 0, unexpected: 0, samples: [] };
  const row = { ...done, rps: done.requests / (WINDOW_MS / 1000), lagP99Ms: await lagP99Ms(), rssMiB: rssOf(service.pid).rss / 2 ** 20 };
  windows.push(row);
  log(`${windows.length * 10}s: ${row.rps.toFixed(0)} req/s, injected ${row.injected}, unexpected ${row.unexpected}${row.samples.length ? ` (${row.samples.join('; ')})` : ''}, loop p99 ${row.lagP99Ms.toFixed(1)} ms, RSS ${row.rssMiB.toFixed(0)} MiB`);
}, WINDOW_MS);

// Redis goes away half-way and comes back 5 s later.
setTimeout(() => {
  log('-- Redis stopped');
  redis.kill('SIGKILL');
  setTimeout(async () => {
    redis = await startRedis(redisPort);
    log('-- Redis restarted');
  }, 5_000);
}, (SECONDS * 1000) / 2);

try {
  await Promise.all(Array.from({ length: WORKERS }, worker));
} finally {
  clearInterval(ticker);
  await service.stop();
  redis.kill('SIGKILL');
}
const steady = windows.slice(1);
const rates = steady.map((w) => w.rps);
log(`\nwindows ${windows.length}; req/s min ${Math.min(...rates).toFixed(0)} max ${Math.max(...rates).toFixed(0)}; unexpected answers ${windows.reduce((s, w) => s + w.unexpected, 0)}; injected ${windows.reduce((s, w) => s + w.injected, 0)}; loop p99 max ${Math.max(...steady.map((w) => w.lagP99Ms)).toFixed(1)} ms; RSS after warm-up ${steady[0]?.rssMiB.toFixed(0)} → ${steady.at(-1)?.rssMiB.toFixed(0)} MiB`);
