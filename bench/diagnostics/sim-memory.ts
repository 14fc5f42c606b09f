// Diagnostic for the soak: what the sim adapter itself retains, in-process, heap after a full GC.
// Its memos are bounded by entry count (adapters/sim/market.ts): 64 full daily histories, 512 days
// of 1m bars and up to 20,000 per-symbol tails. A soak over many symbols fills them on top of
// whatever the service's caches hold, because the sim runs inside the service process.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

export interface SimMemory {
  /** Retained after quoting the first 200 fresh symbols (fills the 64-history LRU). */
  first200: number;
  /** Retained per further quoted symbol (the per-symbol tail), mean over 1000 symbols. */
  perSymbol: number;
}

export async function simMemory(): Promise<SimMemory> {
  const sim = createSimAdapter({ syntheticUniverse: 5000 }, { now: Date.now });
  const ref = (n: number) => parseSymbol(`SIM${String(n).padStart(4, '0')}.US`)!;
  // The first call builds shared tables (calendars, midnights); keep them out of the figures.
  await sim.getQuotes([ref(5000)]);
  const start = heapAfterGc();
  for (let n = 1; n <= 200; n++) await sim.getQuotes([ref(n)]);
  const after200 = heapAfterGc();
  for (let n = 201; n <= 1200; n++) await sim.getQuotes([ref(n)]);
  const after1200 = heapAfterGc();
  // Keeps the adapter (and its memos) reachable until after the last measurement.
  if (sim.id !== 'sim') throw new Error('unexpected adapter');
  return { first200: after200 - start, perSymbol: (after1200 - after200) / 1000 };
}
