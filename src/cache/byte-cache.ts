// A TTL cache bounded by bytes, over lru-cache 11 (docs/architecture.md#caching: every cache bounded by bytes).
//
//   createByteCache<V>(options: ByteCacheOptions<V>): ByteCache<V>
//   cache.get(key, now?): CacheHit<V> | undefined      { value, state, age, storedAt }
//   cache.set(key, value, { ttlMs, swrMs?, sieMs?, size? }, now?): boolean   false = not stored
//   cache.delete(key) / cache.clear()
//   cache.calculatedSize / cache.maxSize / cache.entries   bytes charged, byte bound, entry count
//
// States by age (ms since set), with windows from ttl-policy.ts:
//   fresh    [0, ttl)                   serve it.
//   stale    [ttl, ttl + swr)           serve it, and refresh in the background (stale-while-revalidate).
//   expired  [ttl + swr, ttl + sie)     refresh first; serve it only if the refresh fails (stale-if-error).
//   (gone)   ≥ ttl + max(swr, sie)      a miss; the entry is dropped.
// So lru-cache's own ttl for an entry is ttl + max(swr, sie): it only frees memory, the states are
// computed here. The cache reads time from the injected clock (lru-cache's `perf` option, with
// `ttlResolution: 0` so it never caches a reading), and every method takes an optional `now`.
//
// Bytes charged per entry: `size` (or `sizeOf(value)`) + 2 × key length + `entryOverheadBytes`, so a
// flood of tiny random keys is still bounded. The least recently used entries are evicted first.
// Values may be anything, `undefined` included (a negative "unknown symbol" entry), because
// lru-cache stores our wrapper object, not the value.

import { LRUCache } from 'lru-cache';

export type CacheState = 'fresh' | 'stale' | 'expired';

export interface CacheHit<V> {
  value: V;
  state: CacheState;
  /** ms since the value was stored (for the `Age` header: Math.floor(age / 1000)). */
  age: number;
  /** Clock time of the set, ms. */
  storedAt: number;
}

export interface CacheSetOptions {
  ttlMs: number;
  /** Stale-while-revalidate window after ttl, ms (default 0). */
  swrMs?: number;
  /** Stale-if-error window after ttl, ms (default 0). */
  sieMs?: number;
  /** Bytes of the value; required unless the cache has `sizeOf`. */
  size?: number;
}

export interface ByteCacheOptions<V> {
  /** Byte bound of the whole cache (≥ 1). */
  maxSize: number;
  /** Largest single entry, bytes (default maxSize / 8, so one entry cannot flush the cache). */
  maxEntrySize?: number;
  /** Clock, ms; default Date.now. */
  now?: () => number;
  /** Bytes of a value when `set` gets no `size` (e.g. Buffer → byteLength). */
  sizeOf?: (value: V) => number;
  /** Fixed bookkeeping charged per entry, bytes (default 64). */
  entryOverheadBytes?: number;
}

export interface ByteCache<V> {
  get(key: string, now?: number): CacheHit<V> | undefined;
  set(key: string, value: V, options: CacheSetOptions, now?: number): boolean;
  delete(key: string): boolean;
  clear(): void;
  readonly calculatedSize: number;
  readonly maxSize: number;
  readonly entries: number;
}

interface Entry<V> {
  value: V;
  storedAt: number;
  ttlMs: number;
  swrMs: number;
  sieMs: number;
}

const DEFAULT_ENTRY_OVERHEAD_BYTES = 64;

export function createByteCache<V>(options: ByteCacheOptions<V>): ByteCache<V> {
  const clock = options.now ?? Date.now;
  const overhead = options.entryOverheadBytes ?? DEFAULT_ENTRY_OVERHEAD_BYTES;
  const maxSize = Math.max(1, Math.floor(options.maxSize));
  const maxEntrySize = Math.max(1, Math.floor(options.maxEntrySize ?? Math.max(1, maxSize / 8)));
  // lru-cache reads its clock on every get (its own staleness check): inside get() it reads the
  // caller's `now` rather than the clock again (a clock read per cache hit saved, issue 15).
  let reading: number | undefined;
  const lru = new LRUCache<string, Entry<V>>({
    maxSize,
    maxEntrySize,
    ttlResolution: 0,
    perf: { now: () => reading ?? clock() },
  });

  return {
    get(key, now = clock()) {
      reading = now;
      const entry = lru.get(key);
      reading = undefined;
      if (entry === undefined) return undefined;
      const age = Math.max(0, now - entry.storedAt);
      const { ttlMs, swrMs, sieMs } = entry;
      if (age < ttlMs) return { value: entry.value, state: 'fresh', age, storedAt: entry.storedAt };
      if (age < ttlMs + swrMs) return { value: entry.value, state: 'stale', age, storedAt: entry.storedAt };
      if (age < ttlMs + sieMs) return { value: entry.value, state: 'expired', age, storedAt: entry.storedAt };
      lru.delete(key);
      return undefined;
    },

    set(key, value, setOptions, now = clock()) {
      const ttlMs = Math.max(0, setOptions.ttlMs);
      const swrMs = Math.max(0, setOptions.swrMs ?? 0);
      const sieMs = Math.max(0, setOptions.sieMs ?? 0);
      const lifeMs = Math.ceil(ttlMs + Math.max(swrMs, sieMs));
      const bytes = setOptions.size ?? options.sizeOf?.(value);
      if (bytes === undefined) throw new TypeError('byte cache: set() needs a size (or a sizeOf option)');
      const size = Math.max(1, Math.ceil(bytes + 2 * key.length + overhead));
      // lru-cache reads ttl 0 as "never expires": an entry with no life at all is not stored.
      if (lifeMs <= 0 || size > maxEntrySize) {
        lru.delete(key);
        return false;
      }
      lru.set(key, { value, storedAt: now, ttlMs, swrMs, sieMs }, { ttl: lifeMs, start: now, size });
      return true;
    },

    delete: (key) => lru.delete(key),
    clear: () => lru.clear(),
    get calculatedSize() {
      return lru.calculatedSize;
    },
    maxSize,
    get entries() {
      return lru.size;
    },
  };
}
