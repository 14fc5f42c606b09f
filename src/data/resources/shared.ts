// Pieces the descriptors share: by-symbol batching, live TTLs bounded by the next session edge.
import type { Adapter, BySymbol, CallContext } from '../../../adapters/types.ts';
import { estimateBytes } from '../../cache/estimate-bytes.ts';
import { live, type CacheWindows, type LiveWindows } from '../../cache/ttl-policy.ts';
import type { Region, SymbolRef } from '../../domain.ts';
import { isMarketOpen, localDate, sessions } from '../../markets/calendar.ts';
import type { VendorCall } from '../../upstream/router.ts';
import type { ResourceSpec } from '../loader.ts';
import { call, own, type AdapterMethod, type PolicyView } from './descriptor.ts';

/** The next session open/close after `now`, so a "closed" TTL never outlives the opening bell. */
export function nextSessionEdge(region: Region, now: number): number {
  for (const window of sessions(region, localDate(region, now))) {
    if (window.start > now) return window.start;
    if (window.end > now) return window.end;
  }
  return Number.POSITIVE_INFINITY;
}

/** Live data's TTL line: priced by market state. */
export function liveTtl(name: string) {
  return (context: { marketOpen: boolean; notFound?: boolean }, policy: PolicyView): CacheWindows =>
    (context.notFound ? { ...policy.negative } : live(own<LiveWindows>(policy, name), context.marketOpen));
}

/** Live windows for a value fetched at `now`, never living past the next session edge while closed. */
export function liveWindows(ttl: ReturnType<typeof liveTtl>, policy: PolicyView, region: Region, now: number, notFound: boolean): CacheWindows {
  const marketOpen = isMarketOpen(region, now);
  const windows = ttl({ marketOpen, notFound }, policy);
  if (marketOpen || notFound) return windows;
  return { ...windows, ttlMs: Math.max(1, Math.min(windows.ttlMs, nextSessionEdge(region, now) - now)) };
}

/** Reference data's TTL line: its own windows, or the negative ones. */
export function referenceTtl(name: string) {
  return (context: { notFound?: boolean }, policy: PolicyView): CacheWindows =>
    (context.notFound ? { ...policy.negative } : { ...own<CacheWindows>(policy, name) });
}

/** A resource keyed by symbol and fetched in the adapter's native batches. */
export function bySymbolSpec<T>(
  name: string, method: AdapterMethod, windows: ResourceSpec<SymbolRef, T>['windows'],
): ResourceSpec<SymbolRef, T> {
  return {
    resource: name as ResourceSpec<SymbolRef, T>['resource'],
    key: (ref) => ref.symbol,
    region: (ref) => ref.region,
    batch: true,
    fetch: (adapter: Adapter, refs: SymbolRef[], vendor: VendorCall) =>
      call<BySymbol<T>>(adapter, method, vendor, (ctx: CallContext) => [refs, ctx]),
    windows,
    size: (value) => estimateBytes(value),
  };
}
