// Reference data's shared cache windows (`cache.ttl.referenceMs` and its SWR/SIE): ex-factors,
// instruments and pools.
import type { Config } from '../../../config/schema.ts';
import type { CacheWindows } from '../../cache/ttl-policy.ts';

const HOUR = 3_600_000;

export const REFERENCE_DEFAULTS: CacheWindows = { ttlMs: 6 * HOUR, swrMs: HOUR, sieMs: 7 * 24 * HOUR };

export function referenceFromConfig(c: Config['cache']): CacheWindows {
  return { ttlMs: c.ttl.referenceMs, swrMs: c.staleWhileRevalidate.referenceMs, sieMs: c.staleIfError.referenceMs };
}
