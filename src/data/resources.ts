// Every resource the loader serves, as data: key, market, batching, the adapter method, and one
// line of TTL policy (cache/ttl-policy.ts). Adding a resource: a domain type, an adapter method,
// a route, and an entry here.
import type { Adapter, CandleQuery } from '../../adapters/types.ts';
import type { VendorCall } from '../upstream/router.ts';
import { packedCandleBound } from '../cache/candle-codec.ts';
import { estimateBytes } from '../cache/estimate-bytes.ts';
import type { TierWindows } from '../cache/tier.ts';
import { ttlFor, type CachePolicy, type TtlContext } from '../cache/ttl-policy.ts';
import type { Candles, Depth, ExFactor, Instrument, PoolDetail, PoolId, Quote, Region, SymbolRef } from '../domain.ts';
import { isMarketOpen, localDate, minuteBarLabelFor, sessions } from '../markets/calendar.ts';
import { DAY_MS } from '../markets/time.ts';
import type { ResourceSpec } from './loader.ts';

/** The next session open/close after `now`, so a "closed" TTL never outlives the opening bell. */
function nextSessionEdge(region: Region, now: number): number {
  for (const window of sessions(region, localDate(region, now))) {
    if (window.start > now) return window.start;
    if (window.end > now) return window.end;
  }
  return Number.POSITIVE_INFINITY;
}

/** Live data priced by market state, never living past the next session edge while closed. */
function liveWindows(resource: 'quotes' | 'depth', policy: CachePolicy, region: Region, now: number, notFound: boolean): TierWindows {
  const marketOpen = isMarketOpen(region, now);
  const windows = ttlFor(resource, { marketOpen, notFound }, policy);
  if (marketOpen || notFound) return windows;
  return { ...windows, ttlMs: Math.max(1, Math.min(windows.ttlMs, nextSessionEdge(region, now) - now)) };
}

function bySymbolSpec<T>(
  resource: 'quotes' | 'depth' | 'instruments' | 'exFactors',
  call: (adapter: Adapter, refs: SymbolRef[], vendor: VendorCall) => Promise<Map<string, T>>,
  windows: ResourceSpec<SymbolRef, T>['windows'],
): ResourceSpec<SymbolRef, T> {
  return {
    resource,
    key: (ref) => ref.symbol,
    region: (ref) => ref.region,
    batch: true,
    fetch: call,
    windows,
    size: (value) => estimateBytes(value),
  };
}

/**
 * Candles are stored packed (cache/candle-codec.ts): the memory tier charges the packed buffer's
 * exact bytes itself; this bound (no scan of the values) is what other byte-bounded tiers get.
 */
function candleBytes(value: Candles | undefined): number {
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

export interface Resources {
  quotes: ResourceSpec<SymbolRef, Quote>;
  depth: ResourceSpec<SymbolRef, Depth>;
  instruments: ResourceSpec<SymbolRef, Instrument>;
  exFactors: ResourceSpec<SymbolRef, ExFactor[]>;
  candles: ResourceSpec<CandleQuery, Candles>;
  intraday: ResourceSpec<SymbolRef, Candles>;
  pools: ResourceSpec<{ id: PoolId; region: Region }, PoolDetail>;
}

/**
 * How the candles resource reaches the adapter: one vendor call, or through the history store,
 * which answers stored bars itself and makes one vendor call per missing range.
 */
export type CandleFetch = (adapter: Adapter, query: CandleQuery, vendor: VendorCall) => Promise<Candles | undefined>;

export const directCandles: CandleFetch = (adapter, query, vendor) => vendor((ctx) => adapter.getCandles(query, ctx));

export function createResources(policy: CachePolicy, fetchCandles: CandleFetch = directCandles): Resources {
  const reference = (resource: 'instruments' | 'exFactors') => (value: unknown) => ttlFor(resource, { marketOpen: false, notFound: value === undefined }, policy);
  return {
    quotes: bySymbolSpec('quotes', (a, refs, vendor) => vendor((ctx) => a.getQuotes(refs, ctx)), (value, ref, now) => liveWindows('quotes', policy, ref.region, now, value === undefined)),
    depth: bySymbolSpec('depth', (a, refs, vendor) => vendor((ctx) => a.getDepth(refs, ctx)), (value, ref, now) => liveWindows('depth', policy, ref.region, now, value === undefined)),
    instruments: bySymbolSpec<Instrument>('instruments', (a, refs, vendor) => vendor((ctx) => a.getInstruments(refs, ctx)), reference('instruments')),
    exFactors: bySymbolSpec<ExFactor[]>('exFactors', (a, refs, vendor) => vendor((ctx) => a.getExFactors(refs, ctx)), reference('exFactors')),
    candles: {
      resource: 'candles',
      key: candleKey,
      region: (q) => q.symbol.region,
      need: (q) => ({ period: q.period, rawPrices: true }),
      batch: false,
      fetch: async (adapter, [query], vendor) => {
        const candles = await fetchCandles(adapter, query, vendor);
        return candles === undefined ? new Map() : new Map([[candleKey(query), candles]]);
      },
      windows: (value, q, now) => {
        const context: TtlContext = {
          marketOpen: isMarketOpen(q.symbol.region, now),
          currentBar: q.end === undefined || q.end >= now - DAY_MS,
          notFound: value === undefined,
        };
        return ttlFor('candles', context, policy);
      },
      size: candleBytes,
    },
    intraday: {
      resource: 'intraday',
      key: (ref) => ref.symbol,
      region: (ref) => ref.region,
      batch: false,
      fetch: async (adapter, [ref], vendor) => {
        const candles = await vendor((ctx) => adapter.getIntraday(ref, ctx));
        return candles === undefined ? new Map() : new Map([[ref.symbol, candles]]);
      },
      windows: (value, ref, now) => {
        const marketOpen = isMarketOpen(ref.region, now);
        const nextBarClose = marketOpen ? minuteBarLabelFor(ref.region, now, 1) : undefined;
        const windows = ttlFor('intraday', { marketOpen, nextBarClose, now, notFound: value === undefined }, policy);
        if (marketOpen || value === undefined) return windows;
        return { ...windows, ttlMs: Math.max(1, Math.min(windows.ttlMs, nextSessionEdge(ref.region, now) - now)) };
      },
      size: candleBytes,
    },
    pools: {
      resource: 'pools',
      key: (q) => q.id,
      region: (q) => q.region,
      batch: false,
      fetch: async (adapter, [q], vendor) => {
        const pool = await vendor((ctx) => adapter.listPool(q.id, ctx));
        return pool === undefined ? new Map() : new Map([[q.id, pool]]);
      },
      windows: (value) => ttlFor('pools', { marketOpen: false, notFound: value === undefined }, policy),
      size: (value) => estimateBytes(value),
    },
  };
}
