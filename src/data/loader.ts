// The one data loader: a resource is described as data (resources/) and every request for it
// goes the same way:
//
//   tiers in order (memory, then Redis when configured)  → fresh: served
//                                                         → stale (SWR): served, refreshed in the background
//                                                         → expired (SIE) or absent: fetched; an expired
//                                                           entry answers only if the fetch fails upstream
//   single-flight and batching (here, once)              → concurrent requests for one key share one
//                                                           fetch; misses are grouped into the adapter's
//                                                           native batch calls (maxBatch)
//   the store tier (history: candles, ex-factors,        → what it holds that needs no vendor call is
//   instruments), for each adapter of the chain in order   served, whatever the vendors' state
//   router → resilience → one adapter call               → for what the tiers cannot answer; a store
//                                                           pass's vendor requests are run here, each
//                                                           one logical call of the adapter
//   the vendor chain failed                              → an expired entry, else what the store holds
//                                                           (stale), else the failure
//
// The result is a value: found items, unknown keys (answers: cached negatively), failed keys
// (the upstream failed and nothing stale could answer: never cached) and a DataStatus. A 4xx
// from the upstream is the client's answer and is thrown as is. No client abort signal reaches a
// shared fetch: the deadline (from the moment the data is first needed) bounds it instead.
import type { Adapter, BySymbol, CallContext, Resource } from '../../adapters/types.ts';
import type { Tier, TierHit, TierWindows } from '../cache/tier.ts';
import type { FillLock } from '../cache/fill-lock.ts';
import type { MemoryTier } from '../cache/memory-tier.ts';
import { estimateBytes } from '../cache/estimate-bytes.ts';
import type { Market } from '../domain.ts';
import { AppError, isAppError } from '../errors.ts';
import { attemptOf, chainFailure, type Attempt } from '../upstream/attempts.ts';
import { asUpstreamError, type AdapterRouter, type Need } from '../upstream/router.ts';
import { createSingleFlight, type SingleFlight } from './single-flight.ts';
import { emptyStatus, noteForming, recordHit, recordMiss, recordStale, type DataStatus, type FormingState } from './status.ts';

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
  /** The market the query routes by: a region, or CN_FUTURES for a futures contract (through the CN chain). */
  region(query: Q): Market;
  /** Capabilities this query needs beyond resource × market. */
  need?(query: Q): Need;
  /** True: one adapter call takes up to maxBatch queries; false: one call per query. */
  batch: boolean;
  /**
   * One call of `adapter` for `queries`, keyed by key(q); absent keys are unknown. The router runs
   * it under the adapter's resilience layer (one logical vendor call).
   */
  fetch(adapter: Adapter, queries: Q[], ctx: CallContext): Promise<Map<string, T>>;
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
  /** The history store as a tier between the shared tiers and the router. */
  store?: StoreTier<Q, T>;
}

/** A vendor request of a store pass: one query of the resource; `neededAt` starts its deadline. */
export interface PassRequest<Q> {
  query: Q;
  neededAt?: number;
}

/**
 * The history store, as the loader sees it for one resource. It never calls a vendor: what it
 * cannot answer alone, the loader asks the router for (a pass yields those requests).
 */
export interface StoreTier<Q, T> {
  /** The store keeps this adapter's data (not turned off for it). */
  keeps(adapterId: string): boolean;
  /** What it answers for `queries` from `adapterId`'s data with no vendor call, by key(q). */
  read(adapterId: string, queries: Q[]): Promise<Map<string, T>>;
  /** A sans-I/O pass for one query (candles): yields the vendor requests it needs. Absent: one fetch, then `keep`. */
  pass?(adapterId: string, query: Q): AsyncGenerator<PassRequest<Q>, T | undefined, T | undefined>;
  /** Keeps what `adapterId` just sent for `queries`. */
  keep?(adapterId: string, found: ReadonlyMap<string, T>, queries: Q[]): Promise<void>;
  /** After the vendor chain failed: what the store holds for `query` (any age), from the first of `adapterIds` that has it. */
  salvage(adapterIds: string[], query: Q): Promise<{ value: T; adapter: string; ageMs: number } | undefined>;
  /** A window that wants today's forming bar, answered after a vendor failure: whether `value` has it (stale) or not (absent). */
  forming?(query: Q, value: T): FormingState | undefined;
  /** The symbol `query` is for (the forming-bar headers name it). */
  symbol(query: Q): string;
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
  onFetched?(adapter: string, region: Market): void;
  /**
   * Cross-instance single-flight (Redis): a miss takes a short lock per key; the instance that
   * wins fetches and writes the shared tier, the others wait (at most `lockWaitMs` from when the
   * data was needed, then fetch themselves) and read it from there.
   */
  lock?: FillLock;
  lockWaitMs?: number;
}

