import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ADJUST_TYPES, type AdjustType, type Candles } from '../../src/domain.ts';
import { adjustCandles, type AdjustEvent } from '../../src/candles/adjust.ts';
import { aggregateBy, periodKeyFn } from '../../src/candles/aggregate.ts';
import { adjustThenAggregate, buildCandles } from '../../src/candles/pipeline.ts';
import { windowCandles, withPrevClose } from '../../src/candles/window.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const cnDay = (date: string): number => Date.parse(`${date}T00:00:00Z`) - 8 * HOUR;
const cnLocalDate = (ts: number): string => new Date(ts + 8 * HOUR).toISOString().slice(0, 10);
const round2 = (x: number): number => Math.round(x * 100) / 100;
/** Raw prices stay ≥ 1.00 so adjusted differences stay far above the 6-decimal rounding. */
const price = (x: number): number => Math.max(1, round2(x));

interface Scenario {
  raw: Candles;
  events: AdjustEvent[];
  /** Bar indices that are ex-dates (event stamped at that bar). */
  exIndex: Map<number, number>;
  /** Reference price each bar moved against: ref = P_prev / f on ex-dates, else the previous close. */
  ref: number[];
  early: boolean;
  late: boolean;
}

const barMove = fc.record({
  gap: fc.integer({ min: 1, max: 4 }),
  r: fc.double({ min: -0.09, max: 0.09, noNaN: true }),
  ro: fc.double({ min: -0.05, max: 0.05, noNaN: true }),
  u: fc.double({ min: 0, max: 0.05, noNaN: true }),
  v: fc.double({ min: 0, max: 0.05, noNaN: true }),
});
const factor = fc.double({ min: 1.001, max: 2.5, noNaN: true });

const scenario: fc.Arbitrary<Scenario> = fc
  .record({
    base: fc.integer({ min: 500, max: 50_000 }),
    moves: fc.array(barMove, { minLength: 5, maxLength: 60 }),
    exPicks: fc.uniqueArray(fc.integer({ min: 1, max: 59 }), { maxLength: 3 }),
    factors: fc.array(factor, { minLength: 3, maxLength: 3 }),
    early: fc.option(factor, { nil: undefined }),
    late: fc.option(factor, { nil: undefined }),
  })
  .map(({ base, moves, exPicks, factors, early, late }) => {
    const n = moves.length;
    const exIndex = new Map<number, number>();
    exPicks.forEach((k, i) => {
      if (k < n) exIndex.set(k, factors[i]);
    });
    const raw: Candles = { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] };
    const ref: number[] = [];
    const events: AdjustEvent[] = [];
    let ts = cnDay('2024-01-02');
    for (let k = 0; k < n; k++) {
      const m = moves[k];
      ts += k === 0 ? 0 : m.gap * DAY;
      const f = exIndex.get(k);
      const prevClose = k === 0 ? base / 100 : raw.close[k - 1];
      if (f !== undefined) events.push({ timestamp: ts, ex_factor: f, prevClose });
      const r0 = f === undefined ? prevClose : prevClose / f;
      const open = price(r0 * (1 + m.ro));
      const close = price(r0 * (1 + m.r));
      raw.timestamp.push(ts);
      raw.open.push(open);
      raw.close.push(close);
      raw.high.push(price(Math.max(open, close) * (1 + m.u)));
      raw.low.push(price(Math.min(open, close) * (1 - m.v)));
      raw.volume.push(100 * (k + 1));
      raw.amount.push(round2(close * 100 * (k + 1)));
      ref.push(r0);
    }
    if (early !== undefined) events.unshift({ timestamp: raw.timestamp[0] - 10 * DAY, ex_factor: early, prevClose: 2 * raw.open[0] });
    if (late !== undefined) events.push({ timestamp: raw.timestamp[n - 1] + 3 * DAY, ex_factor: late, prevClose: raw.close[n - 1] });
    return { raw, events, exIndex, ref, early: early !== undefined, late: late !== undefined };
  });

const PRICES = ['open', 'high', 'low', 'close'] as const;
const ADJUSTED = ADJUST_TYPES.filter((a) => a !== 'none');

