// The loader's batching and partial-failure policy, lower tiers filling the memory tier, and the
// status value across adapters (src/data/loader.ts).
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { attemptOf, chainFailure } from '../../src/upstream/attempts.ts';
import type { DataEntry } from '../../src/data/loader.ts';
import { CANDLES_CASE, CASES, harness, NEGATIVE_WINDOWS, QUOTE_WINDOWS, T0 } from './harness.ts';
import { fakeAdapter, fakeQuote } from '../helpers/fake-adapter.ts';
import { ref, settle } from './fakes.ts';

const [A, B, C, D, E] = ['600519.SH', '000001.SZ', '601318.SH', '600036.SH', '000002.SZ'];
const [U1, U2] = ['600001.SH', '688001.SH'];
const HK = '00700.HK';

describe('loader: batch grouping (quotes)', () => {
  it('misses are grouped into chunks of maxBatch, one adapter call each', async () => {
    const vendor = fakeAdapter('vendor', { known: [A, B, C, D, E], caps: { maxBatch: 2 } });
    const h = harness({ adapters: [vendor] });
    const result = await h.loader.load(h.resources.quotes, [A, B, C, D, E].map(ref));
    expect(vendor.callsOf('getQuotes')).toEqual([[A, B], [C, D], [E]]);
    expect([...result.items.keys()]).toEqual([A, B, C, D, E]);
  });

  it('the chunk size is the smallest maxBatch among the adapters able to serve', async () => {
    const first = fakeAdapter('first', { known: [A, B, C], caps: { maxBatch: 3 } });
    const second = fakeAdapter('second', { known: [A, B, C], caps: { maxBatch: 2 } });
    const h = harness({ adapters: [first, second], routing: { markets: { CN: ['first', 'second'], HK: ['first'], US: ['first'] } } });
    await h.loader.load(h.resources.quotes, [A, B, C].map(ref));
    expect(first.callsOf('getQuotes')).toEqual([[A, B], [C]]);
    expect(second.calls).toEqual([]);
  });

  it('misses are grouped per market', async () => {
    const h = harness({ known: [A, B, HK] });
    await h.loader.load(h.resources.quotes, [A, HK, B].map(ref));
    expect(h.vendor.callsOf('getQuotes')).toEqual([[A, B], [HK]]);
  });

  it('overlapping concurrent batches fetch each key once', async () => {
    const h = harness({ known: [A, B, C, D] });
    h.vendor.hold();
    const first = h.loader.load(h.resources.quotes, [A, B, C].map(ref));
    await settle();
    const second = h.loader.load(h.resources.quotes, [B, C, D].map(ref));
    await settle();
    expect(h.vendor.callsOf('getQuotes')).toEqual([[A, B, C], [D]]);
    expect(h.joins).toEqual([2]);
    h.vendor.release();
    const [r1, r2] = await Promise.all([first, second]);
    expect([...r1.items.keys()]).toEqual([A, B, C]);
    expect([...r2.items.keys()].sort()).toEqual([B, C, D].sort());
  });

  it('duplicate keys in one request are fetched once', async () => {
    const h = harness({ known: [A] });
    const result = await h.loader.load(h.resources.quotes, [A, A, A].map(ref));
    expect(h.vendor.callsOf('getQuotes')).toEqual([[A]]);
    expect([...result.items.keys()]).toEqual([A]);
  });

  it('candles are not batched: one call per query, whatever maxBatch says', async () => {
    const vendor = fakeAdapter('vendor', { known: [A, B, C], caps: { maxBatch: 50 } });
    const h = harness({ adapters: [vendor] });
    await h.loader.load(h.resources.candles, [A, B, C].map(CANDLES_CASE.query));
    expect(vendor.callsOf('getCandles')).toEqual([[A], [B], [C]]);
  });
});

