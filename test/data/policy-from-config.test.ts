// policyFromConfig (src/data/resources/index.ts, from each resource's descriptor): every `cache` setting lands in the TTL
// policy the loader's resources use, and the default file gives the documented default policy.
import { describe, expect, it } from 'vitest';
import { loadDefaultConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { DEFAULT_CACHE_POLICY, policyFromConfig } from '../../src/data/resources/index.ts';

/** Every cache setting a distinct value, so a value landing in the wrong place shows. */
function distinctCache(): Config['cache'] {
  return {
    ...loadDefaultConfig().cache,
    ttl: {
      quotes: { open: 1_001, closed: 1_002 },
      depth: { open: 1_003, closed: 1_004 },
      intradayMaxMs: 1_005,
      closedBarsMs: 1_006,
      referenceMs: 1_007,
      financialsMs: 1_015,
      negativeMs: 1_008,
    },
    staleIfError: { quotesMs: 1_009, candlesMs: 1_010, referenceMs: 1_011 },
    staleWhileRevalidate: { quotesMs: 1_012, candlesMs: 1_013, referenceMs: 1_014 },
  };
}

function numbersIn(value: unknown, out: number[] = []): number[] {
  if (typeof value === 'number') out.push(value);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) numbersIn(v, out);
  return out;
}

describe('policyFromConfig', () => {
  it('maps each setting to its place in the policy', () => {
    expect(policyFromConfig(distinctCache())).toEqual({
      quotes: { openTtlMs: 1_001, closedTtlMs: 1_002, swrMs: 1_012, sieMs: 1_009 },
      depth: { openTtlMs: 1_003, closedTtlMs: 1_004, swrMs: 1_012, sieMs: 1_009 },
      intraday: { minMs: 1_000, capMs: 1_005, closedTtlMs: 1_002, swrMs: 1_012, sieMs: 1_010 },
      candles: { ttlMs: 1_006, swrMs: 1_013, sieMs: 1_010 },
      exFactors: { ttlMs: 1_007, swrMs: 1_014, sieMs: 1_011 },
      instruments: { ttlMs: 1_007, swrMs: 1_014, sieMs: 1_011 },
      pools: { ttlMs: 1_007, swrMs: 1_014, sieMs: 1_011 },
      financialsIncome: { ttlMs: 1_015, swrMs: 1_014, sieMs: 1_011 },
      financialsBalanceSheet: { ttlMs: 1_015, swrMs: 1_014, sieMs: 1_011 },
      financialsCashFlow: { ttlMs: 1_015, swrMs: 1_014, sieMs: 1_011 },
      financialsMetrics: { ttlMs: 1_015, swrMs: 1_014, sieMs: 1_011 },
      financialsShares: { ttlMs: 1_015, swrMs: 1_014, sieMs: 1_011 },
      negative: { ttlMs: 1_008, swrMs: 0, sieMs: 0 },
    });
  });

  it('no cache setting is dropped', () => {
    const cache = distinctCache();
    const used = new Set(numbersIn(policyFromConfig(cache)));
    const settings = numbersIn({ ttl: cache.ttl, staleIfError: cache.staleIfError, staleWhileRevalidate: cache.staleWhileRevalidate });
    expect(settings).toHaveLength(15);
    expect(settings.filter((n) => !used.has(n))).toEqual([]);
  });

  it('the intraday cap never drops below the 1 s floor', () => {
    const cache = distinctCache();
    cache.ttl.intradayMaxMs = 0;
    expect(policyFromConfig(cache).intraday).toMatchObject({ minMs: 1_000, capMs: 1_000 });
  });

  it('config/default.yaml gives DEFAULT_CACHE_POLICY', () => {
    expect(policyFromConfig(loadDefaultConfig().cache)).toEqual(DEFAULT_CACHE_POLICY);
  });
});
