// A cache tier (docs/architecture.md#the-data-path): a small async interface, like lru-cache's, so memory, Redis and a
// database line up behind one loader in config order. Windows (ms since the value was stored):
//   fresh    [0, ttl)              serve it
//   stale    [ttl, ttl + swr)      serve it and refresh in the background (stale-while-revalidate)
//   expired  [ttl + swr, ttl + sie) refresh first; serve it only if the refresh fails (stale-if-error)
// A tier that fails answers `undefined` (get) or does nothing (set/delete) and never hangs past
// its own short timeout: the loader then goes on to the next tier or the vendor.

export type TierState = 'fresh' | 'stale' | 'expired';

export interface TierHit<V> {
  value: V;
  state: TierState;
  /** ms since the value was stored. */
  age: number;
  /** Clock time of the set, ms. */
  storedAt: number;
  /** The windows it was stored with, so a lower tier's hit can fill an upper tier unchanged. */
  windows: TierWindows;
}

export interface TierWindows {
  ttlMs: number;
  /** Stale-while-revalidate window after ttl, ms. */
  swrMs: number;
  /** Stale-if-error window after ttl, ms. */
  sieMs: number;
}

export interface TierSetOptions extends TierWindows {
  /** Bytes of the value, for byte-bounded tiers. */
  size: number;
  /** When the value was produced (default: now); a fill from a lower tier keeps the original. */
  storedAt?: number;
}

export interface Tier<V> {
  /** 'memory' | 'redis' | …: reported in X-Cache-Tier. */
  readonly name: string;
  get(key: string): Promise<TierHit<V> | undefined>;
  set(key: string, value: V, options: TierSetOptions): Promise<void>;
  delete(key: string): Promise<void>;
}

/** The state of a value stored at `storedAt` with `windows`, at `now`; undefined once gone. */
export function tierState(windows: TierWindows, storedAt: number, now: number): TierState | undefined {
  const age = Math.max(0, now - storedAt);
  if (age < windows.ttlMs) return 'fresh';
  if (age < windows.ttlMs + windows.swrMs) return 'stale';
  if (age < windows.ttlMs + windows.sieMs) return 'expired';
  return undefined;
}
