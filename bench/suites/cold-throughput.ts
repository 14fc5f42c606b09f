// Random cold requests against the real service (issue 15, item 3): `node src/server.ts` as a
// child process with the default configuration (the embedded sim, the history store on a fresh
// SQLite file), LOG_LEVEL=warn, a synthetic universe of 5000 US symbols, and wrk with a Lua script
// that draws every request at random: symbol, period 1m…1M, count 1–1000, adjust type. Almost every
// request misses every cache, so this measures the cold path end to end: req/s, p50/p99 latency
// and server CPU per request. The service runs on CPU 1 and wrk on CPU 0 (one core each).
//   node bench/suites/cold-throughput.ts
//   BENCH_BEFORE=/tmp/mdqs-before node bench/suites/cold-throughput.ts   # an earlier checkout first, same run
// Env: BENCH_SECONDS (20), BENCH_CONNECTIONS (32), BENCH_ROUNDS (1), BENCH_UNIVERSE (5000),
// BENCH_HISTORY=off (candles straight to the vendor), BENCH_SEED (1), BENCH_CPU_PROF=<dir> (profile
// the service; summarise with bench/diagnostics/profile-summary.ts), BENCH_ENV='K=V …' (more service environment).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_KEY, pinned, startService } from '../lib/processes.ts';
import { QUICK, reportHeadlines } from '../lib/report.ts';
import { cpuSeconds, ensureWrk } from '../lib/wrk.ts';

const num = (name: string, fallback: number) => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const SECONDS = num('BENCH_SECONDS', QUICK ? 4 : 20);
const CONNECTIONS = num('BENCH_CONNECTIONS', 32);
const ROUNDS = num('BENCH_ROUNDS', 1);
const UNIVERSE = num('BENCH_UNIVERSE', 5000);
const SEED = num('BENCH_SEED', 1);
const PERIODS = ['1m', '5m', '10m', '15m', '30m', '60m', '1d', '1w', '1M'];
const ADJUST = ['none', 'forward', 'backward', 'forward_additive', 'backward_additive'];
process.env.BENCH_PIN ??= '1';

ensureWrk();
const dir = mkdtempSync(join(tmpdir(), 'mdqs-cold-'));
const width = Math.max(4, String(UNIVERSE).length);

/** wrk's Lua: one seeded generator per wrk thread, every request drawn afresh. */
function luaScript(): string {
  const file = join(dir, 'cold.lua');
  writeFileSync(file, [
    `wrk.headers["x-api-key"] = "${BENCH_KEY}"`,
    `local periods = { ${PERIODS.map((p) => `"${p}"`).join(', ')} }`,
    `local adjust = { ${ADJUST.map((a) => `"${a}"`).join(', ')} }`,
    `math.randomseed(${SEED})`,
    'request = function()',
    `  local symbol = string.format("SIM%0${width}d.US", math.random(${UNIVERSE}))`,
    '  local path = "/v1/klines?symbol=" .. symbol .. "&period=" .. periods[math.random(#periods)]',
    '    .. "&count=" .. math.random(1000) .. "&adjust=" .. adjust[math.random(#adjust)]',
    '  return wrk.format(nil, path)',
    'end',
    '',
  ].join('\n'));
  return file;
}

interface Result {
  rps: number;
  requests: number;
  p50: string;
  p99: string;
  non2xx: number;
  errors: number;
  cpuMsPerRequest: number;
  serverCores: number;
}

async function runWrk(url: string, serverPid: number): Promise<Result> {
  const before = cpuSeconds(serverPid);
  const started = Date.now();
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${SECONDS}s`, '--timeout', '60s', '--latency', '-s', luaScript(), `${url}/v1/klines`];
  const child = spawn(...pinned(0, ['wrk', ...args]), { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await new Promise((resolve) => child.on('exit', resolve));
  const elapsed = (Date.now() - started) / 1000;
  const cpu = cpuSeconds(serverPid) - before;
  const number = (pattern: RegExp) => Number(pattern.exec(out)?.[1] ?? 0);
  const text = (pattern: RegExp) => pattern.exec(out)?.[1] ?? '?';
  const requests = number(/(\d+) requests in/);
  return {
    rps: number(/Requests\/sec:\s+([\d.]+)/),
    requests,
    p50: text(/^\s+50%\s+(\S+)/m),
    p99: text(/^\s+99%\s+(\S+)/m),
    non2xx: number(/Non-2xx or 3xx responses: (\d+)/),
    errors: ['connect', 'read', 'write', 'timeout'].reduce((sum, kind) => sum + number(new RegExp(`${kind} (\\d+)`)), 0),
    cpuMsPerRequest: requests > 0 ? (cpu * 1000) / requests : 0,
    serverCores: cpu / elapsed,
  };
}

async function measure(label: string, root: string | undefined): Promise<void> {
  for (let round = 1; round <= ROUNDS; round++) {
    const env: Record<string, string> = {
      LOG_LEVEL: 'warn',
      MDQS__adapters__sim__syntheticUniverse: String(UNIVERSE),
      MDQS__history__sqlitePath: join(dir, `history-${label.replace(/\W+/g, '-')}-${round}.sqlite`),
    };
    if (process.env.BENCH_HISTORY === 'off') env.MDQS__history__enabled = 'false';
    for (const pair of (process.env.BENCH_ENV ?? '').split(/\s+/).filter((p) => p.indexOf('=') > 0)) env[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
    const nodeArgs = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [];
    const service = await startService({ root, env, nodeArgs });
    try {
      const r = await runWrk(service.url, service.pid);
      reportHeadlines([{ suite: 'cold throughput', figure: `${label}${ROUNDS > 1 ? `, round ${round}` : ''}: random cold klines, ${UNIVERSE} symbols, wrk -c${CONNECTIONS} ${SECONDS} s (p50 / p99; CPU per request)`, value: `${r.rps.toFixed(1)} req/s (${r.p50} / ${r.p99}; ${r.cpuMsPerRequest.toFixed(1)} ms)`, pass: r.non2xx === 0 && r.errors === 0 }]);
      console.log(`| ${label} | ${round} | ${r.rps.toFixed(1)} | ${r.p50} | ${r.p99} | ${r.cpuMsPerRequest.toFixed(1)} ms | ${r.serverCores.toFixed(2)} | ${r.requests} | ${r.non2xx} | ${r.errors} |`);
      if (r.non2xx > 0) console.error(service.stderr().slice(-2000));
    } finally {
      await service.stop();
    }
  }
}

console.log(`random cold klines: ${UNIVERSE} synthetic symbols, periods ${PERIODS.join('/')}, count 1–1000, adjust ${ADJUST.length} types; wrk -t1 -c${CONNECTIONS} -d${SECONDS}s; history store ${process.env.BENCH_HISTORY === 'off' ? 'off' : 'on (fresh SQLite)'}\n`);
console.log('| service | round | req/s | p50 | p99 | server CPU per request | server cores | requests | non-2xx | socket errors |\n|---|---|---|---|---|---|---|---|---|---|');
try {
  if (process.env.BENCH_BEFORE) await measure(process.env.BENCH_BEFORE_LABEL ?? 'before', process.env.BENCH_BEFORE);
  await measure(process.env.BENCH_LABEL ?? 'this checkout', undefined);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
