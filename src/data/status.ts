// What happened while loading data, carried as a value from the loader up to the responder
// (DESIGN.md 5: nothing travels through hidden context). The responder reads it to say
// X-Cache / X-Cache-Tier / Age / X-Upstream / X-Simulated and to decide whether to store.

export type CacheOutcome = 'HIT' | 'MISS' | 'STALE';

export interface DataStatus {
  /** Some data came from a vendor during this request. */
  miss: boolean;
  /** Some data was served past its TTL (stale-while-revalidate or stale-if-error). */
  stale: boolean;
  /** Oldest data used, ms. */
  maxAgeMs: number;
  /** Earliest instant at which any data used stops being fresh (epoch ms). */
  freshUntil: number;
  /** Tiers that answered a hit (memory, redis, store), in first-use order. */
  tiers: string[];
  /** Adapter ids whose data was used (fetched now or cached). */
  adapters: string[];
  /** Some data used comes from a simulated adapter. */
  simulated: boolean;
}

export function emptyStatus(): DataStatus {
  return { miss: false, stale: false, maxAgeMs: 0, freshUntil: Number.POSITIVE_INFINITY, tiers: [], adapters: [], simulated: false };
}

function addUnique(list: string[], item: string): void {
  if (!list.includes(item)) list.push(item);
}

/** Fold `from` into `into` (mutates and returns `into`). */
export function mergeStatus(into: DataStatus, from: DataStatus): DataStatus {
  into.miss ||= from.miss;
  into.stale ||= from.stale;
  into.simulated ||= from.simulated;
  if (from.maxAgeMs > into.maxAgeMs) into.maxAgeMs = from.maxAgeMs;
  if (from.freshUntil < into.freshUntil) into.freshUntil = from.freshUntil;
  for (const tier of from.tiers) addUnique(into.tiers, tier);
  for (const adapter of from.adapters) addUnique(into.adapters, adapter);
  return into;
}

export function combineStatus(...statuses: DataStatus[]): DataStatus {
  const out = emptyStatus();
  for (const status of statuses) mergeStatus(out, status);
  return out;
}

export function recordHit(status: DataStatus, tier: string, ageMs: number, freshUntil: number, adapter: string, simulated: boolean): void {
  addUnique(status.tiers, tier);
  addUnique(status.adapters, adapter);
  status.simulated ||= simulated;
  if (ageMs > status.maxAgeMs) status.maxAgeMs = ageMs;
  if (freshUntil < status.freshUntil) status.freshUntil = freshUntil;
}

export function recordStale(status: DataStatus, tier: string, ageMs: number, adapter: string, simulated: boolean): void {
  addUnique(status.tiers, tier);
  addUnique(status.adapters, adapter);
  status.simulated ||= simulated;
  status.stale = true;
  if (ageMs > status.maxAgeMs) status.maxAgeMs = ageMs;
  status.freshUntil = 0;
}

export function recordMiss(status: DataStatus, freshUntil: number, adapter: string, simulated: boolean): void {
  addUnique(status.adapters, adapter);
  status.simulated ||= simulated;
  status.miss = true;
  if (freshUntil < status.freshUntil) status.freshUntil = freshUntil;
}

export function cacheOutcome(status: DataStatus): CacheOutcome {
  if (status.stale) return 'STALE';
  return status.miss ? 'MISS' : 'HIT';
}
