// US market numbers for Eastmoney secids (docs/vendors.md#eastmoney-market-numbers): 105 NASDAQ, 106 NYSE,
// 107 NYSE American / Arca. The ticker alone does not tell which, so the adapter asks once and
// remembers. [verify] chose probing ulist over the search API (whose response shape no public source
// gives), assuming ulist omits secids that do not exist: a configured map first, then a bounded per-instance LRU filled by ONE ulist call
// that lists every candidate secid (105.X, 106.X, 107.X) of the unresolved tickers; ulist answers
// only the secids that exist. Misses are not cached (the service caches unknown symbols).

import { LRUCache } from 'lru-cache';
import type { SymbolRef } from '../../src/domain.ts';
import { INDEX_SECIDS, US_MARKETS, secidOf, usTicker, type UsMarket } from './requests.ts';

export class UsMarketResolver {
  readonly #configured: ReadonlyMap<string, UsMarket>;
  readonly #cache: LRUCache<string, UsMarket>;

  constructor(configured: Record<string, UsMarket> = {}, maxEntries = 5000) {
    this.#configured = new Map(Object.entries(configured).map(([k, v]) => [k.toUpperCase(), v]));
    this.#cache = new LRUCache({ max: Math.max(1, maxEntries) });
  }

  known(ref: SymbolRef): UsMarket | undefined {
    return this.#configured.get(ref.code) ?? this.#cache.get(usTicker(ref));
  }

  /** Candidate secids of the US refs not resolved yet. */
  candidates(refs: SymbolRef[]): string[] {
    const out: string[] = [];
    for (const ref of refs) {
      // Indices have a fixed secid (100.SPX): nothing to resolve.
      if (ref.region !== 'US' || INDEX_SECIDS[ref.symbol] !== undefined || this.known(ref) !== undefined) continue;
      for (const market of US_MARKETS) out.push(`${market}.${usTicker(ref)}`);
    }
    return out;
  }

  learn(found: Map<string, UsMarket>): void {
    for (const [ticker, market] of found) this.#cache.set(ticker, market);
  }

  /** secid of any ref, or undefined for a US ticker not (yet) resolved. */
  secid(ref: SymbolRef): string | undefined {
    return secidOf(ref, ref.region === 'US' ? this.known(ref) : undefined);
  }
}
