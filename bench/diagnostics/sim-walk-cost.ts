// CPU and allocation of the sim's daily walk (issue 30 item 3: the mixed soak allocates ~400 MB/s,
// half of it in the walk): builds the full daily history of N synthetic symbols and prints the
// time, the bytes V8 allocated (sampling heap profiler over everything, collected objects too) and
// a checksum of the closes (the same before and after a change that must not alter the bars).
//   node bench/diagnostics/sim-walk-cost.ts [symbols=300]
import { Session } from 'node:inspector';
import { buildDailyHistory } from '../../adapters/sim/daily.ts';
import { syntheticInstrument } from '../../adapters/sim/synthetic.ts';

const count = Number(process.argv[2] ?? 300);
const through = '2026-11-20';
const insts = Array.from({ length: count }, (_, i) => syntheticInstrument(`SIM${String(i + 1).padStart(4, '0')}.US`, 5000)!);
const run = () => {
  let sum = 0;
  let bars = 0;
  for (const inst of insts) {
    const h = buildDailyHistory(inst, through);
    bars += h.close.length;
    for (let i = 0; i < h.close.length; i += 97) sum = (sum * 31 + Math.round(h.close[i] * 10_000)) % 1_000_000_007;
  }
  return { sum, bars };
};
run(); // warm the JIT
const session = new Session();
session.connect();
const post = (method: string, params?: object) => new Promise<any>((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const { sum, bars } = run();
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const { profile } = await post('HeapProfiler.getSamplingProfile');
await post('HeapProfiler.stopSampling');
let total = 0;
const bySite = new Map<string, number>();
const walk = (n: any) => {
  total += n.selfSize;
  const f = n.callFrame;
  const site = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(adapters|src)\//, '$1/')}:${f.lineNumber + 1}`;
  bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize);
  n.children.forEach(walk);
};
walk(profile.head);
const top = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([site, bytes]) => `  ${(bytes / 1048576).toFixed(1).padStart(7)} MiB  ${site}`).join('\n');
process.stdout.write(`${count} symbols, ${bars} bars: ${ms.toFixed(0)} ms (${((cpu.user + cpu.system) / 1000).toFixed(0)} ms CPU), ${(total / 1048576).toFixed(1)} MiB allocated (${(total / bars).toFixed(0)} B a bar), checksum ${sum}\n${top}\n`);
