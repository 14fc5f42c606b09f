// Startup (issue 15): `node src/server.ts` with the node flags and environment of each checkout's
// own `npm start` script (what it execs), to the first 200 from /healthz, median of 7 starts
// (polled every 5 ms), against the commit given in BENCH_BEFORE (a checkout) when set, the two
// alternating. The first start of each fills Node's compile cache and is not counted. Besides
// the wall time it prints the CPU the process had used when /healthz answered (user + system,
// all its threads, 10 ms steps): steadier than the wall time on a shared machine.
// Each start gets a fresh history store, unless BENCH_STORE=<file> names one to start on (a copy
// of it per start, so the boot's retention pass works on the same store every time).
//   node bench/suites/startup.ts           BENCH_STARTS=<n> for more than 7
import { copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startScriptSettings, startService } from '../lib/processes.ts';
import { QUICK, reportHeadlines } from '../lib/report.ts';
import { cpuSeconds } from '../lib/wrk.ts';

async function once(root?: string): Promise<{ ms: number; cpuMs: number }> {
  const start = startScriptSettings(root);
  const store = process.env.BENCH_STORE;
  const copy = store ? join(tmpdir(), `mdqs-startup-${process.pid}.sqlite`) : undefined;
  if (store && copy) copyFileSync(store, copy);
  const t0 = performance.now();
  const service = await startService({ root, nodeArgs: start.flags, env: { ...start.env, MDQS__history__enabled: 'true', ...(copy ? { MDQS__history__sqlitePath: copy } : {}) }, pollMs: 5 });
  const ms = performance.now() - t0;
  const cpuMs = cpuSeconds(service.pid) * 1000;
  await service.stop();
  if (copy) rmSync(copy, { force: true });
  return { ms, cpuMs };
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const starts = Number(process.env.BENCH_STARTS ?? (QUICK ? 2 : 7));
const checkouts = [['now', undefined], ...(process.env.BENCH_BEFORE ? [['before', process.env.BENCH_BEFORE]] : [])] as Array<[string, string | undefined]>;
const runs = new Map<string, { ms: number; cpuMs: number }[]>(checkouts.map(([label]) => [label, []]));
for (const [, root] of checkouts) await once(root);
for (let i = 0; i < starts; i++) for (const [label, root] of checkouts) runs.get(label)!.push(await once(root));
for (const [label, times] of runs) {
  const wall = times.map((t) => t.ms);
  const cpu = times.map((t) => t.cpuMs);
  reportHeadlines([{ suite: 'startup', figure: `${label === 'now' ? 'this checkout' : `before (${process.env.BENCH_BEFORE})`}: npm start's command to the first /healthz 200, median of ${starts} (CPU at ready ${median(cpu).toFixed(0)} ms)`, value: `${median(wall).toFixed(0)} ms`, target: '≤ 800 ms', pass: median(wall) <= 800 }]);
  console.log(`${label}: median ${median(wall).toFixed(0)} ms (${wall.map((r) => r.toFixed(0)).join(', ')}); CPU at ready median ${median(cpu).toFixed(0)} ms (${cpu.map((r) => r.toFixed(0)).join(', ')})`);
}
