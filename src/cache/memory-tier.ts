// The in-process tier: the byte-bounded LRU (byte-cache.ts) behind the Tier interface. `peek` is
// the same lookup without a promise, for the hot path (a hit must cost what a bare server costs).
//
// Candle values are stored packed (candle-codec.ts: one ArrayBuffer per entry) and charged their
// exact byteLength plus PACKED_ENTRY_OVERHEAD_BYTES, whatever size the caller passed; every get
// unpacks fresh number[] columns, so no consumer can write into a cached value and the JSON
// built from them is what it was. Other values are kept as they are, charged the caller's size.
import { createByteCache, type ByteCache } from './byte-cache.ts';
import { packCandles, unpackCandles } from './candle-codec.ts';
import type { Tier, TierHit, TierSetOptions, TierWindows } from './tier.ts';
import type { Candles } from '../domain.ts';

export interface MemoryTier<V> extends Tier<V> {
  peek(key: string): TierHit<V> | undefined;
  readonly bytes: number;
}

/**
 * Bytes of a packed entry beyond its buffer's byteLength and what byte-cache.ts charges itself
 * (2 × key length + 64): the JSArrayBuffer and its backing-store record, the wrapper objects
 * below and lru-cache's slots. Measured (5000 entries of 0–4000 bars, heap + external after GC,
 * one process per size): 456 bytes at most beyond the rest; +16 for malloc's chunk header.
 */
export const PACKED_ENTRY_OVERHEAD_BYTES = 472;

/** How the tier keeps a value: the value itself, or `{ value: Candles }` with the candles packed. */
interface Packed<V> {
  /** The caller's object with `value` taken out (adapter, freshUntil…), shared by every get. */
  rest: V;
  candles: ArrayBuffer;
}

interface Stored<V> {
  value: V | undefined;
  packed: Packed<V> | undefined;
  windows: TierWindows;
}

/** `{ value: Candles, … }` (a loader DataEntry of candles) → packed; anything else → undefined. */
function packEntry<V>(entry: V): Packed<V> | undefined {
  if (typeof entry !== 'object' || entry === null || !('value' in entry)) return undefined;
  const inner = (entry as { value: unknown }).value;
  if (typeof inner !== 'object' || inner === null || !('timestamp' in inner)) return undefined;
  const candles = packCandles(inner as Candles);
  if (candles === undefined) return undefined;
  return { rest: { ...entry, value: undefined }, candles };
}

function unpackEntry<V>(packed: Packed<V>): V {
  return { ...packed.rest, value: unpackCandles(packed.candles) };
}

export function createMemoryTier<V>(options: { maxBytes: number; now: () => number; name?: string }): MemoryTier<V> {
  const cache: ByteCache<Stored<V>> = createByteCache({ maxSize: options.maxBytes, now: options.now });
  const peek = (key: string): TierHit<V> | undefined => {
    const hit = cache.get(key, options.now());
    if (hit === undefined) return undefined;
    const stored = hit.value;
    const value = stored.packed === undefined ? (stored.value as V) : unpackEntry(stored.packed);
    return { value, state: hit.state, age: hit.age, storedAt: hit.storedAt, windows: stored.windows };
  };
  return {
    name: options.name ?? 'memory',
    peek,
    get: async (key) => peek(key),
    set: async (key, value, set: TierSetOptions) => {
      const windows = { ttlMs: set.ttlMs, swrMs: set.swrMs, sieMs: set.sieMs };
      const packed = packEntry(value);
      const stored: Stored<V> = packed === undefined ? { value, packed, windows } : { value: undefined, packed, windows };
      const size = packed === undefined ? set.size : packed.candles.byteLength + PACKED_ENTRY_OVERHEAD_BYTES;
      cache.set(key, stored, { ...windows, size }, set.storedAt ?? options.now());
    },
    delete: async (key) => {
      cache.delete(key);
    },
    get bytes() {
      return cache.calculatedSize;
    },
  };
}
