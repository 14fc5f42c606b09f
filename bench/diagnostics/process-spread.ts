// How much of a hit benchmark's spread is the process, not the code (issue 30): the same server
// started K times, one process at a time (nothing else of ours running), each measured with R
// `wrk -t1 -c50 -d4s` runs in a row, pinned like the bench (server CPU 1, wrk CPU 0). For bare
// node:http and the service as `npm start` starts it (info), alternated start by start. Prints each
// process's server CPU a request, the spread inside a process (its runs' max ÷ min) and between
// processes (the max ÷ min of their medians). Between ≫ inside means a run measures which process
// it got as much as the code: a benchmark that keeps one process per side for all its pairs draws
// once, and every one of its pairs is low together when that draw is unlucky.
//   node bench/diagnostics/process-spread.ts [quote|candles] [starts=5] [runs=3]
import { captureHit } from '../lib/capture.ts';
import { BENCH_KEY, startBare, startScriptSettings, startService, type Child } from '../lib/processes.ts';
import { median } from '../lib/stats.ts';
import { ensureWrk, runWrk } from '../lib/wrk.ts';

const [which = 'quote', startsArg = '5', runsArg = '3'] = process.argv.slice(2);
const path = which === 'quote' ? '/v1/quotes?symbols=600519.SH' : '/v1/klines?symbol=600519.SH&period=1d&count=1000';
const headers = { 'x-api-key': BENCH_KEY };
process.env.BENCH_PIN ??= '1';
ensureWrk();
const { flags, env } = startScriptSettings();
const startServiceNow = () => startService({ nodeArgs: flags, env: { ...env, LOG_LEVEL: process.env.BENCH_LEVEL ?? 'info', MDQS__history__enabled: 'false' } });

// The bytes bare sends: captured once from a service.
const first = await startServiceNow();
const hit = await captureHit(`${first.url}${path}`, headers);
await first.stop();

const measured: Record<'bare' | 'service', number[][]> = { bare: [], service: [] };
for (let k = 0; k < Number(startsArg); k++) {
  for (const kind of k % 2 === 0 ? ['bare', 'service'] as const : ['service', 'bare'] as const) {
    let child: Child | undefined;
    try {
      child = kind === 'bare' ? await startBare(hit) : await startServiceNow();
      if (kind === 'service') await captureHit(`${child.url}${path}`, headers);
      const run = () => runWrk(`${child!.url}${path}`, { seconds: 4, connections: 50, pipeline: 1, headers, serverPid: child!.pid });
      await run();
      const cpu: number[] = [];
      for (let r = 0; r < Number(runsArg); r++) cpu.push((await run()).serverCpuUs);
      measured[kind].push(cpu);
      process.stdout.write(`${kind.padEnd(8)} start ${k + 1}: ${cpu.map((c) => c.toFixed(1)).join(', ')} µs a request\n`);
    } finally {
      await child?.stop();
    }
  }
}
for (const kind of ['bare', 'service'] as const) {
  const inside = measured[kind].map((cpu) => Math.max(...cpu) / Math.min(...cpu));
  const medians = measured[kind].map(median);
  process.stdout.write(`${kind}: inside a process max ÷ min ${median(inside).toFixed(2)} (median of ${inside.length}); between processes ${(Math.max(...medians) / Math.min(...medians)).toFixed(2)} (medians ${medians.map((m) => m.toFixed(1)).join(', ')} µs)\n`);
}
const ratios = measured.bare.map((b, i) => median(b) / median(measured.service[i]));
process.stdout.write(`bare ÷ service CPU a request, start by start: ${ratios.map((r) => r.toFixed(2)).join(', ')}; median ${median(ratios).toFixed(2)}\n`);
