// Diagnostic for the soak: what the sim adapter itself retains per symbol it has quoted. Its
// memo of recent tails is an LRU bounded by entry count (adapters/sim/market.ts), so a soak over
// many distinct symbols grows with the number of symbols touched, whatever the service's caches do.
// Measured in-process: heap after a full GC before and after quoting `symbols` fresh symbols.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createSimAdapter } from '../adapters/sim/index.ts';
import { parseSymbol } from '../src/markets/symbols.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Bytes the sim retains per freshly quoted symbol (mean over `symbols` symbols). */
export async function simBytesPerQuotedSymbol(symbols = 200): Promise<number> {
  const sim = createSimAdapter({ syntheticUniverse: 5000 }, { now: Date.now });
  const ref = (n: number) => parseSymbol(`SIM${String(n).padStart(4, '0')}.US`)!;
  // The first call builds shared tables (calendars, midnights); keep them out of the figure.
  await sim.getQuotes([ref(5000)]);
  const before = heapAfterGc();
  for (let n = 1; n <= symbols; n++) await sim.getQuotes([ref(n)]);
  const retained = heapAfterGc() - before;
  // Keeps the adapter (and its memo) reachable until after the measurement.
  if (sim.id !== 'sim') throw new Error('unexpected adapter');
  return retained / symbols;
}