describe('adjustment invariants (fast-check)', () => {
  it('forward leaves the last bar as traded when no event follows it', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const out = adjustCandles(s.raw, s.events, 'forward');
        const last = s.raw.timestamp.length - 1;
        for (const col of PRICES) {
          if (s.late) expect(out[col][last]).toBeLessThan(s.raw[col][last]);
          else expect(out[col][last]).toBe(s.raw[col][last]);
        }
      }),
    );
  });

  it('backward leaves the first bar as traded when no event is at or before it', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const out = adjustCandles(s.raw, s.events, 'backward');
        for (const col of PRICES) {
          if (s.early) expect(out[col][0]).toBeGreaterThan(s.raw[col][0]);
          else expect(out[col][0]).toBe(s.raw[col][0]);
        }
      }),
    );
  });

  it('ratio methods keep each bar-to-bar return, measured against ref on ex-dates', () => {
    fc.assert(
      fc.property(scenario, fc.constantFrom('forward', 'backward') as fc.Arbitrary<AdjustType>, (s, adjust) => {
        const c = adjustCandles(s.raw, s.events, adjust).close;
        for (let k = 1; k < c.length; k++) {
          const rawReturn = s.raw.close[k] / s.ref[k];
          expect(Math.abs(c[k] - c[k - 1] * rawReturn)).toBeLessThanOrEqual(1e-6 * (1 + rawReturn));
        }
      }),
    );
  });

  it('additive methods keep each absolute move, measured against ref on ex-dates', () => {
    fc.assert(
      fc.property(scenario, fc.constantFrom('forward_additive', 'backward_additive') as fc.Arbitrary<AdjustType>, (s, adjust) => {
        const c = adjustCandles(s.raw, s.events, adjust).close;
        for (let k = 1; k < c.length; k++) {
          const rawMove = s.exIndex.has(k) ? s.raw.close[k] - s.ref[k] : s.raw.close[k] - s.raw.close[k - 1];
          expect(Math.abs(c[k] - c[k - 1] - rawMove)).toBeLessThanOrEqual(1.5e-6);
        }
      }),
    );
  });

  it('low ≤ open, close ≤ high survives every adjustment; volume and amount stay raw', () => {
    fc.assert(
      fc.property(scenario, fc.constantFrom(...ADJUST_TYPES), (s, adjust) => {
        const out = adjustCandles(s.raw, s.events, adjust);
        const n = s.raw.timestamp.length;
        for (const col of [...PRICES, 'volume', 'amount', 'timestamp'] as const) expect(out[col].length).toBe(n);
        for (let k = 0; k < n; k++) {
          expect(out.low[k]).toBeLessThanOrEqual(Math.min(out.open[k], out.close[k]));
          expect(out.high[k]).toBeGreaterThanOrEqual(Math.max(out.open[k], out.close[k]));
          if (adjust === 'forward' || adjust === 'backward') expect(out.low[k]).toBeGreaterThan(0);
        }
        expect(out.volume).toEqual(s.raw.volume);
        expect(out.amount).toEqual(s.raw.amount);
      }),
    );
  });

  it('the windowed pipeline equals adjusting the whole series, with prev_close from the bar before', () => {
    fc.assert(
      fc.property(scenario, fc.constantFrom(...ADJUST_TYPES), fc.integer({ min: 1, max: 70 }), (s, adjust, count) => {
        const full = adjustCandles(s.raw, s.events, adjust);
        const got = buildCandles({ raw: s.raw, events: s.events, adjust, window: { count } });
        const n = s.raw.timestamp.length;
        const from = Math.max(0, n - count);
        expect(got.timestamp).toEqual(s.raw.timestamp.slice(from));
        for (const col of PRICES) expect(got[col]).toEqual(full[col].slice(from));
        const prev = got.prev_close as number[];
        expect(prev[0]).toBe(from > 0 ? full.close[from - 1] : full.open[0]);
        for (let k = 1; k < prev.length; k++) expect(prev[k]).toBe(got.close[k - 1]);
      }),
    );
  });
});

