// A candle request holds the history it prepared for all of its work: the 1m path reads it again
// after every slice (with a turn of the event loop in between), and concurrent requests for other
// symbols evict it from a small memo meanwhile. Reading the memo again then built the whole
// history a second time (a cold 25-year history is tens of ms of CPU); with a memo below the
// working set of 32 concurrent requests that doubled the sim's cold cost.
import { describe, expect, it, vi } from 'vitest';

vi.mock('../../adapters/sim/daily.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../adapters/sim/daily.ts')>();
  return { ...original, buildDailyHistory: vi.fn(original.buildDailyHistory) };
});

const { buildDailyHistory } = await import('../../adapters/sim/daily.ts');
const { createSimAdapter } = await import('../../adapters/sim/index.ts');
const { SIM_INSTRUMENTS } = await import('../../adapters/sim/instruments.ts');
const { MIN_MEMO_MAX_BYTES } = await import('../../adapters/sim/memo.ts');
const { createSimMarket } = await import('../../adapters/sim/market.ts');

const AFTER_CLOSE = Date.parse('2025-06-18T08:00:00Z');
const CN_STOCKS = SIM_INSTRUMENTS.filter((i) => i.region === 'CN' && i.listingDate < '2005-01-01');
const ref = (symbol: string) => {
  const [code, exchange] = symbol.split('.');
  return { symbol, code, exchange, region: 'CN' } as never;
};

describe('sim candle requests hold their history', () => {
  it('builds each symbol\'s history once while concurrent requests evict it from the memo', async () => {
    const built = vi.mocked(buildDailyHistory);
    built.mockClear();
    const sim = createSimAdapter({ memoMaxBytes: MIN_MEMO_MAX_BYTES }, { now: () => AFTER_CLOSE });
    const [target, ...others] = CN_STOCKS;
    expect(others.length).toBeGreaterThanOrEqual(8);
    // 20,000 1m bars: four slices of 5,000 with a turn of the loop after each.
    const minutes = sim.getCandles({ symbol: ref(target.symbol), period: '1m', count: 20_000 }, {});
    const daily = others.map((inst) => sim.getCandles({ symbol: ref(inst.symbol), period: '1d', count: 1000 }, {}));
    const [candles] = await Promise.all([minutes, ...daily]);
    expect(candles?.timestamp.length).toBe(20_000);
    const buildsOf = (symbol: string) => built.mock.calls.filter(([inst]) => inst.symbol === symbol).length;
    // (The code before this test built the target's history 5 times here: the 2 MiB of histories
    // hold about four 25-year histories, and the other requests evict it between slices.)
    expect(buildsOf(target.symbol)).toBe(1);
    for (const inst of others) expect(buildsOf(inst.symbol)).toBe(1);
    // The same numbers as a request alone.
    const again = createSimAdapter({ memoMaxBytes: MIN_MEMO_MAX_BYTES }, { now: () => AFTER_CLOSE });
    const alone = await again.getCandles({ symbol: ref(target.symbol), period: '1m', count: 20_000 }, {});
    expect(Array.from(candles!.close)).toEqual(Array.from(alone!.close));
  });

  it('keeps the tail of a history a candle request built, so its ex-factors do not build it again', async () => {
    const built = vi.mocked(buildDailyHistory);
    built.mockClear();
    const sim = createSimAdapter({ memoMaxBytes: MIN_MEMO_MAX_BYTES }, { now: () => AFTER_CLOSE });
    const [target, ...others] = CN_STOCKS;
    await sim.getCandles({ symbol: ref(target.symbol), period: '1d', count: 100 }, {});
    // Other candle requests push the target's history out of the memo.
    for (const inst of others.slice(0, 8)) await sim.getCandles({ symbol: ref(inst.symbol), period: '1d', count: 100 }, {});
    const factors = await sim.getExFactors([ref(target.symbol)], {});
    expect(factors.get(target.symbol)?.length).toBeGreaterThan(0);
    expect(built.mock.calls.filter(([inst]) => inst.symbol === target.symbol)).toHaveLength(1);
  });

  it('does not keep the full histories a quote batch builds for its tails', () => {
    const built = vi.mocked(buildDailyHistory);
    const market = createSimMarket({ memoMaxBytes: MIN_MEMO_MAX_BYTES });
    const [target, ...others] = CN_STOCKS;
    const held = market.history(target, AFTER_CLOSE);
    built.mockClear();
    for (const inst of others) market.recent(inst, AFTER_CLOSE);
    expect(built.mock.calls).toHaveLength(others.length);
    // The candle request's history is still the one held, not built again.
    expect(market.memoStats().histories.entries).toBe(1);
    expect(market.history(target, AFTER_CLOSE)).toBe(held);
    expect(market.memoStats().tails.entries).toBe(others.length);
  });
});
