import { describe, expect, it } from 'vitest';
import { createByteCache } from '../../src/cache/byte-cache.ts';

function setup(maxSize: number, extra: { maxEntrySize?: number } = {}) {
  let clock = 1_000_000;
  const cache = createByteCache<string>({ maxSize, entryOverheadBytes: 0, now: () => clock, ...extra });
  return { cache, advance: (ms: number) => { clock += ms; }, now: () => clock };
}

describe('byte cache size bound', () => {
  it('charges value bytes + 2 × key length + overhead', () => {
    const cache = createByteCache<Buffer>({ maxSize: 10_000, entryOverheadBytes: 64, sizeOf: (b) => b.byteLength });
    cache.set('abc', Buffer.alloc(100), { ttlMs: 1_000 });
    expect(cache.calculatedSize).toBe(100 + 6 + 64);
    cache.set('k', Buffer.alloc(10), { ttlMs: 1_000, size: 500 });
    expect(cache.calculatedSize).toBe(170 + 500 + 2 + 64);
    expect(cache.entries).toBe(2);
    expect(cache.maxSize).toBe(10_000);
  });

  it('evicts the least recently used entries to stay within maxSize bytes', () => {
    const { cache } = setup(1_000, { maxEntrySize: 1_000 });
    // 'k0'..'k3' each cost 300 - 4 + 4 = 300 bytes
    for (let i = 0; i < 3; i++) cache.set(`k${i}`, `v${i}`, { ttlMs: 60_000, size: 296 });
    expect(cache.calculatedSize).toBe(900);
    cache.get('k0'); // k1 is now the least recently used
    cache.set('k3', 'v3', { ttlMs: 60_000, size: 296 });
    expect(cache.calculatedSize).toBe(900);
    expect(cache.get('k1')).toBeUndefined();
    expect(cache.get('k0')?.value).toBe('v0');
    expect(cache.get('k2')?.value).toBe('v2');
    expect(cache.get('k3')?.value).toBe('v3');
  });

  it('refuses an entry larger than maxEntrySize (default maxSize / 8)', () => {
    const { cache } = setup(8_000);
    expect(cache.set('a', 'x', { ttlMs: 1_000, size: 998 })).toBe(true);
    expect(cache.set('b', 'x', { ttlMs: 1_000, size: 999 })).toBe(false);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.calculatedSize).toBe(1_000);
  });

  it('requires a size when there is no sizeOf', () => {
    const { cache } = setup(1_000);
    expect(() => cache.set('a', 'x', { ttlMs: 1_000 })).toThrow(TypeError);
  });
});

describe('byte cache states', () => {
  it('is fresh, then stale (swr), then expired (sie), then gone', () => {
    const { cache, advance } = setup(100_000);
    cache.set('q', 'quote', { ttlMs: 2_000, swrMs: 1_000, sieMs: 60_000, size: 10 });
    expect(cache.get('q')).toEqual({ value: 'quote', state: 'fresh', age: 0, storedAt: 1_000_000 });
    advance(1_999);
    expect(cache.get('q')).toMatchObject({ state: 'fresh', age: 1_999 });
    advance(1);
    expect(cache.get('q')).toMatchObject({ state: 'stale', age: 2_000 });
    advance(999);
    expect(cache.get('q')).toMatchObject({ state: 'stale', age: 2_999 });
    advance(1);
    expect(cache.get('q')).toMatchObject({ state: 'expired', age: 3_000 });
    advance(58_999);
    expect(cache.get('q')).toMatchObject({ value: 'quote', state: 'expired', age: 61_999 });
    advance(1);
    expect(cache.get('q')).toBeUndefined();
    expect(cache.entries).toBe(0);
  });

  it('keeps an entry through a swr window longer than its sie window', () => {
    const { cache, advance } = setup(100_000);
    cache.set('c', 'bars', { ttlMs: 1_000, swrMs: 5_000, sieMs: 2_000, size: 10 });
    advance(5_999);
    expect(cache.get('c')).toMatchObject({ state: 'stale' });
    advance(1);
    expect(cache.get('c')).toBeUndefined();
  });

  it('with no windows, expires right at ttl', () => {
    const { cache, advance } = setup(100_000);
    cache.set('d', 'depth', { ttlMs: 1_000, size: 10 });
    advance(999);
    expect(cache.get('d')?.state).toBe('fresh');
    advance(1);
    expect(cache.get('d')).toBeUndefined();
  });

  it('drops an entry after ttl + max(swr, sie), freeing its bytes', () => {
    const { cache, advance } = setup(100_000);
    cache.set('e', 'x', { ttlMs: 1_000, sieMs: 4_000, size: 98 });
    expect(cache.calculatedSize).toBe(100);
    advance(5_001);
    expect(cache.get('e')).toBeUndefined();
    expect(cache.calculatedSize).toBe(0);
  });

  it('does not store an entry with no lifetime (lru-cache would read ttl 0 as forever)', () => {
    const { cache } = setup(100_000);
    expect(cache.set('z', 'x', { ttlMs: 0, size: 1 })).toBe(false);
    expect(cache.get('z')).toBeUndefined();
  });

  it('stores undefined values (negative entries)', () => {
    const negative = createByteCache<string | undefined>({ maxSize: 1_000 });
    expect(negative.set('UNKNOWN.SH', undefined, { ttlMs: 60_000, size: 1 })).toBe(true);
    expect(negative.get('UNKNOWN.SH')).toMatchObject({ value: undefined, state: 'fresh' });
    expect(negative.entries).toBe(1);
  });

  it('accepts an explicit now per call', () => {
    const { cache, now } = setup(100_000);
    cache.set('q', 'v', { ttlMs: 2_000, swrMs: 1_000, size: 1 }, now() - 2_500);
    expect(cache.get('q')).toMatchObject({ state: 'stale', age: 2_500 });
    expect(cache.get('q', now() - 1_000)).toMatchObject({ state: 'fresh', age: 1_500 });
  });

  it('replaces an entry on set and restarts its age', () => {
    const { cache, advance } = setup(100_000);
    cache.set('q', 'old', { ttlMs: 1_000, swrMs: 1_000, size: 5 });
    advance(1_500);
    cache.set('q', 'new', { ttlMs: 1_000, swrMs: 1_000, size: 7 });
    expect(cache.get('q')).toMatchObject({ value: 'new', state: 'fresh', age: 0 });
    expect(cache.calculatedSize).toBe(7 + 2);
    expect(cache.delete('q')).toBe(true);
    expect(cache.calculatedSize).toBe(0);
  });
});
