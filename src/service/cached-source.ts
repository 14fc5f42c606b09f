// The data cache (DESIGN.md 5): normalised raw results per adapter chain, resource and symbol,
// shared across batches, windows and adjust types, bounded by bytes. Misses go through
// single-flight (one upstream call for N concurrent identical requests) and the batch loader
// (misses grouped into the adapter's native batch calls, overlapping batches sharing in-flight
// symbols). Past its TTL an entry is served while one background refresh runs
// (stale-while-revalidate); past that, it answers only if the refresh fails (stale-if-error).
// No client abort signal reaches a shared fetch: the upstream deadline bounds it instead.
import type { CandleQuery } from '../../adapters/types.ts';
import { createBatchLoader, createSingleFlight, type BatchLoader, type SingleFlight } from '../cache/batch-loader.ts';
import type { ByteCache } from '../cache/byte-cache.ts';
import { ttlFor, type CachePolicy, type TtlContext } from '../cache/ttl-policy.ts';
import type { Candles, PoolId, Region, SymbolRef } from '../domain.ts';
import { isAppError } from '../errors.ts';
import { isMarketOpen, minuteBarLabelFor, sessions, localDate } from '../markets/calendar.ts';
import { parseSymbol } from '../markets/symbols.ts';
import type { Metrics } from '../metrics.ts';
import { recordFailure, recordHit, recordMiss, recordStale } from './cache-report.ts';
import type { BatchResource, BatchResources, DataSource, DirectDataSource } from './data-source.ts';
import type { AdapterRouter } from './router.ts';
import { estimateBytes } from './estimate-bytes.ts';

export interface DataEntry {
  /** `undefined`: the upstream does not know this symbol (a negative entry). */
  value: unknown;
  adapter: string;
  freshUntil: number;
}

export interface CachedSourceOptions {
  router: AdapterRouter;
  direct: DirectDataSource;
  cache: ByteCache<DataEntry>;
  policy: CachePolicy;
  now: () => number;
  metrics?: Metrics;
}

/** Newest-N candle requests share one fetch of the next bucket size, windowed locally. */
const COUNT_BUCKETS = [256, 1024, 4096, 16_384, 65_536, 131_072];

function bucketCount(count: number): number {
  for (const bucket of COUNT_BUCKETS) if (count <= bucket) return bucket;
  return count;
}

function newestCount(candles: Candles, count: number): Candles {
  const n = candles.timestamp.length;
  if (n <= count) return candles;
  const from = n - count;
  const out: Candles = {
    timestamp: candles.timestamp.slice(from),
    open: candles.open.slice(from),
    high: candles.high.slice(from),
    low: candles.low.slice(from),
    close: candles.close.slice(from),
    volume: candles.volume.slice(from),
    amount: candles.amount.slice(from),
  };
  if (candles.prev_close) out.prev_close = candles.prev_close.slice(from);
  return out;
}

/** The next session open/close after `now`, so a "closed" TTL never outlives the opening bell. */
function nextSessionEdge(region: Region, now: number): number {
  const today = sessions(region, localDate(region, now));
  for (const window of today) {
    if (window.start > now) return window.start;
    if (window.end > now) return window.end;
  }
  return Number.POSITIVE_INFINITY;
}

export class CachedDataSource implements DataSource {
  readonly #o: CachedSourceOptions;
  readonly #loaders = new Map<string, BatchLoader<string, DataEntry>>();
  readonly #flight: SingleFlight;

  constructor(options: CachedSourceOptions) {
    this.#o = options;
    this.#flight = createSingleFlight({ onJoin: () => options.metrics?.singleflightWaiters.inc({ resource: 'single' }) });
  }

