// The one data loader (DESIGN.md 5): a resource is described as data (resources.ts) and every
// request for it goes the same way:
//
//   tiers in order (memory, then Redis when configured)  → fresh: served
//                                                         → stale (SWR): served, refreshed in the background
//                                                         → expired (SIE) or absent: fetched; an expired
//                                                           entry answers only if the fetch fails upstream
//   single-flight and batching (here, once)              → concurrent requests for one key share one
//                                                           fetch; misses are grouped into the adapter's
//                                                           native batch calls (maxBatch)
//   router → resilience → one adapter call
//
// The result is a value: found items, unknown keys (answers: cached negatively), failed keys
// (the upstream failed and nothing stale could answer: never cached) and a DataStatus. A 4xx
// from the upstream is the client's answer and is thrown as is. No client abort signal reaches a
// shared fetch: the deadline (from the moment the data is first needed) bounds it instead.
import type { Adapter, BySymbol, Resource } from '../../adapters/types.ts';
import type { Tier, TierHit, TierWindows } from '../cache/tier.ts';
import type { FillLock } from '../cache/fill-lock.ts';
import type { MemoryTier } from '../cache/memory-tier.ts';
import { estimateBytes } from '../cache/estimate-bytes.ts';
import type { Region } from '../domain.ts';
import { AppError, isAppError } from '../errors.ts';
import type { AdapterRouter, Need, VendorCall } from '../upstream/router.ts';
import { emptyStatus, recordHit, recordMiss, recordStale, type DataStatus } from './status.ts';

/** What every tier stores for one key. `value` undefined: the vendor does not know it. */
export interface DataEntry {
  value: unknown;
  adapter: string;
  freshUntil: number;
}

/** A resource, as data: how to key it, fetch it and how long to keep it. */
export interface ResourceSpec<Q, T> {
  resource: Resource;
  /** The per-item part of the cache key (a symbol, a candle window…). */
  key(query: Q): string;
  region(query: Q): Region;
  /** Capabilities this query needs beyond resource × market. */
  need?(query: Q): Need;
  /** True: one adapter call takes up to maxBatch queries; false: one call per query. */
  batch: boolean;
  /**
   * `queries` from `adapter`, keyed by key(q); absent keys are unknown. Each vendor request goes
   * through `vendor` (one logical call under the adapter's resilience layer); what the resource
   * can answer without the vendor (stored history) goes around it.
   */
  fetch(adapter: Adapter, queries: Q[], vendor: VendorCall): Promise<Map<string, T>>;
  /** The TTL policy: windows for a value (undefined: unknown) fetched at `now`. */
  windows(value: T | undefined, query: Q, now: number): TierWindows;
  /** Bytes of a value for the byte-bounded tiers. */
  size(value: T | undefined): number;
  /**
   * Folds a fresh fetch into what the tiers still hold for the key (stale or expired, before it
   * is replaced), for resources whose history a refetch must not erase: financial statements
   * keep a restated period's earlier version beside the new one. Without it a fetch replaces.
   */
  merge?(previous: T, fresh: T): T;
}

export interface LoadResult<T> {
  items: Map<string, T>;
  /** Keys the vendor does not know, in request order. */
  unknown: string[];
  /** Keys whose upstream failed with nothing stale to serve, with the error. */
  failed: Map<string, unknown>;
  status: DataStatus;
}

export interface LoaderOptions {
  router: AdapterRouter;
  /** In order; the first is the in-process tier. Empty: no caching at all. */
  tiers: Tier<DataEntry>[];
  now: () => number;
  isSimulated(adapterId: string): boolean;
  onLookup?(resource: Resource, result: 'hit' | 'miss' | 'stale' | 'expired'): void;
  onJoin?(resource: Resource, joined: number): void;
  /** An adapter answered a fetch for `region` (the app warns when that adapter is simulated). */
  onFetched?(adapter: string, region: Region): void;
  /**
   * Cross-instance single-flight (Redis): a miss takes a short lock per key; the instance that
   * wins fetches and writes the shared tier, the others wait (at most `lockWaitMs` from when the
   * data was needed, then fetch themselves) and read it from there.
   */
  lock?: FillLock;
  lockWaitMs?: number;
}

interface Queued<Q> {
  key: string;
  query: Q;
  neededAt: number;
  resolve(entry: DataEntry): void;
  reject(error: unknown): void;
}

interface Found {
  hit: TierHit<DataEntry>;
  tier: string;
}

