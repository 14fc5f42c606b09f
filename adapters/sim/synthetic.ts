// Extra US instruments SIM0001.US … for load tests (option `syntheticUniverse`). Their parameters
// are seeded by number, so SIM0042.US is the same instrument in every process.

import type { SimInstrument } from './instruments.ts';
import { rngFor } from './random.ts';

const PREFIX = 'SIM';

function width(count: number): number {
  return Math.max(4, String(count).length);
}

export function syntheticSymbols(count: number): string[] {
  const out: string[] = [];
  for (let n = 1; n <= count; n++) out.push(`${PREFIX}${String(n).padStart(width(count), '0')}.US`);
  return out;
}

/** The synthetic instrument for a symbol, if it is one of the first `count`. */
export function syntheticInstrument(symbol: string, count: number): SimInstrument | undefined {
  const match = /^SIM(\d+)\.US$/.exec(symbol);
  if (match === null || match[1].length !== width(count)) return undefined;
  const n = Number(match[1]);
  if (n < 1 || n > count) return undefined;
  const rng = rngFor(symbol, 'synthetic');
  // Recent listings keep a cold build of thousands of load-test symbols short.
  const year = rng.int(2015, 2022);
  const month = String(rng.int(1, 12)).padStart(2, '0');
  const day = String(rng.int(1, 28)).padStart(2, '0');
  const totalShares = Math.round(1e8 * 50 ** rng.next()) * 10;
  const pays = rng.chance(0.4);
  const dividendYield = pays ? Math.round(rng.range(0.005, 0.04) * 1000) / 1000 : 0;
  const splits = rng.chance(0.3);
  const code = symbol.slice(0, -3);
  return Object.freeze({
    symbol, code, exchange: 'US', region: 'US', name: `Simulated Company ${match[1]}`, type: 'stock', pool: 'US_Stock',
    listingDate: `${year}-${month}-${day}`, totalShares, floatShares: Math.round(totalShares * rng.range(0.6, 1)),
    lotSize: 1, price: Math.round(5 * 100 ** rng.next() * 100) / 100, volatility: Math.round(rng.range(0.2, 0.7) * 100) / 100,
    dividend: pays ? 'quarterly' : 'none', dividendYield, bonusShares: false, splits,
  } satisfies SimInstrument);
}