/** A fetched entry and, when a tier below the shared ones answered it (the store), which and how. */
interface Loaded {
  entry: DataEntry;
  from?: { tier: string; ageMs: number };
}

interface Queued<Q> {
  key: string;
  query: Q;
  neededAt: number;
  resolve(loaded: Loaded): void;
  reject(error: unknown): void;
}

interface Found {
  hit: TierHit<DataEntry>;
  tier: string;
}

export class Loader {
  readonly #o: LoaderOptions;
  readonly #flight: SingleFlight;
  /** Keys won under the fill lock, waiting for the next turn to be fetched in native batches. */
  readonly #queued = new Map<string, { spec: ResourceSpec<unknown, unknown>; region: Market; items: Queued<unknown>[] }>();

  readonly #memoryOnly: boolean;

  constructor(options: LoaderOptions) {
    this.#o = options;
    this.#flight = createSingleFlight();
    this.#memoryOnly = options.tiers.length === 1 && typeof (options.tiers[0] as Partial<MemoryTier<DataEntry>>).peek === 'function';
  }

  #chainId(resource: Resource, region: Market): string {
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
      const settled = await Promise.allSettled(toFetch.map((item) => pending.get(item.key) as Promise<Loaded>));
      for (let index = 0; index < toFetch.length; index++) {
        const outcome = settled[index];
        const item = toFetch[index];
        if (outcome.status === 'fulfilled') {
          const { entry, from } = outcome.value;
          const simulated = this.#o.isSimulated(entry.adapter);
          if (from === undefined) recordMiss(status, entry.freshUntil, entry.adapter, simulated);
          else recordHit(status, from.tier, from.ageMs, entry.freshUntil, entry.adapter, simulated);
          take(item.id, entry);
          continue;
        }
        const error = outcome.reason;
        if (isAppError(error) && error.status < 500) throw error;
        const store = spec.store;
        if (item.fallback !== undefined) {
          const entry = item.fallback.hit.value;
          recordStale(status, item.fallback.tier, item.fallback.hit.age, entry.adapter, this.#o.isSimulated(entry.adapter));
          take(item.id, entry);
          const forming = entry.value === undefined ? undefined : store?.forming?.(item.query, entry.value as T);
          if (forming !== undefined) noteForming(status, store!.symbol(item.query), forming);
          continue;
        }
        const saved = store === undefined ? undefined : await this.#salvage(spec, store, item.query);
        if (saved !== undefined) {
          // Stored history answers an outage: stale, never written to a tier as fresh.
          recordStale(status, 'store', saved.ageMs, saved.adapter, this.#o.isSimulated(saved.adapter));
          take(item.id, { value: saved.value, adapter: saved.adapter, freshUntil: 0 });
          const forming = store!.forming?.(item.query, saved.value);
          if (forming !== undefined) noteForming(status, store!.symbol(item.query), forming);
          continue;
        }
        // The vendor was asked (and failed): never a HIT.
        status.miss = true;
        failed.set(item.id, error);
      }
    }
    // Keep request order for unknown keys (the route lists them in X-Missing-Symbols).
    const unknownSet = new Set(unknown);
    return { items, unknown: order.filter((id) => unknownSet.has(id)), failed, status };
  }

