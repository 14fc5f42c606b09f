// What the data cache did for one request, gathered without threading it through every call:
// the responder opens a report (AsyncLocalStorage), the cached data source records into it, and
// the response says X-Cache HIT | MISS | STALE with Age, and lives no longer than its data.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface CacheReport {
  /** Some data came from the vendor during this request. */
  miss: boolean;
  /** Some data was served past its TTL (stale-while-revalidate or stale-if-error). */
  stale: boolean;
  /** Oldest data used, ms. */
  maxAgeMs: number;
  /** Earliest instant at which any data used stops being fresh (epoch ms). */
  freshUntil: number;
  /** Some symbols failed upstream: the answer is partial and must not be cached. */
  failed: boolean;
}

const storage = new AsyncLocalStorage<CacheReport>();

export function newReport(): CacheReport {
  return { miss: false, stale: false, maxAgeMs: 0, freshUntil: Number.POSITIVE_INFINITY, failed: false };
}

export function withReport<T>(report: CacheReport, fn: () => Promise<T>): Promise<T> {
  return storage.run(report, fn);
}

export function recordHit(ageMs: number, freshUntil: number): void {
  const report = storage.getStore();
  if (report === undefined) return;
  if (ageMs > report.maxAgeMs) report.maxAgeMs = ageMs;
  if (freshUntil < report.freshUntil) report.freshUntil = freshUntil;
}

export function recordMiss(freshUntil: number): void {
  const report = storage.getStore();
  if (report === undefined) return;
  report.miss = true;
  if (freshUntil < report.freshUntil) report.freshUntil = freshUntil;
}

export function recordStale(ageMs: number): void {
  const report = storage.getStore();
  if (report === undefined) return;
  report.stale = true;
  if (ageMs > report.maxAgeMs) report.maxAgeMs = ageMs;
  report.freshUntil = 0;
}

/** Part of the answer failed upstream (those symbols go to X-Missing-Symbols). */
export function recordFailure(): void {
  const report = storage.getStore();
  if (report !== undefined) report.failed = true;
}

export function cacheHeader(report: CacheReport): 'HIT' | 'MISS' | 'STALE' {
  if (report.stale) return 'STALE';
  return report.miss ? 'MISS' : 'HIT';
}
