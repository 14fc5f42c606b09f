import { describe, expect, it } from 'vitest';
import type { AdjustType, Candles } from '../../src/domain.ts';
import { adjustCandles, cumulativeFactors, normaliseEvents, type AdjustEvent } from '../../src/candles/adjust.ts';
import { buildCandles } from '../../src/candles/pipeline.ts';

const HOUR = 3_600_000;
/** 00:00 Asia/Shanghai of a date = 16:00 UTC the day before. */
const cnDay = (date: string): number => Date.parse(`${date}T00:00:00Z`) - 8 * HOUR;
/** A CN local wall-clock time as epoch ms. */
const cnAt = (date: string, hhmm: string): number => Date.parse(`${date}T${hhmm}:00Z`) - 8 * HOUR;
const cnTradeDateStart = (ts: number): number => {
  const local = ts + 8 * HOUR;
  return local - (local % (24 * HOUR)) - 8 * HOUR;
};

// docs/vendors.md#worked-example: D3 is a 10派5元 ex-date (f 1.05, d 0.50), D5 a 10送10 ex-date (f 2, d 5.20).
const D = ['2025-01-06', '2025-01-07', '2025-01-08', '2025-01-09', '2025-01-10'].map(cnDay);
const raw: Candles = {
  timestamp: D,
  open: [9.9, 10.0, 10.05, 10.2, 5.25],
  high: [10.1, 10.6, 10.3, 10.45, 5.4],
  low: [9.8, 9.95, 10.0, 10.1, 5.2],
  close: [10.0, 10.5, 10.2, 10.4, 5.3],
  volume: [1_000_000, 1_200_000, 900_000, 800_000, 2_000_000],
  amount: [9_950_000.5, 12_400_000.25, 9_180_000, 8_310_000, 10_600_000],
  // The close of the trading day before each bar; D0 closed at 9.80.
  prev_close: [9.8, 10.0, 10.5, 10.2, 10.4],
};
// The parts (per share) feed only the ex-rights extensions; the five seed methods read ex_factor.
const events: AdjustEvent[] = [
  { timestamp: D[2], ex_factor: 1.05, prevClose: 10.5, cash_dividend: 0.5, bonus_ratio: 0, rights_ratio: 0, rights_price: 0, parts_known: true },
  { timestamp: D[4], ex_factor: 2.0, prevClose: 10.4, cash_dividend: 0, bonus_ratio: 1, rights_ratio: 0, rights_price: 0, parts_known: true },
];

const expected: Record<Exclude<AdjustType, 'none'>, Record<'open' | 'high' | 'low' | 'close' | 'prev_close', number[]>> = {
  backward: {
    open: [9.9, 10.0, 10.5525, 10.71, 11.025],
    high: [10.1, 10.6, 10.815, 10.9725, 11.34],
    low: [9.8, 9.95, 10.5, 10.605, 10.92],
    close: [10.0, 10.5, 10.71, 10.92, 11.13],
    prev_close: [9.8, 10.0, 10.5, 10.71, 10.92],
  },
  forward: {
    open: [4.714286, 4.761905, 5.025, 5.1, 5.25],
    high: [4.809524, 5.047619, 5.15, 5.225, 5.4],
    low: [4.666667, 4.738095, 5.0, 5.05, 5.2],
    close: [4.761905, 5.0, 5.1, 5.2, 5.3],
    prev_close: [4.666667, 4.761905, 5.0, 5.1, 5.2],
  },
  forward_additive: {
    open: [4.2, 4.3, 4.85, 5.0, 5.25],
    high: [4.4, 4.9, 5.1, 5.25, 5.4],
    low: [4.1, 4.25, 4.8, 4.9, 5.2],
    close: [4.3, 4.8, 5.0, 5.2, 5.3],
    prev_close: [4.1, 4.3, 4.8, 5.0, 5.2],
  },
  backward_additive: {
    open: [9.9, 10.0, 10.55, 10.7, 10.95],
    high: [10.1, 10.6, 10.8, 10.95, 11.1],
    low: [9.8, 9.95, 10.5, 10.6, 10.9],
    close: [10.0, 10.5, 10.7, 10.9, 11.0],
    prev_close: [9.8, 10.0, 10.5, 10.7, 10.9],
  },
  // By hand: before D3 P → (P − 0.50) / 2, D3–D4 P → P / 2, D5 as traded.
  forward_exrights: {
    open: [4.7, 4.75, 5.025, 5.1, 5.25],
    high: [4.8, 5.05, 5.15, 5.225, 5.4],
    low: [4.65, 4.725, 5.0, 5.05, 5.2],
    close: [4.75, 5.0, 5.1, 5.2, 5.3],
    prev_close: [4.65, 4.75, 5.0, 5.1, 5.2],
  },
  // By hand: D1–D2 as traded, D3–D4 P → P + 0.50, D5 P → 2·P + 0.50.
  backward_exrights: {
    open: [9.9, 10.0, 10.55, 10.7, 11.0],
    high: [10.1, 10.6, 10.8, 10.95, 11.3],
    low: [9.8, 9.95, 10.5, 10.6, 10.9],
    close: [10.0, 10.5, 10.7, 10.9, 11.1],
    prev_close: [9.8, 10.0, 10.5, 10.7, 10.9],
  },
};

