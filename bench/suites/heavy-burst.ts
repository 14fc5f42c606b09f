// Peak memory under a burst of heavy candle requests (issue 15 item 4): 64 connections each asking
// for a different symbol's 1000 × 60m bars (~60,000 one-minute base bars each, built in the worker),
// cold, for BENCH_SECONDS (20). Reports req/s, server CPU per request and the service's peak RSS
// (VmHWM) over its RSS before the burst, the service started as `npm start` starts it. BENCH_BEFORE=<checkout> runs that checkout first, same run.
//   node bench/suites/heavy-burst.ts
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { BENCH_KEY, pinned, rssOf, startScriptSettings, startService } from '../lib/processes.ts';
import { QUICK, reportHeadlines } from '../lib/report.ts';
import { cpuSeconds, ensureWrk } from '../lib/wrk.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 4 : 20));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
process.env.BENCH_PIN ??= '1';
ensureWrk();
const MIB = 1048576;

// The sim's synthetic universe of 5000 US symbols (SIM0001.US…), each request a new one.
const dir = mkdtempSync(join(tmpdir(), 'mdqs-heavy-burst-'));
const script = join(dir, 'burst.lua');
writeFileSync(script, [
  `wrk.headers["x-api-key"] = "${BENCH_KEY}"`,
  'local n = 0',
  'request = function()',
  '  n = n + 1',
  '  return wrk.format(nil, string.format("/v1/klines?symbol=SIM%04d.US&period=60m&count=1000&adjust=none", 1 + (n * 7919) % 5000))',
  'end',
].join('\n'));

async function run(label: string, root: string | undefined): Promise<void> {
  // As `npm start` runs it: its node flags and variables (package.json).
  const start = startScriptSettings();
  const service = await startService({ root, nodeArgs: start.flags, env: { ...start.env, LOG_LEVEL: 'warn', MDQS__history__enabled: 'false', MDQS__adapters__sim__syntheticUniverse: '5000',
    // The memory soak's cache bounds (16 + 16 MiB), so the peak is the requests' own memory.
    MDQS__cache__dataMaxBytes: String(16 * MIB), MDQS__cache__responseMaxBytes: String(16 * MIB) } });
  try {
    const before = rssOf(service.pid).rss;
    const cpu = cpuSeconds(service.pid);
    let peak = before;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, rssOf(service.pid).hwm);
      } catch { /* exited */ }
    }, 100);
    const wrk = spawn(...pinned(0, ['wrk', '-t1', `-c${CONNECTIONS}`, `-d${SECONDS}s`, '--timeout', '30s', '-s', script, service.url]), { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    wrk.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await new Promise((resolve) => wrk.on('exit', resolve));
    clearInterval(sampler);
    peak = Math.max(peak, rssOf(service.pid).hwm);
    const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
    const used = cpuSeconds(service.pid) - cpu;
    reportHeadlines([{ suite: 'heavy burst', figure: `${label}: peak RSS − RSS before, ${CONNECTIONS} connections × ${SECONDS} s of cold 1000 × 60m (${(requests / SECONDS).toFixed(1)} req/s)`, value: `${((peak - before) / MIB).toFixed(1)} MiB`, pass: non2xx === 0 }]);
    console.log(`| ${label} | ${(requests / SECONDS).toFixed(1)} | ${non2xx} | ${((used / Math.max(1, requests)) * 1000).toFixed(1)} ms | ${(before / MIB).toFixed(1)} MiB | ${(peak / MIB).toFixed(1)} MiB | ${((peak - before) / MIB).toFixed(1)} MiB |`);
  } finally {
    await service.stop();
  }
}

console.log(`heavy burst: ${CONNECTIONS} connections × ${SECONDS} s of 1000 × 60m bars, a new symbol per request`);
console.log('| service | req/s | non-2xx | server CPU per request | RSS before | peak RSS | peak − before |');
console.log('|---|---|---|---|---|---|---|');
if (process.env.BENCH_BEFORE) await run(`before (${process.env.BENCH_BEFORE_LABEL ?? process.env.BENCH_BEFORE})`, process.env.BENCH_BEFORE);
await run('this checkout', undefined);
