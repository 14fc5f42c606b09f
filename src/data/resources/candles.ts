// Historical candles (raw base bars, 1m and 1d): one window per call. The history store is a tier
// in front of the router when one is configured: a window it holds whole is served with no vendor
// call; otherwise a store pass asks for only the missing ranges (the loader runs each as one
// logical vendor call) and, when every vendor of the chain fails, the stored closed bars answer
// (stale, the forming bar said to be stale or absent). The forming bar is priced like quotes.
import { calendarKeyOf, marketOf } from '../../markets/symbols.ts';
import type { CandleQuery } from '../../../adapters/types.ts';
import { packedCandleBound } from '../../cache/candle-codec.ts';
import { estimateBytes } from '../../cache/estimate-bytes.ts';
import { live, type CacheWindows, type LiveWindows, type TtlContext } from '../../cache/ttl-policy.ts';
import type { Candles as CandlesValue } from '../../domain.ts';
import { isMarketOpen } from '../../markets/calendar.ts';
import { DAY_MS } from '../../markets/time.ts';
import { Candles } from '../../schemas.ts';
import type { HistoryStore } from '../../store/index.ts';
import { windowFor } from '../../store/plan.ts';
import type { StoreTier } from '../loader.ts';
import type { FormingState } from '../status.ts';
import { invoke, own, type PolicyView, type ResourceDescriptor } from './descriptor.ts';

/**
 * Candles are stored packed (cache/candle-codec.ts): the memory tier charges the packed buffer's
 * exact bytes itself; this bound (no scan of the values) is what other byte-bounded tiers get.
 */
export function candleBytes(value: CandlesValue | undefined): number {
  return value === undefined ? estimateBytes(value) : packedCandleBound(value);
}

function candleKey(q: CandleQuery): string {
  return `${q.symbol.symbol}|${q.period}|${q.start ?? ''}|${q.end ?? ''}|${q.count ?? ''}`;
}

/** Newest-N candle requests share one fetch of a bucket size, windowed locally (≤ 1.25× needed). */
export function bucketCount(count: number): number {
  let bucket = 256;
  while (bucket < count) bucket = Math.ceil(bucket * 1.25);
  return bucket;
}

/**
 * Whether a window that wants today's forming bar has it in `value` (`stale`: the last one known)
 * or not (`absent`); undefined when the window does not reach a forming bar.
 */
export function formingOf(query: CandleQuery, value: CandlesValue, now: number): FormingState | undefined {
  const open = windowFor(calendarKeyOf(query.symbol), query.period, query, now).open;
  if (open === undefined) return undefined;
  const last = value.timestamp.at(-1);
  return last !== undefined && last >= open ? 'stale' : 'absent';
}

/** The history store as the candles' tier (adapters in `off` bypass it). */
function candleStore(history: HistoryStore, off: ReadonlySet<string>, now: () => number): StoreTier<CandleQuery, CandlesValue> {
  return {
    keeps: (adapterId) => !off.has(adapterId),
    read: async (adapterId, [query]) => {
      const stored = await history.stored(adapterId, query);
      return stored === undefined ? new Map() : new Map([[candleKey(query), stored]]);
    },
    pass: (adapterId, query) => history.pass(adapterId, query),
    salvage: async (adapterIds, query) => {
      for (const adapter of adapterIds) {
        const value = await history.salvage(adapter, query);
        if (value !== undefined) return { value, adapter, ageMs: 0 };
      }
      return undefined;
    },
    forming: (query, value) => formingOf(query, value, now()),
    symbol: (query) => query.symbol.symbol,
  };
}

// Closed bars keep a day; a window with the forming bar changes with every trade (the quotes'
// TTL and SWR) but keeps the candles' stale-if-error window: old bars beat a 503 in an outage.
function ttl(context: TtlContext, policy: PolicyView): CacheWindows {
  if (context.notFound) return { ...policy.negative };
  const closed = own<CacheWindows>(policy, 'candles');
  if (!context.currentBar) return { ...closed };
  const quotes = live(own<LiveWindows>(policy, 'quotes'), context.marketOpen);
  return { ttlMs: quotes.ttlMs, swrMs: quotes.swrMs, sieMs: closed.sieMs };
}

export const candles: ResourceDescriptor<'candles', CandleQuery, CandlesValue, CacheWindows, 'klines_daily' | 'klines_minute'> = {
  name: 'candles',
  features: ['klines_daily', 'klines_minute'],
  method: 'getCandles',
  schema: Candles,
  policy: {
    defaults: { ttlMs: DAY_MS, swrMs: 60_000, sieMs: DAY_MS },
    fromConfig: (c) => ({ ttlMs: c.ttl.closedBarsMs, swrMs: c.staleWhileRevalidate.candlesMs, sieMs: c.staleIfError.candlesMs }),
  },
  ttl,
  spec: (deps) => ({
    resource: 'candles',
    key: candleKey,
    region: (q) => marketOf(q.symbol),
    need: (q) => ({ period: q.period, rawPrices: true }),
    batch: false,
    fetch: async (adapter, [query], ctx) => {
      const found = await invoke<CandlesValue | undefined>(adapter, 'getCandles', query, ctx);
      return found === undefined ? new Map() : new Map([[candleKey(query), found]]);
    },
    ...(deps.history === undefined ? {} : { store: candleStore(deps.history, deps.historyOffFor ?? new Set(), deps.now) }),
    windows: (value, q, now) => ttl({
      marketOpen: isMarketOpen(calendarKeyOf(q.symbol), now),
      currentBar: q.end === undefined || q.end >= now - DAY_MS,
      notFound: value === undefined,
    }, deps.policy),
    size: candleBytes,
  }),
};