export class Loader {
  readonly #o: LoaderOptions;
  readonly #inFlight = new Map<string, Promise<DataEntry>>();
  /** Keys won under the fill lock, waiting for the next turn to be fetched in native batches. */
  readonly #queued = new Map<string, { spec: ResourceSpec<unknown, unknown>; region: Region; items: Queued<unknown>[] }>();

  readonly #memoryOnly: boolean;

  constructor(options: LoaderOptions) {
    this.#o = options;
    this.#memoryOnly = options.tiers.length === 1 && typeof (options.tiers[0] as Partial<MemoryTier<DataEntry>>).peek === 'function';
  }

  #chainId(resource: Resource, region: Region): string {
    return this.#o.router.configuredChain(resource, region).join('>') || 'none';
  }

  cacheKey<Q>(spec: ResourceSpec<Q, unknown>, query: Q): string {
    return `${spec.resource}|${this.#chainId(spec.resource, spec.region(query))}|${spec.key(query)}`;
  }

  #peekMemory(key: string): Found | undefined {
    const memory = this.#o.tiers[0] as Partial<MemoryTier<DataEntry>> & Tier<DataEntry> | undefined;
    const hit = memory?.peek?.(key);
    return hit === undefined ? undefined : { hit, tier: memory!.name };
  }

  async #lookup(key: string): Promise<Found | undefined> {
    const [first, ...rest] = this.#o.tiers;
    if (first === undefined) return undefined;
    const peek = (first as Partial<MemoryTier<DataEntry>>).peek;
    const memory = peek !== undefined ? peek(key) : await first.get(key);
    if (memory !== undefined && memory.state === 'fresh') return { hit: memory, tier: first.name };
    for (const tier of rest) {
      const hit = await tier.get(key);
      if (hit === undefined) continue;
      // Fill the tiers above with the original windows and age.
      void first.set(key, hit.value, { ...hit.windows, size: estimateBytes(hit.value.value) + 64, storedAt: hit.storedAt });
      if (hit.state === 'fresh' || memory === undefined) return { hit, tier: tier.name };
    }
    return memory === undefined ? undefined : { hit: memory, tier: first.name };
  }

  /** Load `queries` of one resource (any markets): see the header. */
  async load<Q, T>(spec: ResourceSpec<Q, T>, queries: readonly Q[], options: { neededAt?: number } = {}): Promise<LoadResult<T>> {
    const neededAt = options.neededAt ?? this.#o.now();
    const status = emptyStatus();
    const items = new Map<string, T>();
    const unknown: string[] = [];
    const failed = new Map<string, unknown>();
    const order: string[] = [];
    const toFetch: Array<{ id: string; key: string; query: Q; fallback?: Found }> = [];
    const toRefresh: Array<{ id: string; key: string; query: Q }> = [];
    const seen = new Set<string>();

    const take = (id: string, entry: DataEntry) => {
      if (entry.value === undefined) unknown.push(id);
      else items.set(id, entry.value as T);
    };

    for (const query of queries) {
      const id = spec.key(query);
      if (seen.has(id)) continue;
      seen.add(id);
      order.push(id);
      const key = this.cacheKey(spec, query);
      // Memory alone answers without a promise; a shared tier behind it needs one.
      const found = this.#memoryOnly ? this.#peekMemory(key) : await this.#lookup(key);
      const state = found?.hit.state;
      this.#o.onLookup?.(spec.resource, state === undefined ? 'miss' : state === 'fresh' ? 'hit' : state);
      if (found !== undefined && (state === 'fresh' || state === 'stale')) {
        const entry = found.hit.value;
        const simulated = this.#o.isSimulated(entry.adapter);
        if (state === 'fresh') recordHit(status, found.tier, found.hit.age, entry.freshUntil, entry.adapter, simulated);
        else {
          recordStale(status, found.tier, found.hit.age, entry.adapter, simulated);
          toRefresh.push({ id, key, query });
        }
        take(id, entry);
        continue;
      }
      toFetch.push({ id, key, query, fallback: found });
    }

    if (toRefresh.length > 0) {
      const refreshing = this.#fetchMany(spec, toRefresh, this.#o.now());
      for (const promise of refreshing.values()) promise.catch(() => undefined);
    }
    if (toFetch.length > 0) {
      const pending = this.#fetchMany(spec, toFetch, neededAt);
      const settled = await Promise.allSettled(toFetch.map((item) => pending.get(item.key) as Promise<DataEntry>));
      settled.forEach((outcome, index) => {
        const item = toFetch[index];
        if (outcome.status === 'fulfilled') {
          recordMiss(status, outcome.value.freshUntil, outcome.value.adapter, this.#o.isSimulated(outcome.value.adapter));
          take(item.id, outcome.value);
          return;
        }
        const error = outcome.reason;
        if (isAppError(error) && error.status < 500) throw error;
        if (item.fallback !== undefined) {
          const entry = item.fallback.hit.value;
          recordStale(status, item.fallback.tier, item.fallback.hit.age, entry.adapter, this.#o.isSimulated(entry.adapter));
          take(item.id, entry);
          return;
        }
        // The vendor was asked (and failed): never a HIT.
        status.miss = true;
        failed.set(item.id, error);
      });
    }
    // Keep request order for unknown keys (the route lists them in X-Missing-Symbols).
    const unknownSet = new Set(unknown);
    return { items, unknown: order.filter((id) => unknownSet.has(id)), failed, status };
  }

  /** One key's value, or throws its upstream error (single-key resources: candles, intraday, pools). */
  async loadOne<Q, T>(spec: ResourceSpec<Q, T>, query: Q, options: { neededAt?: number } = {}): Promise<{ value: T | undefined; status: DataStatus }> {
    const result = await this.load(spec, [query], options);
    const id = spec.key(query);
    const error = result.failed.get(id);
    if (error !== undefined) throw error;
    return { value: result.items.get(id), status: result.status };
  }

  /**
   * Start (or join) fetches for `wanted`: keys already in flight are joined; the rest are grouped
   * per market into chunks of the chain's smallest maxBatch, one adapter call each.
   */
  #fetchMany<Q, T>(spec: ResourceSpec<Q, T>, wanted: Array<{ key: string; query: Q }>, neededAt: number): Map<string, Promise<DataEntry>> {
    const out = new Map<string, Promise<DataEntry>>();
    const missing = new Map<Region, Array<{ key: string; query: Q }>>();
    let joined = 0;
    for (const item of wanted) {
      if (out.has(item.key)) continue;
      const shared = this.#inFlight.get(item.key);
      if (shared !== undefined) {
        out.set(item.key, shared);
        joined += 1;
        continue;
      }
      const region = spec.region(item.query);
      const group = missing.get(region);
      if (group) group.push(item);
      else missing.set(region, [item]);
      out.set(item.key, undefined as unknown as Promise<DataEntry>);
    }
    if (joined > 0) this.#o.onJoin?.(spec.resource, joined);

    const lock = this.#o.lock;
    if (lock !== undefined) {
      const waitUntil = neededAt + (this.#o.lockWaitMs ?? 5_000);
      for (const [region, group] of missing) {
        for (const item of group) {
          const entry = lock.run(item.key, { deadlineAt: waitUntil }, () => this.#enqueue(spec, region, item, neededAt), () => this.#readShared(item.key));
          this.#track(item.key, entry);
          out.set(item.key, entry);
        }
      }
      return out;
    }
    for (const [region, group] of missing) {
      const size = spec.batch ? this.#batchSize(spec, region, group[0].query) : 1;
      for (let i = 0; i < group.length; i += size) {
        const chunk = group.slice(i, i + size);
        const loaded = this.#fetchChunk(spec, region, chunk, neededAt);
        for (const item of chunk) {
          const entry = loaded.then((entries) => settled(entries, item.key));
          this.#track(item.key, entry);
          out.set(item.key, entry);
        }
      }
    }
    return out;
  }

  #track(key: string, entry: Promise<DataEntry>): void {
    const settle = () => {
      if (this.#inFlight.get(key) === entry) this.#inFlight.delete(key);
    };
    entry.then(settle, settle);
    this.#inFlight.set(key, entry);
  }

  /** A key this instance won the fill lock for: fetched with the others of this turn, batched. */
  #enqueue<Q, T>(spec: ResourceSpec<Q, T>, region: Region, item: { key: string; query: Q }, neededAt: number): Promise<DataEntry> {
    return new Promise<DataEntry>((resolve, reject) => {
      const id = `${spec.resource}|${region}`;
      let queue = this.#queued.get(id);
      if (queue === undefined) {
        queue = { spec: spec as ResourceSpec<unknown, unknown>, region, items: [] };
        this.#queued.set(id, queue);
        setImmediate(() => this.#flush(id));
      }
      queue.items.push({ key: item.key, query: item.query, neededAt, resolve, reject } as Queued<unknown>);
    });
  }

  #flush(id: string): void {
    const queue = this.#queued.get(id);
    if (queue === undefined) return;
    this.#queued.delete(id);
    const { spec, region, items } = queue;
    const size = spec.batch ? this.#batchSize(spec, region, items[0].query) : 1;
    for (let i = 0; i < items.length; i += size) {
      const chunk = items.slice(i, i + size);
      const neededAt = Math.min(...chunk.map((item) => item.neededAt));
      this.#fetchChunk(spec, region, chunk, neededAt).then(
        (entries) => {
          for (const item of chunk) {
            try {
              item.resolve(settled(entries, item.key));
            } catch (error) {
              item.reject(error);
            }
          }
        },
        (error: unknown) => {
          for (const item of chunk) item.reject(error);
        },
      );
    }
  }

  /** What another instance filled: a fresh entry in a shared tier, copied into the memory tier. */
  async #readShared(key: string): Promise<DataEntry | undefined> {
    const [first, ...shared] = this.#o.tiers;
    for (const tier of shared) {
      const hit = await tier.get(key);
      if (hit === undefined || hit.state !== 'fresh') continue;
      void first?.set(key, hit.value, { ...hit.windows, size: estimateBytes(hit.value.value) + 64, storedAt: hit.storedAt });
      return hit.value;
    }
    return undefined;
  }

  /** What the tiers still hold for `keys` (any state), the first tier that has each. */
  async #held(keys: string[]): Promise<Map<string, unknown>> {
    const out = new Map<string, unknown>();
    for (const key of keys) {
      for (const tier of this.#o.tiers) {
        const hit = await tier.get(key);
        if (hit === undefined || hit.value.value === undefined) continue;
        out.set(key, hit.value.value);
        break;
      }
    }
    return out;
  }

  #batchSize<Q>(spec: ResourceSpec<Q, unknown>, region: Region, sample: Q): number {
    const chain = this.#o.router.chain(spec.resource, region, spec.need?.(sample));
    let size = Number.POSITIVE_INFINITY;
    for (const adapter of chain) size = Math.min(size, adapter.capabilities.maxBatch);
    return Number.isFinite(size) ? Math.max(1, size) : 1;
  }

  async #fetchChunk<Q, T>(spec: ResourceSpec<Q, T>, region: Region, chunk: Array<{ key: string; query: Q }>, neededAt: number): Promise<Map<string, DataEntry | AppError>> {
    const queries = chunk.map((item) => item.query);
    const { value: found, adapter } = await this.#o.router.serve(
      spec.resource, region, (a, vendor) => spec.fetch(a, queries, vendor), { need: spec.need?.(queries[0]), neededAt },
    );
    this.#o.onFetched?.(adapter.id, region);
    const previous = spec.merge === undefined ? undefined : await this.#held(chunk.map((item) => item.key));
    const now = this.#o.now();
    const entries = new Map<string, DataEntry | AppError>();
    const rejected = (found as BySymbol<T>).rejected;
    const writes: Promise<void>[] = [];
    for (const item of chunk) {
      let value = found.get(spec.key(item.query));
      const before = previous?.get(item.key);
      // Only what the same adapter chain served is folded in (the key includes the chain).
      if (value !== undefined && before !== undefined) value = spec.merge!(before as T, value);
      if (value === undefined && rejected?.has(spec.key(item.query))) {
        // The vendor sent only invalid rows for it: a failure of this symbol, never "unknown".
        entries.set(item.key, new AppError('UPSTREAM_BAD_RESPONSE', `${adapter.label} sent no usable data for ${spec.key(item.query)}`, {
          details: { adapter: adapter.id, resource: spec.resource },
        }));
        continue;
      }
      const windows = spec.windows(value, item.query, now);
      const entry: DataEntry = { value, adapter: adapter.id, freshUntil: now + windows.ttlMs };
      entries.set(item.key, entry);
      // Written before the in-flight entry settles (and, shared, before the fill lock releases
      // its waiters), so there is no gap where a key is neither.
      if (windows.ttlMs > 0) {
        const size = spec.size(value) + 64;
        for (const tier of this.#o.tiers) writes.push(tier.set(item.key, entry, { ...windows, size, storedAt: now }));
      }
    }
    await Promise.all(writes);
    return entries;
  }
}

/** One key's entry from a chunk, or its failure. */
function settled(entries: Map<string, DataEntry | AppError>, key: string): DataEntry {
  const entry = entries.get(key);
  if (entry instanceof AppError) throw entry;
  return entry as DataEntry;
}

/** Every key failed upstream: the most telling of their errors answers (DESIGN.md 4.1). */
export function totalFailure(failed: Map<string, unknown>): AppError {
  let chosen: unknown;
  for (const error of failed.values()) {
    chosen = error;
    if (isAppError(error) && error.reason === 'UPSTREAM_UNAVAILABLE') break;
  }
  return isAppError(chosen) ? chosen : new AppError('UPSTREAM_ERROR', 'the upstream vendor failed', { cause: chosen });
}
