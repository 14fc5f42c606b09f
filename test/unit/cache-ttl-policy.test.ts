import { describe, expect, it } from 'vitest';
import { DEFAULT_CACHE_POLICY, ttlFor, type CachePolicy } from '../../src/data/resources/index.ts';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('ttlFor with the default policy', () => {
  it.each([
    ['quotes', true, { ttlMs: 2 * S, swrMs: S, sieMs: M }],
    ['quotes', false, { ttlMs: M, swrMs: S, sieMs: M }],
    ['depth', true, { ttlMs: S, swrMs: S, sieMs: M }],
    ['depth', false, { ttlMs: M, swrMs: S, sieMs: M }],
    ['candles', true, { ttlMs: D, swrMs: M, sieMs: D }],
    ['candles', false, { ttlMs: D, swrMs: M, sieMs: D }],
    ['exFactors', true, { ttlMs: 6 * H, swrMs: H, sieMs: 7 * D }],
    ['exFactors', false, { ttlMs: 6 * H, swrMs: H, sieMs: 7 * D }],
    ['instruments', true, { ttlMs: 6 * H, swrMs: H, sieMs: 7 * D }],
    ['instruments', false, { ttlMs: 6 * H, swrMs: H, sieMs: 7 * D }],
    ['pools', true, { ttlMs: 6 * H, swrMs: H, sieMs: 7 * D }],
    ['pools', false, { ttlMs: 6 * H, swrMs: H, sieMs: 7 * D }],
  ] as const)('%s with marketOpen=%s', (resource, marketOpen, expected) => {
    expect(ttlFor(resource, { marketOpen })).toEqual(expected);
  });

  it('prices a candle window with the forming bar like quotes, keeping the candle stale-if-error', () => {
    expect(ttlFor('candles', { marketOpen: true, currentBar: true })).toEqual({ ttlMs: 2 * S, swrMs: S, sieMs: D });
    expect(ttlFor('candles', { marketOpen: false, currentBar: true })).toEqual({ ttlMs: M, swrMs: S, sieMs: D });
  });

  it('caches intraday until the current bar closes, floored and capped', () => {
    expect(ttlFor('intraday', { marketOpen: true, msUntilBarClose: 42_500 })).toEqual({ ttlMs: 42_500, swrMs: S, sieMs: D });
    expect(ttlFor('intraday', { marketOpen: true, msUntilBarClose: 200 })).toEqual({ ttlMs: S, swrMs: S, sieMs: D });
    expect(ttlFor('intraday', { marketOpen: true, msUntilBarClose: 5 * M })).toEqual({ ttlMs: M, swrMs: S, sieMs: D });
  });

  it('computes the time to bar close from nextBarClose and now', () => {
    const now = Date.parse('2026-03-02T02:15:17.250Z');
    const nextBarClose = Date.parse('2026-03-02T02:16:00Z');
    expect(ttlFor('intraday', { marketOpen: true, nextBarClose, now }).ttlMs).toBe(42_750);
  });

  it('falls back to the in-session quotes TTL without bar-close information', () => {
    expect(ttlFor('intraday', { marketOpen: true }).ttlMs).toBe(2 * S);
  });

  it('uses the closed intraday TTL out of session', () => {
    expect(ttlFor('intraday', { marketOpen: false, msUntilBarClose: 30_000 })).toEqual({ ttlMs: M, swrMs: S, sieMs: D });
  });

  it.each(['quotes', 'depth', 'candles', 'intraday', 'exFactors', 'instruments', 'pools'] as const)(
    'caches an unknown %s for 60 s, open or closed',
    (resource) => {
      expect(ttlFor(resource, { marketOpen: true, notFound: true })).toEqual({ ttlMs: M, swrMs: 0, sieMs: 0 });
      expect(ttlFor(resource, { marketOpen: false, notFound: true })).toEqual({ ttlMs: M, swrMs: 0, sieMs: 0 });
    },
  );
});

describe('ttlFor with a configured policy', () => {
  it('reads every number from the policy', () => {
    const policy: CachePolicy = {
      ...DEFAULT_CACHE_POLICY,
      quotes: { openTtlMs: 500, closedTtlMs: 30_000, swrMs: 250, sieMs: 10_000 },
      intraday: { minMs: 100, capMs: 5_000, closedTtlMs: 7_000, swrMs: 0, sieMs: 1_000 },
      negative: { ttlMs: 5_000, swrMs: 0, sieMs: 0 },
    };
    expect(ttlFor('quotes', { marketOpen: true }, policy)).toEqual({ ttlMs: 500, swrMs: 250, sieMs: 10_000 });
    expect(ttlFor('candles', { marketOpen: true, currentBar: true }, policy)).toEqual({ ttlMs: 500, swrMs: 250, sieMs: D });
    expect(ttlFor('intraday', { marketOpen: true, msUntilBarClose: 50 }, policy).ttlMs).toBe(100);
    expect(ttlFor('intraday', { marketOpen: true, msUntilBarClose: 9_000 }, policy).ttlMs).toBe(5_000);
    expect(ttlFor('intraday', { marketOpen: false }, policy).ttlMs).toBe(7_000);
    expect(ttlFor('pools', { marketOpen: true, notFound: true }, policy).ttlMs).toBe(5_000);
  });

  it('returns copies, so callers cannot alter the policy', () => {
    const windows = ttlFor('exFactors', { marketOpen: true });
    windows.ttlMs = 1;
    expect(DEFAULT_CACHE_POLICY.exFactors.ttlMs).toBe(6 * H);
  });
});
