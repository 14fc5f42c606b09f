// Historical candles (raw base bars, 1m and 1d): one window per call. Closed bars come from the
// candle store in front of the vendor when one is configured (only missing ranges reach the
// vendor, each as one logical call); the forming bar is priced like quotes.
import type { Adapter, CandleQuery } from '../../../adapters/types.ts';
import { packedCandleBound } from '../../cache/candle-codec.ts';
import { estimateBytes } from '../../cache/estimate-bytes.ts';
import { live, type CacheWindows, type LiveWindows, type TtlContext } from '../../cache/ttl-policy.ts';
import type { Candles as CandlesValue } from '../../domain.ts';
import { isMarketOpen } from '../../markets/calendar.ts';
import { DAY_MS } from '../../markets/time.ts';
import { Candles } from '../../schemas.ts';
import type { VendorCall } from '../../upstream/router.ts';
import { call, own, type PolicyView, type SpecDeps, type ResourceDescriptor } from './descriptor.ts';

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

/** The raw window from `adapter`: the store's stored bars plus vendor calls for what it lacks. */
function fetchCandles(deps: SpecDeps, adapter: Adapter, query: CandleQuery, vendor: VendorCall): Promise<CandlesValue | undefined> {
  const direct = (q: CandleQuery, options?: { neededAt?: number }) => call<CandlesValue | undefined>(adapter, 'getCandles', vendor, (ctx) => [q, ctx], options);
  const store = deps.history;
  if (store === undefined || deps.historyOffFor?.has(adapter.id) === true) return direct(query);
  return store.candles(adapter.id, query, direct);
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
    region: (q) => q.symbol.region,
    need: (q) => ({ period: q.period, rawPrices: true }),
    batch: false,
    fetch: async (adapter, [query], vendor) => {
      const found = await fetchCandles(deps, adapter, query, vendor);
      return found === undefined ? new Map() : new Map([[candleKey(query), found]]);
    },
    windows: (value, q, now) => ttl({
      marketOpen: isMarketOpen(q.symbol.region, now),
      currentBar: q.end === undefined || q.end >= now - DAY_MS,
      notFound: value === undefined,
    }, deps.policy),
    size: candleBytes,
  }),
};