  /**
   * What the tiers hold for `query` now, in any state up to the end of its stale-if-error window,
   * with no fetch (the freshest value the gateway has, e.g. the last quote during an outage).
   */
  async peek<Q, T>(spec: ResourceSpec<Q, T>, query: Q): Promise<{ value: T; adapter: string; ageMs: number } | undefined> {
    const found = await this.#lookup(this.cacheKey(spec, query));
    const entry = found?.hit.value;
    if (entry === undefined || entry.value === undefined) return undefined;
    return { value: entry.value as T, adapter: entry.adapter, ageMs: found!.hit.age };
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
  #fetchMany<Q, T>(spec: ResourceSpec<Q, T>, wanted: Array<{ key: string; query: Q }>, neededAt: number): Map<string, Promise<Loaded>> {
    const out = new Map<string, Promise<Loaded>>();
    const missing = new Map<Market, Array<{ key: string; query: Q }>>();
    let joined = 0;
    for (const item of wanted) {
      if (out.has(item.key)) continue;
      const shared = this.#flight.join<Loaded>(item.key);
      if (shared !== undefined) {
        out.set(item.key, shared);
        joined += 1;
        continue;
      }
      const region = spec.region(item.query);
      const group = missing.get(region);
      if (group) group.push(item);
      else missing.set(region, [item]);
      out.set(item.key, undefined as unknown as Promise<Loaded>);
    }
    if (joined > 0) this.#o.onJoin?.(spec.resource, joined);

    const lock = this.#o.lock;
    if (lock !== undefined) {
      const waitUntil = neededAt + (this.#o.lockWaitMs ?? 5_000);
      for (const [region, group] of missing) {
        for (const item of group) {
          const loaded = lock.run(item.key, { deadlineAt: waitUntil }, () => this.#enqueue(spec, region, item, neededAt), () => this.#readShared(item.key));
          out.set(item.key, this.#flight.track(item.key, loaded));
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
          out.set(item.key, this.#flight.track(item.key, loaded.then((entries) => settled(entries, item.key))));
        }
      }
    }
    return out;
  }

  /** A key this instance won the fill lock for: fetched with the others of this turn, batched. */
  #enqueue<Q, T>(spec: ResourceSpec<Q, T>, region: Market, item: { key: string; query: Q }, neededAt: number): Promise<Loaded> {
    return new Promise<Loaded>((resolve, reject) => {
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
  async #readShared(key: string): Promise<Loaded | undefined> {
    const [first, ...shared] = this.#o.tiers;
    for (const tier of shared) {
      const hit = await tier.get(key);
      if (hit === undefined || hit.state !== 'fresh') continue;
      void first?.set(key, hit.value, { ...hit.windows, size: estimateBytes(hit.value.value) + 64, storedAt: hit.storedAt });
      return { entry: hit.value };
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

  #batchSize<Q>(spec: ResourceSpec<Q, unknown>, region: Market, sample: Q): number {
    const chain = this.#o.router.chain(spec.resource, region, spec.need?.(sample));
    let size = Number.POSITIVE_INFINITY;
    for (const adapter of chain) size = Math.min(size, adapter.capabilities.maxBatch);
    return Number.isFinite(size) ? Math.max(1, size) : 1;
  }

  /**
   * One chunk (a native batch, or one query) through the store tier and the router. Without a
   * store: the router tries the chain. With one: the store's answers for every adapter of the
   * chain first (no vendor call), then, for what is left, each adapter in chain order: a store pass
   * whose vendor requests are run here, or one fetch that the store then keeps.
   */
  async #fetchChunk<Q, T>(spec: ResourceSpec<Q, T>, region: Market, chunk: Array<{ key: string; query: Q }>, neededAt: number): Promise<Map<string, Loaded | AppError>> {
    const entries = new Map<string, Loaded | AppError>();
    const store = spec.store;
    const need = spec.need?.(chunk[0].query);
    if (store === undefined) {
      const queries = chunk.map((item) => item.query);
      const { value, adapter } = await this.#o.router.run(spec.resource, region, (a, ctx) => spec.fetch(a, queries, ctx), { need, neededAt });
      this.#o.onFetched?.(adapter.id, region);
      await this.#settle(spec, chunk, value, adapter, entries);
      return entries;
    }
    const chain = this.#o.router.chain(spec.resource, region, need);
    if (chain.length === 0) throw this.#o.router.unserved(spec.resource, region);
    let left = chunk;
    let real = false;
    for (const adapter of chain) {
      if (left.length === 0) return entries;
      // A simulated adapter behind a real one is a fallback for its failures only: its stored
      // series never answers ahead of the real vendor (salvage may use it once the chain failed).
      const simulated = this.#o.isSimulated(adapter.id);
      real ||= !simulated;
      if (!store.keeps(adapter.id) || (simulated && real)) continue;
      const stored = await store.read(adapter.id, left.map((item) => item.query));
      if (stored.size === 0) continue;
      const answered = left.filter((item) => stored.has(spec.key(item.query)));
      await this.#settle(spec, answered, stored, adapter, entries, { tier: 'store', ageMs: 0 });
      left = left.filter((item) => !stored.has(spec.key(item.query)));
    }
    if (left.length === 0) return entries;
    let lastError: unknown;
    const attempts: Attempt[] = [];
    let at: number | undefined = neededAt;
    for (const adapter of chain) {
      try {
        const found = await this.#fromVendor(spec, store, adapter, left, at);
        this.#o.onFetched?.(adapter.id, region);
        await this.#settle(spec, left, found, adapter, entries);
        return entries;
      } catch (error) {
        if (isAppError(error) && error.status < 500) throw error;
        lastError = error;
        attempts.push(attemptOf(adapter.id, error));
        at = undefined;
      }
    }
    throw chainFailure(attempts, lastError);
  }

  /** `chunk` from `adapter`: a store pass per query (its vendor requests run here), or one fetch the store keeps. */
  async #fromVendor<Q, T>(spec: ResourceSpec<Q, T>, store: StoreTier<Q, T>, adapter: Adapter, chunk: Array<{ key: string; query: Q }>, neededAt: number | undefined): Promise<Map<string, T>> {
    const kept = store.keeps(adapter.id);
    const queries = chunk.map((item) => item.query);
    if (kept && store.pass !== undefined) {
      const found = new Map<string, T>();
      for (const query of queries) {
        const value = await this.#drive(spec, adapter, store.pass(adapter.id, query), neededAt);
        neededAt = undefined;
        if (value !== undefined) found.set(spec.key(query), value);
      }
      return found;
    }
    const found = await this.#o.router.call(adapter, spec.resource, (ctx) => spec.fetch(adapter, queries, ctx), neededAt);
    if (kept) await store.keep?.(adapter.id, found, queries);
    return found;
  }

  /**
   * Runs a store pass: each request it yields is one logical vendor call of `adapter` (the first
   * one's deadline from `neededAt` unless the pass gives its own, after a lock wait); a failure is
   * thrown into the pass, which releases what it holds and ends.
   */
  async #drive<Q, T>(spec: ResourceSpec<Q, T>, adapter: Adapter, pass: AsyncGenerator<PassRequest<Q>, T | undefined, T | undefined>, neededAt: number | undefined): Promise<T | undefined> {
    let step = await pass.next();
    while (!step.done) {
      const request = step.value;
      const from = request.neededAt ?? neededAt;
      neededAt = undefined;
      let answer: T | undefined;
      try {
        const found = await this.#o.router.call(adapter, spec.resource, (ctx) => spec.fetch(adapter, [request.query], ctx), from);
        answer = found.get(spec.key(request.query));
      } catch (error) {
        step = await pass.throw(error);
        continue;
      }
      step = await pass.next(answer);
    }
    return step.value;
  }

  /** The store's answer after every adapter of the chain failed. */
  async #salvage<Q, T>(spec: ResourceSpec<Q, T>, store: StoreTier<Q, T>, query: Q): Promise<{ value: T; adapter: string; ageMs: number } | undefined> {
    const chain = this.#o.router.chain(spec.resource, spec.region(query), spec.need?.(query));
    const kept = chain.map((adapter) => adapter.id).filter((id) => store.keeps(id));
    return kept.length === 0 ? undefined : store.salvage(kept, query);
  }

  /** Entries of `chunk` from what `adapter` (or the store, `from`) answered, written to the tiers. */
  async #settle<Q, T>(
    spec: ResourceSpec<Q, T>, chunk: Array<{ key: string; query: Q }>, found: Map<string, T>, adapter: Adapter,
    entries: Map<string, Loaded | AppError>, from?: Loaded['from'],
  ): Promise<void> {
    const previous = spec.merge === undefined ? undefined : await this.#held(chunk.map((item) => item.key));
    const now = this.#o.now();
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
      entries.set(item.key, from === undefined ? { entry } : { entry, from });
      // Written before the in-flight entry settles (and, shared, before the fill lock releases
      // its waiters), so there is no gap where a key is neither.
      if (windows.ttlMs > 0) {
        const size = spec.size(value) + 64;
        for (const tier of this.#o.tiers) writes.push(tier.set(item.key, entry, { ...windows, size, storedAt: now }));
      }
    }
    await Promise.all(writes);
  }
}

/** One key's entry from a chunk, or its failure. */
function settled(entries: Map<string, Loaded | AppError>, key: string): Loaded {
  const loaded = entries.get(key);
  if (loaded instanceof AppError) throw loaded;
  return loaded as Loaded;
}

/** Every key failed upstream: the most telling of their errors answers (docs/contract.md#symbols-regions-pools). */
export function totalFailure(failed: Map<string, unknown>): AppError {
  let chosen: unknown;
  for (const error of failed.values()) {
    chosen = error;
    if (isAppError(error) && error.reason === 'UPSTREAM_UNAVAILABLE') break;
  }
  return asUpstreamError(chosen);
}