describe('loader: partial failure', () => {
  it('a failing chunk marks only its keys failed; unknown keys in request order; nothing stored for failed keys', async () => {
    const vendor = fakeAdapter('vendor', { known: [A, B, C], caps: { maxBatch: 2 } });
    const down = new AppError('UPSTREAM_ERROR', 'vendor chunk failed');
    vendor.failing.set(C, down);
    const h = harness({ adapters: [vendor], tier: 'map' });
    const spec = h.resources.quotes;
    const result = await h.loader.load(spec, [A, U1, B, C, U2].map(ref));
    expect(vendor.callsOf('getQuotes')).toEqual([[A, U1], [B, C], [U2]]);
    expect([...result.items.keys()]).toEqual([A]);
    expect(result.unknown).toEqual([U1, U2]);
    const answered = chainFailure([attemptOf('vendor', down)], down);
    expect([...result.failed]).toEqual([[B, answered], [C, answered]]);
    const keys = (s: string) => h.loader.cacheKey(spec, ref(s));
    expect(h.map?.sets.map((s) => s.key)).toEqual([keys(A), keys(U1), keys(U2)]);
    expect(h.map?.sets[1].options).toEqual({ ...NEGATIVE_WINDOWS, size: spec.size(undefined) + 64, storedAt: T0 });
    // The failed keys are asked again; the others are answered from the tier.
    vendor.failing.clear();
    const again = await h.loader.load(spec, [A, U1, B, C, U2].map(ref));
    expect(vendor.callsOf('getQuotes').slice(3)).toEqual([[B, C]]);
    expect(again.failed.size).toBe(0);
    expect(again.unknown).toEqual([U1, U2]);
  });

  it('unknown keys stay in request order when some come from the tier and some from the vendor', async () => {
    const h = harness({ known: [A] });
    await h.loader.load(h.resources.quotes, [ref(U2)]);
    const result = await h.loader.load(h.resources.quotes, [U1, A, U2].map(ref));
    expect(result.unknown).toEqual([U1, U2]);
  });

  it('an unexpected exception fails its keys as UPSTREAM_ERROR (502) with the cause kept', async () => {
    const vendor = fakeAdapter('vendor', { known: [A, B], caps: { maxBatch: 1 } });
    const bug = new TypeError('cannot read properties of undefined');
    vendor.failing.set(B, bug);
    const h = harness({ adapters: [vendor] });
    const result = await h.loader.load(h.resources.quotes, [A, B].map(ref));
    expect([...result.items.keys()]).toEqual([A]);
    const error = result.failed.get(B) as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect(error.reason).toBe('UPSTREAM_ERROR');
    expect(error.status).toBe(502);
    expect(error.cause).toBe(bug);
  });

  it.each(CASES)('$name: one query failing leaves the others answered', async (c) => {
    const vendor = fakeAdapter('vendor', { known: [A, B], caps: { maxBatch: 1 } });
    const down = new AppError('UPSTREAM_UNAVAILABLE', 'vendor 429', { retryAfterSeconds: 3 });
    vendor.failing.set(B, down);
    const h = harness({ adapters: [vendor] });
    const spec = c.spec(h.resources);
    const result = await h.loader.load(spec, [A, B, U1].map(c.query));
    expect([...result.items.keys()]).toEqual([spec.key(c.query(A))]);
    expect([...result.failed]).toEqual([[spec.key(c.query(B)), chainFailure([attemptOf('vendor', down)], down)]]);
    expect(result.unknown).toEqual([spec.key(c.query(U1))]);
    expect(h.stored(h.loader.cacheKey(spec, c.query(B)))).toBeUndefined();
  });
});

