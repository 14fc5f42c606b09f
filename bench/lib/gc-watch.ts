// Preloaded into a server by bench/diagnostics/flag-cost.ts (FLAG_COST_GC=1, `--import`): counts
// the process's garbage collections (minor, major, incremental) and their milliseconds with a
// PerformanceObserver, and writes the totals to stderr as one `gcstat …` line on SIGUSR2.
import { constants, PerformanceObserver } from 'node:perf_hooks';

const count = { minor: 0, major: 0, incremental: 0 };
const ms = { minor: 0, major: 0, incremental: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
    const k = kind === constants.NODE_PERFORMANCE_GC_MINOR ? 'minor' : kind === constants.NODE_PERFORMANCE_GC_MAJOR ? 'major' : 'incremental';
    count[k] += 1;
    ms[k] += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });
process.on('SIGUSR2', () => {
  process.stderr.write(`gcstat ${count.minor} ${ms.minor.toFixed(2)} ${count.major} ${ms.major.toFixed(2)} ${count.incremental} ${ms.incremental.toFixed(2)}\n`);
});
