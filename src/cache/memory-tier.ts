// The in-process tier: the byte-bounded LRU (byte-cache.ts) behind the Tier interface. `peek` is
// the same lookup without a promise, for the hot path (a hit must cost what a bare server costs).
import { createByteCache, type ByteCache } from './byte-cache.ts';
import type { Tier, TierHit, TierSetOptions } from './tier.ts';

export interface MemoryTier<V> extends Tier<V> {
  peek(key: string): TierHit<V> | undefined;
  readonly bytes: number;
}

export function createMemoryTier<V>(options: { maxBytes: number; now: () => number; name?: string }): MemoryTier<V> {
  const cache: ByteCache<{ value: V; windows: TierHit<V>['windows'] }> = createByteCache({ maxSize: options.maxBytes, now: options.now });
  const peek = (key: string): TierHit<V> | undefined => {
    const hit = cache.get(key, options.now());
    if (hit === undefined) return undefined;
    return { value: hit.value.value, state: hit.state, age: hit.age, storedAt: hit.storedAt, windows: hit.value.windows };
  };
  return {
    name: options.name ?? 'memory',
    peek,
    get: async (key) => peek(key),
    set: async (key, value, set: TierSetOptions) => {
      const windows = { ttlMs: set.ttlMs, swrMs: set.swrMs, sieMs: set.sieMs };
      cache.set(key, { value, windows }, { ...windows, size: set.size }, set.storedAt ?? options.now());
    },
    delete: async (key) => {
      cache.delete(key);
    },
    get bytes() {
      return cache.calculatedSize;
    },
  };
}
