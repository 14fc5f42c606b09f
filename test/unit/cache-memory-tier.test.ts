import { describe, expect, it } from 'vitest';
import { packCandles } from '../../src/cache/candle-codec.ts';
import { createMemoryTier, PACKED_ENTRY_OVERHEAD_BYTES } from '../../src/cache/memory-tier.ts';
import type { Candles } from '../../src/domain.ts';

const T = Date.UTC(2025, 5, 18);
const DAY = 86_400_000;
const WINDOWS = { ttlMs: 60_000, swrMs: 0, sieMs: 0, size: 1 };
/** What byte-cache.ts adds per entry: 2 × key length + its default overhead of 64. */
const keyCost = (key: string) => 2 * key.length + 64;

interface Entry {
  value: unknown;
  adapter: string;
  freshUntil: number;
}

function daily(n: number, seed = 1): Candles {
  const c: Candles = { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] };
  for (let i = 0; i < n; i++) {
    c.timestamp.push(T - (n - i) * DAY);
    c.open.push(seed + i * 0.01);
    c.high.push(seed + i * 0.01 + 0.5);
    c.low.push(seed + i * 0.01 - 0.5);
    c.close.push(seed + i * 0.02);
    c.volume.push(100 * i);
    c.amount.push(123.45 * i);
  }
  return c;
}

function setup(maxBytes: number) {
  const now = T;
  return createMemoryTier<Entry>({ maxBytes, now: () => now });
}

describe('memory tier: candles stored packed', () => {
  it('charges a candle entry its packed byteLength + the fixed overhead, whatever size the caller passed', async () => {
    const tier = setup(64 * 1024 * 1024);
    const candles = daily(1000);
    const key = 'candles|sim|SIM0001.US|1d|||1024';
    await tier.set(key, { value: candles, adapter: 'sim', freshUntil: T + 1 }, { ...WINDOWS, size: 1 });
    // 240 header + 5 × 8000 float64 + 2 × 4000 int32 (daily timestamps in minutes, integer volumes)
    expect(packCandles(candles)?.byteLength).toBe(48_240);
    expect(tier.bytes).toBe(48_240 + PACKED_ENTRY_OVERHEAD_BYTES + keyCost(key));
    expect(PACKED_ENTRY_OVERHEAD_BYTES).toBe(472);
  });

  it('gives back equal candles in fresh arrays: JSON unchanged, and a caller writing into them cannot touch the cache', async () => {
    const tier = setup(1024 * 1024);
    const candles = daily(20);
    candles.prev_close = candles.close.map((_, k) => (k === 0 ? Number.NaN : candles.close[k - 1]));
    const entry = { value: candles, adapter: 'sim', freshUntil: T + 5 };
    await tier.set('k', entry, WINDOWS);
    const first = tier.peek('k')?.value as Entry;
    expect(first).toEqual(entry);
    expect(JSON.stringify(first)).toBe(JSON.stringify(entry));
    expect(Object.keys(first)).toEqual(['value', 'adapter', 'freshUntil']);
    const got = first.value as Candles;
    expect(got.close).not.toBe(candles.close);
    got.close[0] = -1;
    got.timestamp.push(0);
    const second = (tier.peek('k')?.value as Entry).value as Candles;
    expect(second.close[0]).toBe(candles.close[0]);
    expect(second.timestamp).toHaveLength(20);
    expect((await tier.get('k'))?.value).toEqual(entry);
  });

  it('evicts the least recently used entries once the byte bound is passed', async () => {
    // 240 header + 5 × 80 float64 + 2 × 40 int32 = 720 bytes packed.
    const one = 720 + PACKED_ENTRY_OVERHEAD_BYTES + keyCost('k0');
    const tier = createMemoryTier<Entry>({ maxBytes: 10 * one + 10, now: () => T });
    const put = (i: number) => tier.set(`k${i}`, { value: daily(10, i + 1), adapter: 'sim', freshUntil: 0 }, WINDOWS);
    for (let i = 0; i < 10; i++) await put(i);
    expect(tier.bytes).toBe(10 * one);
    tier.peek('k0');
    await put(10);
    // k1 went out; 'k10' is one character longer than the others (2 bytes charged).
    expect(tier.bytes).toBe(10 * one + 2);
    expect(tier.peek('k1')).toBeUndefined();
    expect(((tier.peek('k0')?.value as Entry).value as Candles).open[0]).toBe(1);
    expect(((tier.peek('k10')?.value as Entry).value as Candles).open[0]).toBe(11);
  });

  it('keeps other values as they are, charged the size the caller gave', async () => {
    const tier = setup(1024 * 1024);
    const quote = { value: { symbol: 'X', last_price: 1.5 }, adapter: 'sim', freshUntil: 1 };
    await tier.set('q', quote, { ...WINDOWS, size: 500 });
    expect(tier.bytes).toBe(500 + keyCost('q'));
    expect(tier.peek('q')?.value).toBe(quote);
    // A negative entry (the vendor does not know the symbol), and candles that cannot be packed.
    const unknown = { value: undefined, adapter: 'sim', freshUntil: 1 };
    await tier.set('u', unknown, { ...WINDOWS, size: 72 });
    expect(tier.peek('u')?.value).toBe(unknown);
    const withNull = { value: { ...daily(2), close: [1, null] }, adapter: 'sim', freshUntil: 1 };
    await tier.set('n', withNull, { ...WINDOWS, size: 300 });
    expect(tier.peek('n')?.value).toBe(withNull);
    expect(tier.bytes).toBe(500 + keyCost('q') + 72 + keyCost('u') + 300 + keyCost('n'));
  });
});
