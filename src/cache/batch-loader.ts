// Single-flight and batching for cache misses (DESIGN.md 5).
//
//   createBatchLoader<K, V>({ maxBatch, concurrency, load, maxPending?, onJoin? }): BatchLoader<K, V>
//   loader.loadMany(keys): Promise<Map<K, V | undefined | Error>>   never rejects
//   loader.load(key): Promise<V | undefined>                         rejects with the key's error
//   loader.inFlight: number                                          keys being fetched now
//   createSingleFlight({ onJoin? }): SingleFlight                    the same for one-key resources
//   singleFlight.run<T>(key, fn): Promise<T>
//
// loadMany: keys already in flight (from any caller) are joined; the rest are split into chunks of
// at most `maxBatch` and each chunk is one `load()` call run under the p-limit. So N overlapping
// concurrent requests fetch each key once. The result has every requested key: the value, or
// `undefined` when `load` left the key out of its map (not found), or the Error of that key's chunk
// (a failed chunk fails only its own keys). In-flight entries are removed once settled.
//
// There is deliberately NO abort signal here: one fetch serves every waiter, so a client that
// disconnects must not cancel it for the others. Deadlines live in the upstream layer, which bounds
// every `load`, so a waiter never hangs longer than that deadline.
//
// To leave no gap where a just-settled key is neither in flight nor cached, write results to the
// cache inside `load` before returning them.
//
// `concurrency` is a number (a limiter of its own) or a shared p-limit, so every resource of one
// adapter can share that adapter's cap. p-limit's queue is unbounded; when `maxPending` chunks are
// already queued, new chunks fail fast with UPSTREAM_UNAVAILABLE instead of queueing.

import pLimit, { type LimitFunction } from 'p-limit';
import { AppError } from '../errors.ts';

export interface BatchLoaderOptions<K extends string, V> {
  maxBatch: number;
  concurrency: number | LimitFunction;
  load: (keys: K[]) => Promise<Map<K, V>>;
  /** Queued chunks beyond which new chunks are refused (default 1000). */
  maxPending?: number;
  /** Called once per loadMany/load with the number of keys that joined a fetch in flight. */
  onJoin?: (joined: number) => void;
}

export interface BatchLoader<K extends string, V> {
  loadMany(keys: readonly K[]): Promise<Map<K, V | undefined | Error>>;
  load(key: K): Promise<V | undefined>;
  readonly inFlight: number;
}

export const DEFAULT_MAX_PENDING = 1_000;

export function createBatchLoader<K extends string, V>(options: BatchLoaderOptions<K, V>): BatchLoader<K, V> {
  const maxBatch = Math.max(1, Math.floor(options.maxBatch));
  const limit = typeof options.concurrency === 'number' ? pLimit(options.concurrency) : options.concurrency;
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  const inFlight = new Map<K, Promise<V | undefined>>();

  function runChunk(chunk: K[]): Promise<Map<K, V>> {
    if (limit.pendingCount >= maxPending) {
      return Promise.reject(new AppError('UPSTREAM_UNAVAILABLE', 'Too many upstream requests are queued', {
        retryAfterSeconds: 1,
      }));
    }
    return limit(() => options.load(chunk));
  }

  function start(keys: readonly K[]): Map<K, Promise<V | undefined>> {
    const pending = new Map<K, Promise<V | undefined>>();
    const missing: K[] = [];
    let joined = 0;
    for (const key of keys) {
      if (pending.has(key)) continue;
      const shared = inFlight.get(key);
      if (shared) {
        pending.set(key, shared);
        joined++;
      } else {
        // A placeholder keeps duplicates of this key in `keys` from being fetched twice.
        pending.set(key, undefined as unknown as Promise<V | undefined>);
        missing.push(key);
      }
    }
    if (joined > 0) options.onJoin?.(joined);

    for (let i = 0; i < missing.length; i += maxBatch) {
      const chunk = missing.slice(i, i + maxBatch);
      const loaded = runChunk(chunk);
      for (const key of chunk) {
        const value = loaded.then((found) => found.get(key));
        const settle = (): void => {
          if (inFlight.get(key) === value) inFlight.delete(key);
        };
        value.then(settle, settle);
        inFlight.set(key, value);
        pending.set(key, value);
      }
    }
    return pending;
  }

  return {
    async loadMany(keys) {
      const pending = start(keys);
      const settled = await Promise.allSettled(pending.values());
      const result = new Map<K, V | undefined | Error>();
      let i = 0;
      for (const key of pending.keys()) {
        const outcome = settled[i++];
        result.set(key, outcome.status === 'fulfilled' ? outcome.value : toError(outcome.reason));
      }
      return result;
    },
    load(key) {
      return start([key]).get(key) as Promise<V | undefined>;
    },
    get inFlight() {
      return inFlight.size;
    },
  };
}

export interface SingleFlight {
  run<T>(key: string, fn: () => Promise<T>): Promise<T>;
  readonly size: number;
}

/** One call of `fn` per key at a time; callers arriving meanwhile share its promise. No abort signal, as above. */
export function createSingleFlight(options: { onJoin?: () => void } = {}): SingleFlight {
  const inFlight = new Map<string, Promise<unknown>>();
  return {
    run<T>(key: string, fn: () => Promise<T>): Promise<T> {
      const shared = inFlight.get(key);
      if (shared) {
        options.onJoin?.();
        return shared as Promise<T>;
      }
      // Deferred by one microtask so a synchronous throw in fn becomes a rejection for everyone.
      const promise = Promise.resolve().then(fn);
      const settle = (): void => {
        if (inFlight.get(key) === promise) inFlight.delete(key);
      };
      promise.then(settle, settle);
      inFlight.set(key, promise);
      return promise;
    },
    get size() {
      return inFlight.size;
    },
  };
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