describe('loader: lower tiers', () => {
  it.each(CASES)('$name: a lower tier\'s hit answers and fills the memory tier with the original storedAt', async (c) => {
    const h = harness({ lowerTiers: ['redis'], known: [A] });
    const spec = c.spec(h.resources);
    const q = c.query(A);
    const key = h.loader.cacheKey(spec, q);
    const storedAt = T0 - 500;
    const entry: DataEntry = { value: c.value(A, 7), adapter: 'vendor', freshUntil: storedAt + c.windows.ttlMs };
    await h.lower[0].set(key, entry, { ...c.windows, size: 100, storedAt });
    const result = await h.loader.load(spec, [q]);
    expect(h.vendor.calls).toEqual([]);
    expect(result.items.get(spec.key(q))).toEqual(c.value(A, 7));
    expect(result.status).toEqual({
      miss: false, stale: false, maxAgeMs: 500, freshUntil: storedAt + c.windows.ttlMs, tiers: ['redis'], adapters: ['vendor'], simulated: false,
    });
    expect(h.memory?.peek(key)).toEqual({ value: entry, state: 'fresh', age: 500, storedAt, windows: c.windows });
    // Next time the memory tier answers and the lower tier is not asked.
    const gets = h.lower[0].gets.length;
    const again = await h.loader.load(spec, [q]);
    expect(again.status.tiers).toEqual(['memory']);
    expect(h.lower[0].gets).toHaveLength(gets);
  });

  it('a stale memory entry gives way to a fresh lower-tier entry', async () => {
    const h = harness({ lowerTiers: ['redis'], known: [A] });
    const spec = h.resources.quotes;
    await h.loader.load(spec, [ref(A)]);
    h.clock.advance(QUOTE_WINDOWS.ttlMs);
    const key = h.loader.cacheKey(spec, ref(A));
    const newer: DataEntry = { value: fakeQuote(A, 9), adapter: 'vendor', freshUntil: h.clock.now() - 100 + QUOTE_WINDOWS.ttlMs };
    await h.lower[0].set(key, newer, { ...QUOTE_WINDOWS, size: 100, storedAt: h.clock.now() - 100 });
    const result = await h.loader.load(spec, [ref(A)]);
    expect(result.items.get(A)).toEqual(fakeQuote(A, 9));
    expect(result.status.stale).toBe(false);
    expect(result.status.tiers).toEqual(['redis']);
    expect(h.vendor.callsOf('getQuotes')).toHaveLength(1);
  });

  it('a fetched value is written to every tier', async () => {
    const h = harness({ tier: 'map', lowerTiers: ['redis'], known: [A] });
    await h.loader.load(h.resources.quotes, [ref(A)]);
    const key = h.loader.cacheKey(h.resources.quotes, ref(A));
    expect(h.map?.sets.map((s) => s.key)).toEqual([key]);
    expect(h.lower[0].sets.map((s) => s.key)).toEqual([key]);
  });
});

describe('loader: status across adapters', () => {
  it.each(CASES)('$name: data from a simulated adapter says simulated, fetched or cached', async (c) => {
    const sim = fakeAdapter('sim', { known: [A] });
    const h = harness({ adapters: [sim], simulated: ['sim'] });
    const spec = c.spec(h.resources);
    const first = await h.loader.load(spec, [c.query(A)]);
    expect(first.status).toMatchObject({ miss: true, adapters: ['sim'], simulated: true });
    const second = await h.loader.load(spec, [c.query(A)]);
    expect(second.status).toMatchObject({ miss: false, tiers: ['memory'], adapters: ['sim'], simulated: true });
  });

  it('adapters are listed per market in first-use order; the cache key names the chain', async () => {
    const cn = fakeAdapter('vendor', { known: [A] });
    const hk = fakeAdapter('other', { known: [HK] });
    const h = harness({ adapters: [cn, hk], routing: { markets: { CN: ['vendor'], HK: ['other'], US: ['vendor'] } } });
    const result = await h.loader.load(h.resources.quotes, [A, HK].map(ref));
    expect(result.status.adapters).toEqual(['vendor', 'other']);
    expect(h.fetched).toEqual([{ adapter: 'vendor', region: 'CN' }, { adapter: 'other', region: 'HK' }]);
    expect(h.loader.cacheKey(h.resources.quotes, ref(HK))).toBe(`quotes|other|${HK}`);
  });

  it('a fallback adapter answering is the one named in the status and the stored entry', async () => {
    const first = fakeAdapter('first', { known: [A] });
    const second = fakeAdapter('second', { known: [A] });
    first.failing.set(A, new AppError('UPSTREAM_ERROR', 'down'));
    const h = harness({ adapters: [first, second], routing: { markets: { CN: ['first', 'second'], HK: ['first'], US: ['first'] } } });
    const result = await h.loader.load(h.resources.quotes, [ref(A)]);
    expect(result.status.adapters).toEqual(['second']);
    expect(h.stored(h.loader.cacheKey(h.resources.quotes, ref(A)))?.adapter).toBe('second');
  });
});