describe('aggregation happens after adjustment', () => {
  const weekKey = periodKeyFn('1w', cnLocalDate);

  it('equals adjusting aggregated raw bars only for weeks without an event inside', () => {
    let weeksWithEventInside = 0;
    fc.assert(
      fc.property(scenario, fc.constantFrom(...ADJUSTED), (s, adjust) => {
        const engine = adjustThenAggregate(s.raw, s.events, adjust, { keyOf: weekKey, stamp: 'last' });
        const wrongOrder = adjustCandles(aggregateBy(s.raw, weekKey, 'last'), s.events, adjust);
        expect(engine.timestamp).toEqual(wrongOrder.timestamp);
        expect(engine.volume).toEqual(wrongOrder.volume);
        expect(engine.amount).toEqual(wrongOrder.amount);
        // Bar ranges of each week, to find events strictly after a week's first bar.
        const ts = s.raw.timestamp;
        let first = 0;
        for (let g = 0; g < engine.timestamp.length; g++) {
          let last = first;
          while (ts[last] !== engine.timestamp[g]) last++;
          let inside = false;
          for (let k = first + 1; k <= last; k++) if (s.exIndex.has(k)) inside = true;
          if (inside) {
            weeksWithEventInside++;
            // The week's first bar predates the event: only the engine's order scales it with it.
            expect(engine.open[g]).not.toBe(wrongOrder.open[g]);
          } else {
            for (const col of PRICES) expect(engine[col][g]).toBe(wrongOrder[col][g]);
          }
          first = last + 1;
        }
        expect(first).toBe(ts.length);
      }),
    );
    expect(weeksWithEventInside).toBeGreaterThan(0);
  });

  it('aggregated adjusted bars sum volume and amount and keep OHLC bounds', () => {
    fc.assert(
      fc.property(scenario, fc.constantFrom(...ADJUST_TYPES), (s, adjust) => {
        const full = withPrevClose(adjustCandles(s.raw, s.events, adjust), undefined);
        const weekly = buildCandles({ raw: s.raw, events: s.events, adjust, aggregate: { keyOf: weekKey, stamp: 'last' } });
        expect(weekly.volume.reduce((a, b) => a + b, 0)).toBe(s.raw.volume.reduce((a, b) => a + b, 0));
        expect(Math.max(...weekly.high)).toBe(Math.max(...full.high));
        expect(Math.min(...weekly.low)).toBe(Math.min(...full.low));
        expect(weekly.close[weekly.close.length - 1]).toBe(full.close[full.close.length - 1]);
        const prev = weekly.prev_close as number[];
        expect(prev[0]).toBe(full.open[0]);
        for (let g = 1; g < prev.length; g++) expect(prev[g]).toBe(weekly.close[g - 1]);
        const lastTwo = windowCandles(weekly, { count: 2 });
        expect(lastTwo.timestamp).toEqual(weekly.timestamp.slice(-2));
      }),
    );
  });
});

describe('a concrete week with an event inside', () => {
  it('adjusts Monday with the Wednesday event only when adjusting before aggregating', () => {
    const days = ['2025-01-06', '2025-01-07', '2025-01-08', '2025-01-09', '2025-01-10'].map(cnDay);
    const raw: Candles = {
      timestamp: days,
      open: [9.9, 10.0, 10.05, 10.2, 5.25],
      high: [10.1, 10.6, 10.3, 10.45, 5.4],
      low: [9.8, 9.95, 10.0, 10.1, 5.2],
      close: [10.0, 10.5, 10.2, 10.4, 5.3],
      volume: [1, 1, 1, 1, 1],
      amount: [1, 1, 1, 1, 1],
    };
    const events: AdjustEvent[] = [
      { timestamp: days[2], ex_factor: 1.05, prevClose: 10.5 },
      { timestamp: days[4], ex_factor: 2, prevClose: 10.4 },
    ];
    const key = periodKeyFn('1w', cnLocalDate);
    const engine = adjustThenAggregate(raw, events, 'forward', { keyOf: key, stamp: 'last' });
    // From the forward table of vendors.md 7.5: open 9.90/2.10, high max(…)=10.60/2.10, low 9.80/2.10.
    expect(engine).toEqual({
      timestamp: [days[4]],
      open: [4.714286],
      high: [5.4],
      low: [4.666667],
      close: [5.3],
      volume: [5],
      amount: [5],
    });
    // Aggregating raw first would take the raw week high 10.60 as-is (no event after Friday).
    expect(adjustCandles(aggregateBy(raw, key, 'last'), events, 'forward').high).toEqual([10.6]);
  });
});
