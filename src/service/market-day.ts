// The whole-market day from the candle store in one read (GET /v1/klines/market): every symbol's
// day whose bars (and the bar before, for prev_close) the store covers is read in one statement
// (backend windowsOf), adjusted with the symbols' ex-factors loaded as one batch, and built by the
// same candle engine as /v1/klines, so it equals the per-symbol window. What the store does not
// cover, or an adjustment that needs more than the factors (the additive methods read raw closes
// before each event), is left to the per-symbol path (`rest`), which fetches it like any window.
import type { AdjustType, BasePeriod, Candles, Region, SymbolRef } from '../domain.ts';
import { emptyStatus, mergeStatus, type DataStatus } from '../data/status.ts';
import { addDays, localMidnight, minuteBarLabels, prevTradingDay, isTradingDay } from '../markets/calendar.ts';
import { readBlocks } from '../store/blocks.ts';
import { activeAt, gaps } from '../store/coverage.ts';
import type { HistoryStore } from '../store/index.ts';
import { buildFromSpec } from './candle-build.ts';
import type { MarketDataService } from './market-data.ts';

export interface StoredDayDeps {
  store: HistoryStore;
  /** The adapter whose stored series the loader asks first for `region`; undefined: none. */
  adapterFor: (region: Region) => string | undefined;
  service: MarketDataService;
  now: () => number;
  /** How long a closed bar answered from the store is fresh (cache.ttl.closedBarsMs). */
  freshMs: number;
  simulated: ReadonlySet<string>;
}

export interface StoredDay {
  /** Symbols answered from the store, in `refs` order; empty candles: the store knows the day has no bar. */
  items: Map<string, Candles>;
  /** Symbols for the per-symbol path, in `refs` order. */
  rest: SymbolRef[];
  status: DataStatus;
}

/** The first and last possible bar label of `date`'s session. */
function labelSpan(region: Region, period: BasePeriod, date: string): { lo: number; hi: number } | undefined {
  if (!isTradingDay(region, date)) return undefined;
  if (period === '1d') {
    const label = localMidnight(region, date);
    return { lo: label, hi: label };
  }
  const labels = minuteBarLabels(region, date, 1);
  return labels.length === 0 ? undefined : { lo: labels[0], hi: labels[labels.length - 1] };
}

/**
 * The loader's first store for `region`: the first adapter of the candle chain whose candles the
 * store keeps, a simulated one only when no real adapter comes before it (data/loader.ts).
 */
export function firstStoredAdapter(chain: readonly string[], offFor: ReadonlySet<string>, simulated: ReadonlySet<string>): string | undefined {
  let real = false;
  for (const id of chain) {
    const sim = simulated.has(id);
    real ||= !sim;
    if (offFor.has(id) || (sim && real)) continue;
    return id;
  }
  return undefined;
}

export async function storedDay(deps: StoredDayDeps, refs: readonly SymbolRef[], period: BasePeriod, date: string, adjust: AdjustType, count: (ref: SymbolRef) => number): Promise<StoredDay> {
  const out: StoredDay = { items: new Map(), rest: [], status: emptyStatus() };
  const read = deps.store.storedWindows;
  if (read === undefined || adjust === 'forward_additive' || adjust === 'backward_additive') {
    out.rest = [...refs];
    return out;
  }
  const now = deps.now();
  const raws = new Map<string, { ref: SymbolRef; raw: Candles; adapter: string }>();
  const byGroup = new Map<string, SymbolRef[]>();
  for (const ref of refs) {
    const adapter = deps.adapterFor(ref.region);
    if (adapter === undefined) continue;
    const group = `${adapter}|${ref.region}`;
    const list = byGroup.get(group) ?? [];
    list.push(ref);
    byGroup.set(group, list);
  }
  for (const [group, list] of byGroup) {
    const [adapter, region] = group.split('|') as [string, Region];
    const span = labelSpan(region, period, date);
    const before = labelSpan(region, period, prevTradingDay(region, date));
    if (span === undefined || before === undefined) continue;
    // The day and the bar before it (its close is the day's first prev_close), covered whole.
    const lo = before.hi;
    const windows = await read(adapter, period, list.map((r) => r.symbol), lo, span.hi);
    for (const ref of list) {
      const w = windows.get(ref.symbol);
      if (w === undefined || gaps(activeAt(w.coverage, now), lo, span.hi).length > 0) continue;
      try {
        raws.set(ref.symbol, { ref, raw: readBlocks(w.blocks.map((b) => b.data), lo, span.hi).bars, adapter });
      } catch {
        // A damaged block: the per-symbol path reports it and asks the vendor.
      }
    }
  }
  let factors: Map<string, unknown[]> | undefined;
  if (adjust !== 'none' && raws.size > 0) {
    try {
      const loaded = await deps.service.exFactors([...raws.values()].map((r) => r.ref));
      for (const symbol of loaded.failed) raws.delete(symbol);
      factors = loaded.items as Map<string, unknown[]>;
      mergeStatus(out.status, loaded.status);
    } catch {
      raws.clear();
    }
  }
  const adapters = new Set<string>();
  // The day's window per region (a universe is one region: computed once, not per symbol).
  const windows = new Map<Region, { start: number; end: number }>();
  for (const ref of refs) {
    const stored = raws.get(ref.symbol);
    if (stored === undefined) {
      out.rest.push(ref);
      continue;
    }
    const events = ((factors?.get(ref.symbol) ?? []) as Parameters<typeof buildFromSpec>[0]['events']).map((f) => ({ ...f, prevClose: Number.NaN }));
    let day = windows.get(ref.region);
    if (day === undefined) {
      day = { start: localMidnight(ref.region, date), end: localMidnight(ref.region, addDays(date, 1)) - 1 };
      windows.set(ref.region, day);
    }
    const { start, end } = day;
    out.items.set(ref.symbol, buildFromSpec({
      raw: stored.raw, events, adjust, period, region: ref.region, minuteBase: period === '1m', window: { start, end, count: count(ref) + 1 },
    }));
    adapters.add(stored.adapter);
  }
  if (out.items.size > 0) {
    const status = out.status;
    if (!status.tiers.includes('store')) status.tiers.push('store');
    for (const adapter of adapters) {
      if (!status.adapters.includes(adapter)) status.adapters.push(adapter);
      if (deps.simulated.has(adapter)) status.simulated = true;
    }
    status.freshUntil = Math.min(status.freshUntil, now + deps.freshMs);
  }
  return out;
}
