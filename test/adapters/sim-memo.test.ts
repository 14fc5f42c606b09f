// The sim's memos are bounded by bytes (adapters.sim.memoMaxBytes): sizes come from the typed
// columns' real byteLengths, entries are evicted once a memo passes its share, and what is evicted
// rebuilds to the same numbers.
import { describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { SIM_INSTRUMENTS, simPoolMembers } from '../../adapters/sim/instruments.ts';
import { createSimMarket } from '../../adapters/sim/market.ts';
import { DEFAULT_MEMO_MAX_BYTES, historyBytes, memoBudget, MIDNIGHT_ENTRIES, MIDNIGHT_ENTRY_BYTES, MIN_MEMO_MAX_BYTES } from '../../adapters/sim/memo.ts';

const MiB = 1024 * 1024;
const AFTER_CLOSE = Date.parse('2025-06-18T08:00:00Z');
const NEXT_DAY = Date.parse('2025-06-19T08:00:00Z');
const CN_STOCKS = SIM_INSTRUMENTS.filter((i) => i.region === 'CN' && i.listingDate < '2005-01-01');

describe('sim memo budget', () => {
  it('charges the midnights (every trading day since 2000, per region) first and splits the rest', () => {
    const midnights = 3 * MIDNIGHT_ENTRIES * MIDNIGHT_ENTRY_BYTES;
    expect(DEFAULT_MEMO_MAX_BYTES).toBe(10 * MiB);
    expect(MIDNIGHT_ENTRIES).toBe(8_192);
    const rest = 10 * MiB - midnights;
    expect(memoBudget(undefined)).toEqual({
      histories: Math.floor(rest * 0.32), minuteDays: Math.floor(rest * 0.33), tails: Math.floor(rest * 0.27), statements: Math.floor(rest * 0.08),
      midnightEntries: 8_192,
    });
    const big = memoBudget(64 * MiB);
    expect(big.midnightEntries).toBe(8_192);
    expect(big.histories).toBe(Math.floor((64 * MiB - midnights) * 0.32));
    expect(big.histories + big.minuteDays + big.tails + big.statements + midnights).toBeLessThanOrEqual(64 * MiB);
    expect(memoBudget(1)).toEqual(memoBudget(MIN_MEMO_MAX_BYTES));
  });

  it('keeps the midnight of every day of a 25-year history without clearing', () => {
    const market = createSimMarket({ memoMaxBytes: MIN_MEMO_MAX_BYTES });
    const h = market.history(CN_STOCKS[0], AFTER_CLOSE);
    // 25 years of CN trading days (holidays closed since the tables reach back to 1990; was > 6,000 weekdays)
    expect(h.dates.length).toBeGreaterThan(5_700);
    // Cleared when full, the memo would hold fewer entries than the history has days.
    expect(market.memoStats().midnights.entries).toBeGreaterThanOrEqual(h.dates.length);
  });

  it('holds, by default, the tails and the day of 1m bars of every CN and HK pool stock a stream ticks', () => {
    // The stream hub refreshes every subscribed symbol each tick, in the same order: an LRU smaller
    // than that working set misses on every access and rebuilds whole histories each tick.
    const market = createSimMarket();
    const symbols = [...simPoolMembers('CN_Stock'), ...simPoolMembers('HK_Stock')];
    const duringSession = Date.parse('2025-06-18T01:31:00Z');
    for (const inst of symbols) market.sessionDay(inst, duringSession);
    const stats = market.memoStats();
    expect(stats.tails.entries).toBe(symbols.length);
    expect(stats.minuteDays.entries).toBe(symbols.length);
  });

  it('rejects a bound the memos cannot work in', () => {
    expect(() => createSimAdapter({ memoMaxBytes: 1000 }, { now: () => AFTER_CLOSE })).toThrow(/memoMaxBytes/);
    expect(() => createSimAdapter({ memoMaxBytes: 'lots' as unknown as number }, { now: () => AFTER_CLOSE })).toThrow(/memoMaxBytes/);
    expect(() => createSimAdapter({ memoMaxBytes: 8 * MiB }, { now: () => AFTER_CLOSE })).not.toThrow();
  });
});

describe('sim memos bounded by bytes', () => {
  it('counts a history by its columns\' buffers, date slots, walk, events and plan', () => {
    const market = createSimMarket();
    const h = market.history(CN_STOCKS[0], AFTER_CLOSE);
    const columns = [h.timestamp, h.open, h.high, h.low, h.close, h.volume, h.amount, h.prevClose].reduce((sum, c) => sum + c.buffer.byteLength, 0);
    expect(columns).toBeGreaterThanOrEqual(8 * 8 * h.dates.length);
    const walk = h.walk!;
    expect(historyBytes(h)).toBe(512 + columns + 8 * h.dates.length + 8 * (walk.days.length + walk.noise.length) + 160 * h.events.length + 96 * h.planned.length);
    expect(market.memoStats().histories).toEqual({ entries: 1, bytes: historyBytes(h), maxBytes: memoBudget(undefined).histories });
  });

  it('evicts the oldest histories once their bytes pass the bound, and rebuilds them identically', () => {
    const market = createSimMarket({ memoMaxBytes: 4 * MiB });
    const first = market.history(CN_STOCKS[0], AFTER_CLOSE);
    const firstCopy = { dates: [...first.dates], close: Array.from(first.close), volume: Array.from(first.volume) };
    let built = 0;
    for (const inst of CN_STOCKS.slice(1)) {
      market.history(inst, AFTER_CLOSE);
      built++;
    }
    const stats = market.memoStats().histories;
    expect(stats.maxBytes).toBe(memoBudget(4 * MiB).histories);
    expect(stats.bytes).toBeLessThanOrEqual(stats.maxBytes);
    expect(stats.entries).toBeGreaterThan(0);
    expect(stats.entries).toBeLessThan(built);
    // The newest is held (same object), the first was evicted (a fresh build, equal numbers).
    const last = CN_STOCKS[CN_STOCKS.length - 1];
    expect(market.history(last, AFTER_CLOSE)).toBe(market.history(last, AFTER_CLOSE));
    const again = market.history(CN_STOCKS[0], AFTER_CLOSE);
    expect(again).not.toBe(first);
    expect({ dates: [...again.dates], close: Array.from(again.close), volume: Array.from(again.volume) }).toEqual(firstCopy);
  });

  it('holds days of 1m bars by their buffers (7 columns × bars × 8 bytes) up to their share', () => {
    const market = createSimMarket({ memoMaxBytes: 4 * MiB });
    const inst = CN_STOCKS[0];
    // 240 CN bars a day: 512 + 7 × 240 × 8 = 13,952 bytes per day; the share at 4 MiB holds 71.
    const share = memoBudget(4 * MiB).minuteDays;
    const fit = Math.floor(share / 13_952);
    expect(fit).toBe(71);
    market.minuteCandles(inst, { count: 240 * 10 }, AFTER_CLOSE);
    expect(market.memoStats().minuteDays).toEqual({ entries: 10, bytes: 10 * 13_952, maxBytes: share });
    market.minuteCandles(inst, { count: 240 * 100 }, AFTER_CLOSE);
    expect(market.memoStats().minuteDays).toEqual({ entries: fit, bytes: fit * 13_952, maxBytes: share });
  });

  it('measures a tail again after it grows in place', () => {
    const market = createSimMarket();
    const inst = CN_STOCKS[1];
    const tail = market.recent(inst, AFTER_CLOSE);
    const before = market.memoStats().tails.bytes;
    expect(before).toBe(historyBytes(tail));
    const later = market.recent(inst, NEXT_DAY);
    expect(later).toBe(tail);
    expect(later.dates.at(-1)).toBe('2025-06-19');
    expect(market.memoStats().tails).toMatchObject({ entries: 1, bytes: historyBytes(later) });
  });
});