describe('adjustCandles: the worked example of vendors.md 7.5', () => {
  it('stamps D1..D5 at 00:00 Asia/Shanghai (16:00 UTC the day before)', () => {
    expect(new Date(D[0]).toISOString()).toBe('2025-01-05T16:00:00.000Z');
    expect(new Date(D[4]).toISOString()).toBe('2025-01-09T16:00:00.000Z');
  });

  it('none returns the raw bars unchanged', () => {
    const out = adjustCandles(raw, events, 'none');
    expect(out.close).toEqual([10.0, 10.5, 10.2, 10.4, 5.3]);
    expect(out.open).toEqual(raw.open);
    expect(out.prev_close).toEqual([9.8, 10.0, 10.5, 10.2, 10.4]);
  });

  for (const adjust of Object.keys(expected) as Array<keyof typeof expected>) {
    it(`${adjust}: every price column matches the table`, () => {
      const out = adjustCandles(raw, events, adjust);
      expect(out.timestamp).toEqual(D);
      expect(out.open).toEqual(expected[adjust].open);
      expect(out.high).toEqual(expected[adjust].high);
      expect(out.low).toEqual(expected[adjust].low);
      expect(out.close).toEqual(expected[adjust].close);
      expect(out.prev_close).toEqual(expected[adjust].prev_close);
      // Volume and amount stay raw.
      expect(out.volume).toEqual([1_000_000, 1_200_000, 900_000, 800_000, 2_000_000]);
      expect(out.amount).toEqual([9_950_000.5, 12_400_000.25, 9_180_000, 8_310_000, 10_600_000]);
    });
  }

  it('ratio series keep the ex-date returns against ref: +2.00% on D3 (ref 10.00) and +1.92% on D5 (ref 5.20)', () => {
    for (const adjust of ['forward', 'backward'] as const) {
      const c = adjustCandles(raw, events, adjust).close;
      expect(c[2] / c[1]).toBeCloseTo(10.2 / 10.0, 6);
      expect(c[4] / c[3]).toBeCloseTo(5.3 / 5.2, 6);
    }
  });

  it('prev_close on an ex-date equals ref · B / B_anchor under forward (self-check of 7.3)', () => {
    const out = adjustCandles(raw, events, 'forward');
    expect(out.prev_close?.[2]).toBe(5.0); // ref 10.00 · 1.05 / 2.10
    expect(out.prev_close?.[4]).toBe(5.2); // ref 5.20 · 2.10 / 2.10
  });

  it('events are sorted and unusable ones ignored', () => {
    const noisy: AdjustEvent[] = [
      events[1],
      { timestamp: D[3], ex_factor: Number.NaN, prevClose: 10.2 },
      { timestamp: D[3], ex_factor: 0, prevClose: 10.2 },
      { timestamp: D[3], ex_factor: -2, prevClose: 10.2 },
      events[0],
    ];
    expect(adjustCandles(raw, noisy, 'forward').close).toEqual(expected.forward.close);
    // An additive method cannot use an event without a usable P_prev; a ratio method still can.
    const noPrev: AdjustEvent[] = [{ timestamp: D[2], ex_factor: 1.05, prevClose: Number.NaN }, events[1]];
    expect(adjustCandles(raw, noPrev, 'forward_additive').close).toEqual([4.8, 5.3, 5.0, 5.2, 5.3]);
    expect(adjustCandles(raw, noPrev, 'backward').close).toEqual(expected.backward.close);
    expect(normaliseEvents(noisy, 'forward').map((e) => e.ex_factor)).toEqual([1.05, 2.0]);
  });

  it('without a prev_close column none is produced', () => {
    const { prev_close: _omit, ...bare } = raw;
    expect(adjustCandles(bare, events, 'forward').prev_close).toBeUndefined();
  });
});

