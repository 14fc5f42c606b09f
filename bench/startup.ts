// Startup (issue 15): `node src/server.ts` (what `npm start` execs) to the first 200 from /healthz,
// median of 5 starts, against the commit given in BENCH_BEFORE (a checkout) when set.
//   node bench/startup.ts
import { startService } from './lib/processes.ts';

async function once(root?: string): Promise<number> {
  const t0 = performance.now();
  const service = await startService({ root, env: { MDQS__history__enabled: 'true' } });
  const ms = performance.now() - t0;
  await service.stop();
  return ms;
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
for (const [label, root] of [['now', undefined], ...(process.env.BENCH_BEFORE ? [['before', process.env.BENCH_BEFORE]] : [])] as Array<[string, string | undefined]>) {
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) runs.push(await once(root));
  console.log(`${label}: median ${median(runs).toFixed(0)} ms (${runs.map((r) => r.toFixed(0)).join(', ')})`);
}
