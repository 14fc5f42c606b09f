// The one loader (src/data/loader.ts) with a scripted adapter, over the real memory tier and a
// Map-backed tier: hit, miss, stale-while-revalidate, stale-if-error, single-flight, status — the
// same tests for quotes (batched) and candles (one call per query).
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { attemptOf, chainFailure } from '../../src/upstream/attempts.ts';
import { CASES, harness, NEGATIVE_WINDOWS, T0, type TierKind } from './harness.ts';
import { settle } from './fakes.ts';

const A = '600519.SH';
const B = '000001.SZ';
const UNKNOWN = '600001.SH';
const TIERS: TierKind[] = ['memory', 'map'];
const tierName = (kind: TierKind) => (kind === 'memory' ? 'memory' : 'fake');

describe.each(CASES)('loader: $name', (c) => {
  describe.each(TIERS)('over the %s tier', (kind) => {
    const setup = () => {
      const h = harness({ tier: kind, known: [A, B] });
      const spec = c.spec(h.resources);
      const q = c.query(A);
      return { h, spec, q, id: spec.key(q), key: h.loader.cacheKey(spec, q), calls: () => h.vendor.callsOf(c.method) };
    };

    it('a miss fetches once, stores with the resource windows, and says miss', async () => {
      const { h, spec, q, id, key, calls } = setup();
      const result = await h.loader.load(spec, [q]);
      expect(calls()).toEqual([[A]]);
      expect([...result.items]).toEqual([[id, c.value(A, 1)]]);
      expect(result.unknown).toEqual([]);
      expect(result.failed.size).toBe(0);
      expect(result.status).toEqual({
        miss: true, stale: false, maxAgeMs: 0, freshUntil: T0 + c.windows.ttlMs, tiers: [], adapters: ['vendor'], simulated: false,
      });
      expect(h.stored(key)).toEqual({ value: c.value(A, 1), adapter: 'vendor', freshUntil: T0 + c.windows.ttlMs });
      if (h.map !== undefined) {
        expect(h.map.sets).toEqual([{
          key, value: h.stored(key), options: { ...c.windows, size: spec.size(c.value(A, 1)) + 64, storedAt: T0 },
        }]);
      }
    });

    it('a fresh entry is a hit: no adapter call, the tier named, its age reported', async () => {
      const { h, spec, q, id, calls } = setup();
      await h.loader.load(spec, [q]);
      h.clock.advance(c.windows.ttlMs - 1);
      const result = await h.loader.load(spec, [q]);
      expect(calls()).toHaveLength(1);
      expect(result.items.get(id)).toEqual(c.value(A, 1));
      expect(result.status).toEqual({
        miss: false, stale: false, maxAgeMs: c.windows.ttlMs - 1, freshUntil: T0 + c.windows.ttlMs, tiers: [tierName(kind)], adapters: ['vendor'], simulated: false,
      });
    });

    it('stale-while-revalidate: the stale value answers at once, one background refresh replaces it', async () => {
      const { h, spec, q, id, key, calls } = setup();
      await h.loader.load(spec, [q]);
      h.vendor.version = 2;
      h.vendor.hold();
      h.clock.advance(c.windows.ttlMs);
      // Three requests inside the SWR window while the refresh is held: none waits for it.
      const results = await Promise.all([h.loader.load(spec, [q]), h.loader.load(spec, [q]), h.loader.load(spec, [q])]);
      for (const result of results) {
        expect(result.items.get(id)).toEqual(c.value(A, 1));
        expect(result.status).toEqual({
          miss: false, stale: true, maxAgeMs: c.windows.ttlMs, freshUntil: 0, tiers: [tierName(kind)], adapters: ['vendor'], simulated: false,
        });
      }
      expect(calls()).toHaveLength(2);
      h.vendor.release();
      await settle();
      expect(h.stored(key)).toEqual({ value: c.value(A, 2), adapter: 'vendor', freshUntil: T0 + 2 * c.windows.ttlMs });
      const after = await h.loader.load(spec, [q]);
      expect(after.items.get(id)).toEqual(c.value(A, 2));
      expect(after.status.stale).toBe(false);
      expect(after.status.miss).toBe(false);
      expect(calls()).toHaveLength(2);
    });

    it('stale-if-error: an expired entry answers when the fetch fails 5xx, marked stale', async () => {
      const { h, spec, q, id, calls } = setup();
      await h.loader.load(spec, [q]);
      h.clock.advance(c.windows.ttlMs + c.windows.swrMs);
      h.vendor.failing.set(A, new AppError('UPSTREAM_ERROR', 'vendor down'));
      const result = await h.loader.load(spec, [q]);
      expect(calls()).toHaveLength(2);
      expect(result.items.get(id)).toEqual(c.value(A, 1));
      expect(result.failed.size).toBe(0);
      expect(result.status).toEqual({
        miss: false, stale: true, maxAgeMs: c.windows.ttlMs + c.windows.swrMs, freshUntil: 0, tiers: [tierName(kind)], adapters: ['vendor'], simulated: false,
      });
    });

    it('an expired entry is refreshed first: a successful fetch answers, not the old value', async () => {
      const { h, spec, q, id, calls } = setup();
      await h.loader.load(spec, [q]);
      h.vendor.version = 3;
      h.clock.advance(c.windows.ttlMs + c.windows.swrMs);
      const result = await h.loader.load(spec, [q]);
      expect(calls()).toHaveLength(2);
      expect(result.items.get(id)).toEqual(c.value(A, 3));
      expect(result.status.miss).toBe(true);
      expect(result.status.stale).toBe(false);
    });

    it('stale-if-error does not apply to a 4xx: the client error is thrown as is', async () => {
      const { h, spec, q } = setup();
      await h.loader.load(spec, [q]);
      h.clock.advance(c.windows.ttlMs + c.windows.swrMs);
      const notFound = new AppError('SYMBOL_NOT_FOUND', 'vendor says no');
      h.vendor.failing.set(A, notFound);
      await expect(h.loader.load(spec, [q])).rejects.toBe(notFound);
    });

    it('past the stale-if-error window the key fails (nothing stale left to serve)', async () => {
      const { h, spec, q, id } = setup();
      await h.loader.load(spec, [q]);
      h.clock.advance(c.windows.ttlMs + c.windows.sieMs);
      const down = new AppError('UPSTREAM_TIMEOUT', 'vendor slow');
      h.vendor.failing.set(A, down);
      const result = await h.loader.load(spec, [q]);
      expect(result.items.size).toBe(0);
      // The vendor's error, with the one adapter tried in details.attempts.
      const answered = chainFailure([attemptOf('vendor', down)], down);
      expect([...result.failed]).toEqual([[id, answered]]);
      expect((result.failed.get(id) as AppError).details).toEqual({ adapter: 'vendor', attempts: [{ adapter: 'vendor', cause: 'timeout', message: 'vendor slow' }] });
      expect(result.unknown).toEqual([]);
      await expect(h.loader.loadOne(spec, q)).rejects.toEqual(answered);
    });

    it('single-flight: 5 concurrent loads of one key make 1 adapter call and get one value', async () => {
      const { h, spec, q, id, calls } = setup();
      h.vendor.hold();
      const pending = Array.from({ length: 5 }, () => h.loader.load(spec, [q]));
      await settle();
      expect(calls()).toEqual([[A]]);
      expect(h.joins.reduce((s, n) => s + n, 0)).toBe(4);
      h.vendor.release();
      const results = await Promise.all(pending);
      for (const result of results) {
        expect(result.items.get(id)).toEqual(c.value(A, 1));
        expect(result.status.miss).toBe(true);
        expect(result.status.adapters).toEqual(['vendor']);
      }
      expect(calls()).toHaveLength(1);
    });

    it('an unknown key is an answer: listed, cached negatively, not asked again', async () => {
      const { h, spec, calls } = setup();
      const q = c.query(UNKNOWN);
      const result = await h.loader.load(spec, [q]);
      expect(result.unknown).toEqual([spec.key(q)]);
      expect(result.items.size).toBe(0);
      expect(result.failed.size).toBe(0);
      expect(result.status.freshUntil).toBe(T0 + NEGATIVE_WINDOWS.ttlMs);
      expect(h.stored(h.loader.cacheKey(spec, q))).toEqual({ value: undefined, adapter: 'vendor', freshUntil: T0 + NEGATIVE_WINDOWS.ttlMs });
      const again = await h.loader.load(spec, [q]);
      expect(again.unknown).toEqual([spec.key(q)]);
      expect(again.status.tiers).toEqual([tierName(kind)]);
      expect(calls()).toEqual([[UNKNOWN]]);
    });

    it('status of a mixed load: a hit and a miss fold into one value (oldest age, earliest freshUntil)', async () => {
      const { h, spec, q } = setup();
      await h.loader.load(spec, [q]);
      h.clock.advance(500);
      const result = await h.loader.load(spec, [q, c.query(B)]);
      expect(result.items.size).toBe(2);
      expect(result.status).toEqual({
        miss: true, stale: false, maxAgeMs: 500, freshUntil: T0 + c.windows.ttlMs, tiers: [tierName(kind)], adapters: ['vendor'], simulated: false,
      });
    });
  });
});
