// The TTL policy (ttl-policy.ts) from the `cache` block of the config: every value configurable.
import type { Config } from '../../config/schema.ts';
import type { CachePolicy } from './ttl-policy.ts';

export function policyFromConfig(cache: Config['cache']): CachePolicy {
  const { ttl, staleIfError: sie, staleWhileRevalidate: swr } = cache;
  const reference = { ttlMs: ttl.referenceMs, swrMs: swr.referenceMs, sieMs: sie.referenceMs };
  return {
    quotes: { openTtlMs: ttl.quotes.open, closedTtlMs: ttl.quotes.closed, swrMs: swr.quotesMs, sieMs: sie.quotesMs },
    depth: { openTtlMs: ttl.depth.open, closedTtlMs: ttl.depth.closed, swrMs: swr.quotesMs, sieMs: sie.quotesMs },
    intraday: { minMs: 1000, capMs: Math.max(1000, ttl.intradayMaxMs), closedTtlMs: ttl.quotes.closed, swrMs: swr.quotesMs, sieMs: sie.candlesMs },
    candles: { ttlMs: ttl.closedBarsMs, swrMs: swr.candlesMs, sieMs: sie.candlesMs },
    exFactors: reference,
    instruments: reference,
    pools: reference,
    negative: { ttlMs: ttl.negativeMs, swrMs: 0, sieMs: 0 },
  };
}
