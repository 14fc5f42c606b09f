// What happened while loading data, carried as a value from the loader up to the responder
// (nothing travels through hidden context). The responder reads it to say X-Cache /
// X-Cache-Tier / Age / X-Upstream / X-Simulated / X-Forming-Bar* and to decide whether to store.

export type CacheOutcome = 'HIT' | 'MISS' | 'STALE';

/**
 * A candle window that wants today's forming bar, answered while the vendors failed: with the last
 * forming bar the gateway had (`stale`) or without one (`absent`).
 */
export type FormingState = 'stale' | 'absent';

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
  /** Symbols whose forming bar is the last one known (vendors failing), request order; absent when none. */
  formingStale?: string[];
  /** Symbols answered without their forming bar (vendors failing, none known), request order; absent when none. */
  formingAbsent?: string[];
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
  for (const symbol of from.formingStale ?? []) noteForming(into, symbol, 'stale');
  for (const symbol of from.formingAbsent ?? []) noteForming(into, symbol, 'absent');
  return into;
}

/** `symbol`'s forming bar was answered `state` (a later `stale` replaces `absent`: a quote supplied it). */
export function noteForming(status: DataStatus, symbol: string, state: FormingState): void {
  if (state === 'stale') {
    const absent = status.formingAbsent?.filter((s) => s !== symbol);
    if (absent !== undefined && absent.length > 0) status.formingAbsent = absent;
    else delete status.formingAbsent;
    addUnique(status.formingStale ??= [], symbol);
  } else if (status.formingStale?.includes(symbol) !== true) addUnique(status.formingAbsent ??= [], symbol);
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
