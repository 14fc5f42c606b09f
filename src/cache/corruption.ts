// Corrupted entries read from a shared tier (the Redis tier) or from the history store's blocks:
// each is verified on read by a CRC-32 stored with it (zlib.crc32), and one that fails is never
// used: it is counted here, logged (at most one line per layer every 10 s, with how many were not
// logged), and the read is a miss.
//
//   countCorrupt(layer, log?, fields?)     one corrupted entry seen ('redis', 'history')
//   registerCorruptionMetric(registry)     mdqs_cache_corrupt_total{layer} on an app's registry
//
// The counts are per process (every app a process builds reports them), so a source needs no
// handle to a registry: the history store's block decoder has none.
import { Counter, type Registry } from 'prom-client';

export type CorruptLayer = 'redis' | 'history';

interface Log {
  warn(obj: object, msg: string): void;
}

const LOG_EVERY_MS = 10_000;
const counts = new Map<CorruptLayer, number>([['redis', 0], ['history', 0]]);
const lastLogged = new Map<CorruptLayer, { at: number; unlogged: number }>();

/** One corrupted entry: counted, and logged unless this layer logged in the last 10 s. */
export function countCorrupt(layer: CorruptLayer, log?: Log, fields: Record<string, unknown> = {}): void {
  counts.set(layer, (counts.get(layer) ?? 0) + 1);
  if (log === undefined) return;
  const now = Date.now();
  const last = lastLogged.get(layer);
  if (last !== undefined && now - last.at < LOG_EVERY_MS) {
    last.unlogged += 1;
    return;
  }
  lastLogged.set(layer, { at: now, unlogged: 0 });
  log.warn({ layer, ...fields, ...(last !== undefined && last.unlogged > 0 ? { not_logged_since_last: last.unlogged } : {}) },
    'corrupted cache entry ignored (checksum mismatch): treated as a miss');
}

/** The count so far (tests). */
export function corruptCount(layer: CorruptLayer): number {
  return counts.get(layer) ?? 0;
}

export function registerCorruptionMetric(registry: Registry): void {
  if (registry.getSingleMetric('mdqs_cache_corrupt_total') !== undefined) return;
  new Counter({
    name: 'mdqs_cache_corrupt_total',
    help: 'Entries read from a shared tier (redis) or the history store (history) whose checksum failed: never used, read as a miss.',
    labelNames: ['layer'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [layer, n] of counts) this.inc({ layer }, n);
    },
  });
}
