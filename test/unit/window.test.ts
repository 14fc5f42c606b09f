import { describe, expect, it } from 'vitest';
import type { Candles } from '../../src/domain.ts';
import {
  candleLength,
  concatCandles,
  emptyCandles,
  lowerBound,
  sliceCandles,
  upperBound,
  windowCandles,
  withPrevClose,
} from '../../src/candles/window.ts';

/** Bars stamped 10, 20, …; prices derived from the stamp so slices are easy to read. */
function bars(stamps: number[], prev = false): Candles {
  const c: Candles = {
    timestamp: stamps,
    open: stamps.map((t) => t + 0.1),
    high: stamps.map((t) => t + 0.5),
    low: stamps.map((t) => t - 0.5),
    close: stamps.map((t) => t + 0.2),
    volume: stamps.map((t) => t * 10),
    amount: stamps.map((t) => t * 100),
  };
  // The previous bar's close (stamps step by 10), rounded to cents like a real price.
  if (prev) c.prev_close = stamps.map((t) => Math.round((t - 9.8) * 100) / 100);
  return c;
}
const series = bars([10, 20, 30, 40, 50, 60]);

describe('windowCandles', () => {
  it('without options returns everything', () => {
    expect(windowCandles(series, {}).timestamp).toEqual([10, 20, 30, 40, 50, 60]);
  });

  it('start and end are inclusive', () => {
    const w = windowCandles(series, { start: 20, end: 50 });
    expect(w.timestamp).toEqual([20, 30, 40, 50]);
    expect(w.close).toEqual([20.2, 30.2, 40.2, 50.2]);
    expect(w.volume).toEqual([200, 300, 400, 500]);
    expect(windowCandles(series, { start: 21, end: 49 }).timestamp).toEqual([30, 40]);
  });

  it('count keeps the newest bars inside the range', () => {
    expect(windowCandles(series, { start: 20, end: 50, count: 2 }).timestamp).toEqual([40, 50]);
    expect(windowCandles(series, { count: 3 }).timestamp).toEqual([40, 50, 60]);
    expect(windowCandles(series, { end: 35, count: 2 }).timestamp).toEqual([20, 30]);
    expect(windowCandles(series, { start: 45, count: 1 }).timestamp).toEqual([60]);
  });

  it('a count larger than what is available returns all bars in range', () => {
    expect(windowCandles(series, { start: 30, count: 100 }).timestamp).toEqual([30, 40, 50, 60]);
    expect(windowCandles(series, { count: 10_000 }).open).toEqual([10.1, 20.1, 30.1, 40.1, 50.1, 60.1]);
  });

  it('empty results: count 0, empty range, start after end, empty input', () => {
    expect(windowCandles(series, { count: 0 }).timestamp).toEqual([]);
    expect(windowCandles(series, { start: 61 }).timestamp).toEqual([]);
    expect(windowCandles(series, { end: 9 }).timestamp).toEqual([]);
    expect(windowCandles(series, { start: 31, end: 39 }).timestamp).toEqual([]);
    expect(windowCandles(series, { start: 50, end: 20, count: 5 }).timestamp).toEqual([]);
    expect(windowCandles(emptyCandles(), { count: 5 })).toEqual(emptyCandles());
  });

  it('keeps prev_close aligned with the bars', () => {
    const w = windowCandles(bars([10, 20, 30], true), { count: 2 });
    expect(w.prev_close).toEqual([10.2, 20.2]);
  });

  it('binary search agrees with a linear scan on a 10k series', () => {
    const stamps = Array.from({ length: 10_000 }, (_, i) => 1_700_000_000_000 + i * 60_000 + (i % 7) * 1000);
    for (const t of [0, stamps[0], stamps[0] + 1, stamps[4321], stamps[4321] - 1, stamps[9999], stamps[9999] + 1]) {
      expect(lowerBound(stamps, t)).toBe(stamps.findIndex((s) => s >= t) === -1 ? 10_000 : stamps.findIndex((s) => s >= t));
      expect(upperBound(stamps, t)).toBe(stamps.findIndex((s) => s > t) === -1 ? 10_000 : stamps.findIndex((s) => s > t));
    }
    const big = bars(stamps);
    const w = windowCandles(big, { start: stamps[100], end: stamps[5000], count: 250 });
    expect(w.timestamp.length).toBe(250);
    expect(w.timestamp[0]).toBe(stamps[4751]);
    expect(w.timestamp[249]).toBe(stamps[5000]);
  });
});

describe('sliceCandles', () => {
  it('slices every column by index and clamps out-of-range bounds', () => {
    const s = sliceCandles(bars([10, 20, 30], true), 1, 99);
    expect(s).toEqual({
      timestamp: [20, 30],
      open: [20.1, 30.1],
      high: [20.5, 30.5],
      low: [19.5, 29.5],
      close: [20.2, 30.2],
      volume: [200, 300],
      amount: [2000, 3000],
      prev_close: [10.2, 20.2],
    });
    expect(sliceCandles(series, -5, 1).timestamp).toEqual([10]);
    expect(sliceCandles(series, 4, 2).timestamp).toEqual([]);
  });
});

