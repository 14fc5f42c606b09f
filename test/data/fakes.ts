// Test doubles for the data path other than the adapter (that is test/helpers/fake-adapter.ts): a
// Map-backed Tier, a clock the tests move by hand, symbol refs and a settle() for background work.
import type { Tier, TierHit, TierSetOptions, TierWindows } from '../../src/cache/tier.ts';
import { tierState } from '../../src/cache/tier.ts';
import type { SymbolRef } from '../../src/domain.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';

export function ref(symbol: string): SymbolRef {
  const parsed = parseSymbol(symbol);
  if (parsed === undefined) throw new Error(`test: bad symbol ${symbol}`);
  return parsed;
}

export interface Clock {
  now: () => number;
  set(t: number): void;
  advance(ms: number): void;
}

export function manualClock(start: number): Clock {
  let t = start;
  return { now: () => t, set: (v) => { t = v; }, advance: (ms) => { t += ms; } };
}

interface Stored<V> {
  value: V;
  windows: TierWindows;
  storedAt: number;
}

/** A tier over a Map, with the same window semantics as tier.ts; records every set. */
export class MapTier<V> implements Tier<V> {
  readonly name: string;
  readonly map = new Map<string, Stored<V>>();
  readonly sets: Array<{ key: string; value: V; options: TierSetOptions }> = [];
  readonly gets: string[] = [];
  readonly #now: () => number;

  constructor(name: string, now: () => number) {
    this.name = name;
    this.#now = now;
  }

  async get(key: string): Promise<TierHit<V> | undefined> {
    this.gets.push(key);
    const stored = this.map.get(key);
    if (stored === undefined) return undefined;
    const state = tierState(stored.windows, stored.storedAt, this.#now());
    if (state === undefined) return undefined;
    return { value: stored.value, state, age: this.#now() - stored.storedAt, storedAt: stored.storedAt, windows: stored.windows };
  }

  async set(key: string, value: V, options: TierSetOptions): Promise<void> {
    this.sets.push({ key, value, options });
    const windows = { ttlMs: options.ttlMs, swrMs: options.swrMs, sieMs: options.sieMs };
    this.map.set(key, { value, windows, storedAt: options.storedAt ?? this.#now() });
  }

  async delete(key: string): Promise<void> {
    this.map.delete(key);
  }
}

/** Let queued microtasks and immediates run (background refreshes, tier writes). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}
