// Startup (issue 15): `node src/server.ts` (what `npm start` execs) to the first 200 from /healthz,
// median of 7 starts (polled every 5 ms), against the commit given in BENCH_BEFORE (a checkout)
// when set, the two alternating. The first start of each fills Node's compile cache and is not counted.
//   node bench/startup.ts
import { startService } from './lib/processes.ts';

async function once(root?: string): Promise<number> {
  const t0 = performance.now();
  const service = await startService({ root, env: { MDQS__history__enabled: 'true' }, pollMs: 5 });
  const ms = performance.now() - t0;
  await service.stop();
  return ms;
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const checkouts = [['now', undefined], ...(process.env.BENCH_BEFORE ? [['before', process.env.BENCH_BEFORE]] : [])] as Array<[string, string | undefined]>;
const runs = new Map<string, number[]>(checkouts.map(([label]) => [label, []]));
for (const [, root] of checkouts) await once(root);
for (let i = 0; i < 7; i++) for (const [label, root] of checkouts) runs.get(label)!.push(await once(root));
for (const [label, times] of runs) console.log(`${label}: median ${median(times).toFixed(0)} ms (${times.map((r) => r.toFixed(0)).join(', ')})`);