describe('cumulativeFactors', () => {
  const sorted = normaliseEvents(events, 'forward');
  it('gives the divisor, multiplier, subtrahend and addend per bar', () => {
    expect(Array.from(cumulativeFactors(D, sorted, 'forward'))).toEqual([2.1, 2.1, 2, 2, 1]);
    expect(Array.from(cumulativeFactors(D, sorted, 'backward'))).toEqual([1, 1, 1.05, 1.05, 2.1]);
    expect(Array.from(cumulativeFactors(D, sorted, 'forward_additive'))).toEqual([5.7, 5.7, 5.2, 5.2, 0]);
    expect(Array.from(cumulativeFactors(D, sorted, 'backward_additive'))).toEqual([0, 0, 0.5, 0.5, 5.7]);
    expect(Array.from(cumulativeFactors(D, sorted, 'none'))).toEqual([1, 1, 1, 1, 1]);
  });
});

describe('events outside the bars still apply', () => {
  const wide: AdjustEvent[] = [
    { timestamp: cnDay('2024-12-02'), ex_factor: 1.1, prevClose: 11 }, // d = 1.00
    ...events,
    { timestamp: cnDay('2025-02-03'), ex_factor: 1.2, prevClose: 6 }, // d = 1.00
  ];
  it('forward divides by every later event, backward multiplies by every earlier one', () => {
    expect(adjustCandles(raw, wide, 'forward').close).toEqual([3.968254, 4.166667, 4.25, 4.333333, 4.416667]);
    expect(adjustCandles(raw, wide, 'backward').close).toEqual([11.0, 11.55, 11.781, 12.012, 12.243]);
    expect(adjustCandles(raw, wide, 'forward_additive').close).toEqual([3.3, 3.8, 4.0, 4.2, 4.3]);
    expect(adjustCandles(raw, wide, 'backward_additive').close).toEqual([11.0, 11.5, 11.7, 11.9, 12.0]);
  });

  it('a window of the last two days still carries the D3 event (backward) and the D5 event (forward)', () => {
    const fwd = buildCandles({ raw, events, adjust: 'forward', window: { count: 2 } });
    expect(fwd.timestamp).toEqual([D[3], D[4]]);
    expect(fwd.close).toEqual([5.2, 5.3]);
    expect(fwd.prev_close).toEqual([5.1, 5.2]);
    const bwd = buildCandles({ raw, events, adjust: 'backward', window: { start: D[3], end: D[3] } });
    expect(bwd.close).toEqual([10.92]);
    expect(bwd.prev_close).toEqual([10.71]);
  });
});

describe('minute bars take their trade date factor', () => {
  const minutes: Candles = {
    timestamp: [cnAt('2025-01-07', '14:59'), cnAt('2025-01-07', '15:00'), cnAt('2025-01-08', '09:31'), cnAt('2025-01-08', '09:32')],
    open: [10.48, 10.49, 10.1, 10.12],
    high: [10.5, 10.5, 10.15, 10.2],
    low: [10.47, 10.48, 10.05, 10.1],
    close: [10.49, 10.5, 10.12, 10.18],
    volume: [5000, 6000, 30000, 8000],
    amount: [52450, 63000, 303600, 81440],
    prev_close: [10.48, 10.49, 10.5, 10.12],
  };

  it('forward: the day before D3 is divided by 2.1, bars on the ex-date by 2.0', () => {
    const out = adjustCandles(minutes, events, 'forward');
    expect(out.close).toEqual([4.995238, 5.0, 5.06, 5.09]);
    // 09:31's prev_close is the previous day's 15:00 close, adjusted like that bar.
    expect(out.prev_close).toEqual([4.990476, 4.995238, 5.0, 5.06]);
    expect(out.volume).toEqual([5000, 6000, 30000, 8000]);
  });

  it('backward_additive: only bars on or after the ex-date get d = 0.50', () => {
    expect(adjustCandles(minutes, events, 'backward_additive').close).toEqual([10.49, 10.5, 10.62, 10.68]);
  });

  it('with tradeDateStart, a bar labelled before midnight that belongs to the ex-date trade date gets its factor', () => {
    // A night-session style bar: 23:00 local on 2025-01-07 but traded for 2025-01-08.
    const night: Candles = {
      timestamp: [cnAt('2025-01-07', '15:00'), cnAt('2025-01-07', '23:00')],
      open: [10.5, 10.2],
      high: [10.5, 10.2],
      low: [10.5, 10.2],
      close: [10.5, 10.2],
      volume: [1, 1],
      amount: [1, 1],
    };
    const nextTradeDate = (ts: number): number =>
      ts === cnAt('2025-01-07', '23:00') ? cnDay('2025-01-08') : cnTradeDateStart(ts);
    expect(adjustCandles(night, events, 'forward').close).toEqual([5.0, 4.857143]);
    expect(adjustCandles(night, events, 'forward', nextTradeDate).close).toEqual([5.0, 5.1]);
    // The ordinary trade-date mapping changes nothing for bars inside their own day.
    expect(adjustCandles(night, events, 'forward', cnTradeDateStart).close).toEqual([5.0, 4.857143]);
  });
});