describe('concatCandles', () => {
  it('appends b after a', () => {
    const c = concatCandles(bars([10, 20]), bars([30, 40]));
    expect(c.timestamp).toEqual([10, 20, 30, 40]);
    expect(c.close).toEqual([10.2, 20.2, 30.2, 40.2]);
    expect(c.amount).toEqual([1000, 2000, 3000, 4000]);
    expect(c.prev_close).toBeUndefined();
  });

  it('on overlap the later fetch wins and timestamps stay strictly ascending', () => {
    const fresh = bars([30, 40]);
    fresh.close = [99, 98];
    const c = concatCandles(bars([10, 20, 30]), fresh);
    expect(c.timestamp).toEqual([10, 20, 30, 40]);
    expect(c.close).toEqual([10.2, 20.2, 99, 98]);
  });

  it('keeps prev_close only when both sides have it', () => {
    expect(concatCandles(bars([10], true), bars([20], true)).prev_close).toEqual([0.2, 10.2]);
    expect(concatCandles(bars([10], true), bars([20])).prev_close).toBeUndefined();
    expect(concatCandles(bars([10], true), emptyCandles()).prev_close).toBeUndefined();
  });

  it('empty sides', () => {
    expect(concatCandles(emptyCandles(), bars([10])).timestamp).toEqual([10]);
    expect(concatCandles(bars([10]), emptyCandles()).timestamp).toEqual([10]);
    expect(concatCandles(emptyCandles(), emptyCandles())).toEqual(emptyCandles());
  });
});

describe('withPrevClose, emptyCandles, candleLength', () => {
  it('prev_close[k] is close[k−1]; the first comes from the caller', () => {
    const c = withPrevClose(bars([10, 20, 30]), 9.5);
    expect(c.prev_close).toEqual([9.5, 10.2, 20.2]);
    expect(c.close).toEqual([10.2, 20.2, 30.2]);
  });

  it('without a known previous close the first bar\'s open stands in', () => {
    expect(withPrevClose(bars([10, 20]), undefined).prev_close).toEqual([10.1, 10.2]);
    expect(withPrevClose(bars([10, 20]), Number.NaN).prev_close).toEqual([10.1, 10.2]);
    expect(withPrevClose(emptyCandles(), 1).prev_close).toEqual([]);
  });

  it('emptyCandles and candleLength', () => {
    expect(emptyCandles()).toEqual({ timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] });
    expect(emptyCandles(true).prev_close).toEqual([]);
    expect(candleLength(series)).toBe(6);
    expect(candleLength(emptyCandles())).toBe(0);
  });
});

// joinCandles: imported here so this block stays self-contained at the end of the file.
import { joinCandles } from '../../src/candles/window.ts';

describe('joinCandles', () => {
  it('joins parts in order, every column', () => {
    const c = joinCandles([bars([10, 20]), bars([30]), bars([40, 50])]);
    expect(c.timestamp).toEqual([10, 20, 30, 40, 50]);
    expect(c.open).toEqual([10.1, 20.1, 30.1, 40.1, 50.1]);
    expect(c.high).toEqual([10.5, 20.5, 30.5, 40.5, 50.5]);
    expect(c.low).toEqual([9.5, 19.5, 29.5, 39.5, 49.5]);
    expect(c.close).toEqual([10.2, 20.2, 30.2, 40.2, 50.2]);
    expect(c.volume).toEqual([100, 200, 300, 400, 500]);
    expect(c.amount).toEqual([1000, 2000, 3000, 4000, 5000]);
    expect(c.prev_close).toBeUndefined();
  });

  it('keeps prev_close only when every part has it', () => {
    expect(joinCandles([bars([10], true), bars([20, 30], true)]).prev_close).toEqual([0.2, 10.2, 20.2]);
    expect(joinCandles([bars([10], true), bars([20]), bars([30], true)]).prev_close).toBeUndefined();
    expect(joinCandles([bars([10]), bars([20], true)]).prev_close).toBeUndefined();
    expect(joinCandles([bars([10], true), emptyCandles()]).prev_close).toBeUndefined();
  });

  it('empty parts add nothing', () => {
    expect(joinCandles([emptyCandles(true), bars([10], true), emptyCandles(true), bars([20], true)])).toEqual(bars([10, 20], true));
  });

  it('a single part comes back as it is; several make a fresh copy', () => {
    const one = bars([10, 20], true);
    expect(joinCandles([one])).toBe(one);
    const a = bars([10]);
    const c = joinCandles([a, bars([20])]);
    expect(c.timestamp).not.toBe(a.timestamp);
    c.close[0] = -1;
    expect(a.close).toEqual([10.2]);
  });
});

describe('joinCandles with a window', () => {
  const parts = () => [bars([10, 20, 30], true), bars([40, 50]), bars([60, 70, 80])];
  const whole = () => joinCandles(parts());

  it('equals windowing the whole join, for any start, end and count', () => {
    for (const start of [undefined, 0, 20, 25, 40, 80, 90]) {
      for (const end of [undefined, 5, 20, 45, 60, 80, 100]) {
        for (const count of [undefined, 0, 1, 3, 5, 8, 20]) {
          expect(joinCandles(parts(), { start, end, count })).toEqual(windowCandles(whole(), { start, end, count }));
        }
      }
    }
  });

  it('the newest count across parts, skipping whole parts from the oldest', () => {
    expect(joinCandles(parts(), { count: 4 }).timestamp).toEqual([50, 60, 70, 80]);
    expect(joinCandles(parts(), { start: 20, end: 60, count: 3 }).timestamp).toEqual([40, 50, 60]);
    expect(joinCandles(parts(), { start: 20, end: 60, count: 3 }).close).toEqual([40.2, 50.2, 60.2]);
  });
});