  #chainId(resource: Parameters<AdapterRouter['chain']>[0], region: Region): string {
    return this.#o.router.chain(resource, region).map((a) => a.id).join('>') || 'none';
  }

  #store(key: string, value: unknown, adapter: string, resource: Parameters<typeof ttlFor>[0], context: TtlContext, region: Region): DataEntry {
    const now = this.#o.now();
    const windows = ttlFor(resource, { ...context, notFound: value === undefined }, this.#o.policy);
    const edge = context.marketOpen || resource === 'candles' || value === undefined ? Number.POSITIVE_INFINITY : nextSessionEdge(region, now);
    const ttlMs = Math.max(1, Math.min(windows.ttlMs, edge - now));
    const entry: DataEntry = { value, adapter, freshUntil: now + ttlMs };
    this.#o.cache.set(key, entry, { ttlMs, swrMs: windows.swrMs, sieMs: windows.sieMs, size: estimateBytes(value) + 64 }, now);
    return entry;
  }

  #lookup(key: string, resource: string) {
    const hit = this.#o.cache.get(key, this.#o.now());
    this.#o.metrics?.cacheLookups.inc({ layer: 'data', resource, result: hit === undefined ? 'miss' : hit.state === 'fresh' ? 'hit' : hit.state });
    return hit;
  }

  /**
   * One cached value: fresh → served; stale (within SWR) → served, refreshed in the background;
   * expired (within SIE) or absent → fetched (single-flight); on failure an expired entry answers.
   */
  async #one(key: string, resource: Parameters<typeof ttlFor>[0], fetch: () => Promise<DataEntry>): Promise<DataEntry> {
    const hit = this.#lookup(key, resource);
    if (hit !== undefined && hit.state === 'fresh') {
      recordHit(hit.age, hit.value.freshUntil);
      return hit.value;
    }
    if (hit !== undefined && hit.state === 'stale') {
      recordStale(hit.age);
      this.#flight.run(key, fetch).catch(() => undefined);
      return hit.value;
    }
    try {
      const entry = await this.#flight.run(key, fetch);
      recordMiss(entry.freshUntil);
      return entry;
    } catch (error) {
      if (hit !== undefined && !(isAppError(error) && error.status < 500)) {
        recordStale(hit.age);
        return hit.value;
      }
      throw error;
    }
  }

  #loader(resource: BatchResource, region: Region): BatchLoader<string, DataEntry> {
    const id = `${resource}|${region}`;
    let loader = this.#loaders.get(id);
    if (loader === undefined) {
      const chain = this.#o.router.chain(resource, region);
      loader = createBatchLoader<string, DataEntry>({
        maxBatch: chain[0]?.capabilities.maxBatch ?? 100,
        // The adapter guard caps real concurrency per adapter; this only bounds queued chunks.
        concurrency: 64,
        onJoin: (joined) => {
          if (joined > 0) this.#o.metrics?.singleflightWaiters.inc({ resource }, joined);
        },
        load: async (symbols) => {
          const refs = symbols.map((s) => parseSymbol(s) as SymbolRef);
          const { items, adapter } = await this.#o.direct.batch(resource, region, refs);
          const chainId = this.#chainId(resource, region);
          const marketOpen = isMarketOpen(region, this.#o.now());
          const out = new Map<string, DataEntry>();
          for (const symbol of symbols) {
            out.set(symbol, this.#store(`${resource}|${chainId}|${symbol}`, items.get(symbol), adapter, resource, { marketOpen }, region));
          }
          return out;
        },
      });
      this.#loaders.set(id, loader);
    }
    return loader;
  }

  async batch<R extends BatchResource>(resource: R, region: Region, refs: SymbolRef[]) {
    const chainId = this.#chainId(resource, region);
    const items = new Map<string, BatchResources[R]>();
    const adapters = new Set<string>();
    const toFetch: string[] = [];
    const fallback = new Map<string, { entry: DataEntry; age: number }>();
    const toRefresh: string[] = [];
    const take = (symbol: string, entry: DataEntry) => {
      adapters.add(entry.adapter);
      if (entry.value !== undefined) items.set(symbol, entry.value as BatchResources[R]);
    };
    for (const ref of refs) {
      const hit = this.#lookup(`${resource}|${chainId}|${ref.symbol}`, resource);
      if (hit !== undefined && hit.state !== 'expired') {
        take(ref.symbol, hit.value);
        if (hit.state === 'fresh') recordHit(hit.age, hit.value.freshUntil);
        else {
          recordStale(hit.age);
          toRefresh.push(ref.symbol);
        }
        continue;
      }
      if (hit !== undefined) fallback.set(ref.symbol, { entry: hit.value, age: hit.age });
      toFetch.push(ref.symbol);
    }
    // One background refresh for all stale symbols, in native batch calls.
    if (toRefresh.length > 0) this.#loader(resource, region).loadMany(toRefresh).catch(() => undefined);
    if (toFetch.length > 0) {
      const results = await this.#loader(resource, region).loadMany(toFetch);
      let failures = 0;
      let lastError: unknown;
      for (const symbol of toFetch) {
        const result = results.get(symbol);
        if (result instanceof Error) {
          const stale = fallback.get(symbol);
          if (stale !== undefined && !(isAppError(result) && result.status < 500)) {
            recordStale(stale.age);
            take(symbol, stale.entry);
          } else {
            failures += 1;
            lastError = result;
            recordFailure();
          }
        } else if (result !== undefined) {
          recordMiss(result.freshUntil);
          take(symbol, result);
        }
      }
      // Every symbol of this market failed upstream: let the service decide (502/503/504).
      if (failures > 0 && failures === refs.length) throw lastError;
    }
    return { items, adapter: [...adapters][0] ?? chainId };
  }

  async candles(query: CandleQuery) {
    const region = query.symbol.region;
    const chainId = this.#chainId('candles', region);
    const bucketed = query.start === undefined && query.end === undefined && query.count !== undefined;
    const fetchQuery: CandleQuery = bucketed ? { ...query, count: bucketCount(query.count as number) } : query;
    const key = `candles|${chainId}|${query.symbol.symbol}|${query.period}|${fetchQuery.start ?? ''}|${fetchQuery.end ?? ''}|${fetchQuery.count ?? ''}`;
    const entry = await this.#one(key, 'candles', async () => {
      const { value, adapter } = await this.#o.direct.candles(fetchQuery);
      const now = this.#o.now();
      const currentBar = fetchQuery.end === undefined || fetchQuery.end >= now - 86_400_000;
      return this.#store(key, value, adapter, 'candles', { marketOpen: isMarketOpen(region, now), currentBar }, region);
    });
    const candles = entry.value as Candles | undefined;
    return { value: candles !== undefined && bucketed ? newestCount(candles, query.count as number) : candles, adapter: entry.adapter };
  }

  async intraday(ref: SymbolRef) {
    const chainId = this.#chainId('intraday', ref.region);
    const key = `intraday|${chainId}|${ref.symbol}`;
    const entry = await this.#one(key, 'intraday', async () => {
      const { value, adapter } = await this.#o.direct.intraday(ref);
      const now = this.#o.now();
      const marketOpen = isMarketOpen(ref.region, now);
      const nextBarClose = marketOpen ? minuteBarLabelFor(ref.region, now, 1) : undefined;
      return this.#store(key, value, adapter, 'intraday', { marketOpen, nextBarClose, now }, ref.region);
    });
    return { value: entry.value as Candles | undefined, adapter: entry.adapter };
  }

  async pool(id: PoolId, region: Region) {
    const chainId = this.#chainId('pools', region);
    const key = `pools|${chainId}|${id}`;
    const entry = await this.#one(key, 'pools', async () => {
      const { value, adapter } = await this.#o.direct.pool(id, region);
      return this.#store(key, value, adapter.id, 'pools', { marketOpen: false }, region);
    });
    const adapter = this.#o.router.adapters.get(entry.adapter) ?? [...this.#o.router.adapters.values()][0];
    return { value: entry.value as Awaited<ReturnType<DataSource['pool']>>['value'], adapter };
  }
}
