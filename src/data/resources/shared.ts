// Pieces the descriptors share: by-symbol batching, live TTLs bounded by the next session edge.
import type { Adapter, BySymbol, CallContext } from '../../../adapters/types.ts';
import { estimateBytes } from '../../cache/estimate-bytes.ts';
import { live, type CacheWindows, type LiveWindows } from '../../cache/ttl-policy.ts';
import type { Region, SymbolRef } from '../../domain.ts';
import { addDays, isMarketOpen, localDate, sessions, type CalendarKey } from '../../markets/calendar.ts';
import { calendarKeyOf, marketOf } from '../../markets/symbols.ts';
import type { HistoryStore, ReferenceKind } from '../../store/index.ts';
import type { ResourceSpec, StoreTier } from '../loader.ts';
import { invoke, own, type AdapterMethod, type PolicyView } from './descriptor.ts';

/**
 * The next session open/close after `now`, so a "closed" TTL never outlives the opening bell. A
 * futures night session is listed under the next trading day, up to a weekend away.
 */
export function nextSessionEdge(region: CalendarKey, now: number): number {
  const today = localDate(region, now);
  for (let i = 0; i <= (region.length > 2 ? 3 : 0); i++) {
    for (const window of sessions(region, addDays(today, i))) {
      if (window.start > now) return window.start;
      if (window.end > now) return window.end;
    }
  }
  return Number.POSITIVE_INFINITY;
}

/** Live data's TTL line: priced by market state. */
export function liveTtl(name: string) {
  return (context: { marketOpen: boolean; notFound?: boolean }, policy: PolicyView): CacheWindows =>
    (context.notFound ? { ...policy.negative } : live(own<LiveWindows>(policy, name), context.marketOpen));
}

/** Live windows for a value fetched at `now`, never living past the next session edge while closed. */
export function liveWindows(ttl: ReturnType<typeof liveTtl>, policy: PolicyView, region: CalendarKey, now: number, notFound: boolean): CacheWindows {
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
    region: (ref) => marketOf(ref),
    batch: true,
    fetch: (adapter: Adapter, refs: SymbolRef[], ctx: CallContext) => invoke<BySymbol<T>>(adapter, method, refs, ctx),
    windows,
    size: (value) => estimateBytes(value),
  };
}

/** The first session close of `region` after `at` (within a month; +Infinity past the calendar). */
export function nextClose(region: CalendarKey, at: number): number {
  let day = localDate(region, at);
  for (let i = 0; i < 31; i++, day = addDays(day, 1)) {
    const windows = sessions(region, day);
    const close = windows.at(-1)?.end;
    if (close !== undefined && close > at) return close;
  }
  return Number.POSITIVE_INFINITY;
}

/**
 * The history store as the tier of a reference resource (ex-factors, instruments): the document
 * an adapter last sent per symbol. Refresh policy: a stored document answers with no vendor call
 * until the first session close of its market after it was fetched (once per trading day, after
 * the close), and until `due` says otherwise (ex-factors: a stored ex-date has passed since); then
 * the vendor is asked and its answer replaces it, and a vendor that fails leaves the stored one to
 * answer, stale, at any age.
 */
export function referenceStore<T>(
  kind: ReferenceKind, history: HistoryStore, off: ReadonlySet<string>, now: () => number,
  due: (value: T, fetchedAt: number, now: number) => boolean = () => false,
): StoreTier<SymbolRef, T> {
  return {
    keeps: (adapterId) => !off.has(adapterId),
    read: async (adapterId, refs) => {
      const out = new Map<string, T>();
      const rows = await history.reference(kind, adapterId, refs.map((ref) => ref.symbol));
      const at = now();
      for (const ref of refs) {
        const row = rows.get(ref.symbol);
        if (row === undefined || at >= nextClose(calendarKeyOf(ref), row.fetchedAt) || due(row.value as T, row.fetchedAt, at)) continue;
        out.set(ref.symbol, row.value as T);
      }
      return out;
    },
    keep: (adapterId, found) => history.keepReference(kind, adapterId, [...found].map(([symbol, value]) => ({ symbol, value }))),
    salvage: async (adapterIds, ref) => {
      for (const adapter of adapterIds) {
        const row = (await history.reference(kind, adapter, [ref.symbol])).get(ref.symbol);
        if (row !== undefined) return { value: row.value as T, adapter, ageMs: Math.max(0, now() - row.fetchedAt) };
      }
      return undefined;
    },
    symbol: (ref) => ref.symbol,
  };
}
