import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { packCandles, packedCandleBound, packedCandleBytes, unpackCandles } from '../../src/cache/candle-codec.ts';
import type { Candles } from '../../src/domain.ts';

const T = Date.UTC(2025, 5, 18, 1, 31);
const MIN = 60_000;

function bars(n: number, extra: Partial<Candles> = {}): Candles {
  const c: Candles = { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] };
  for (let i = 0; i < n; i++) {
    c.timestamp.push(T + i * MIN);
    c.open.push(10.01 + i);
    c.high.push(10.5 + i);
    c.low.push(9.99 + i);
    c.close.push(10.2 + i);
    c.volume.push(1000 * (i + 1));
    c.amount.push(10_200.5 * (i + 1));
  }
  return { ...c, ...extra };
}

function roundTrip(c: Candles): Candles {
  const packed = packCandles(c);
  if (packed === undefined) throw new Error('not packed');
  return unpackCandles(packed);
}

describe('candle codec', () => {
  it('charges exact bytes: a header of 8 × (2 + 4 per column), 8 per price, 4 per minute timestamp and integer volume', () => {
    const c = bars(3);
    // 240 header + 5 float64 columns × 3 × 8 + 2 int32 columns × 3 × 4
    expect(packCandles(c)?.byteLength).toBe(240 + 120 + 24);
    expect(packedCandleBytes(c)).toBe(384);
    const withPrev = bars(1000, { prev_close: new Array<number>(1000).fill(10) });
    expect(packCandles(withPrev)?.byteLength).toBe(8 * (2 + 32) + 6 * 8000 + 2 * 4000);
    expect(packedCandleBound(withPrev)).toBe(8 * (2 + 32) + 8 * 8 * 1000);
    expect(packCandles(bars(0))?.byteLength).toBe(240);
  });

  it('round-trips values, key order and the JSON bit for bit', () => {
    const c = bars(5, { prev_close: [1, 2, 3, 4, 5] });
    const back = roundTrip(c);
    expect(back).toEqual(c);
    expect(Object.keys(back)).toEqual(Object.keys(c));
    expect(JSON.stringify(back)).toBe(JSON.stringify(c));
    for (const column of Object.values(back)) expect(Array.isArray(column)).toBe(true);
    // A different key order (an adapter building the object its own way) is kept too.
    const reordered: Candles = { volume: c.volume, timestamp: c.timestamp, close: c.close, open: c.open, high: c.high, low: c.low, amount: c.amount };
    expect(JSON.stringify(roundTrip(reordered))).toBe(JSON.stringify(reordered));
  });

  it('keeps NaN, ±Infinity and -0 exactly; a -0, fractional or oversized volume falls back to float64', () => {
    const c = bars(3);
    c.open = [Number.NaN, Number.POSITIVE_INFINITY, -0];
    c.prev_close = [Number.NaN, Number.NEGATIVE_INFINITY, 1e-300];
    const back = roundTrip(c);
    expect(back.open[0]).toBeNaN();
    expect(back.open[1]).toBe(Number.POSITIVE_INFINITY);
    expect(Object.is(back.open[2], -0)).toBe(true);
    expect(back.prev_close).toEqual([Number.NaN, Number.NEGATIVE_INFINITY, 1e-300]);

    const float64Volume = 240 + 6 * 24 + 12; // timestamps stay int32
    for (const volume of [[1, -0, 2], [1.5, 2, 3], [0, 2 ** 40, 3], [Number.NaN, 1, 2]]) {
      const odd = { ...bars(3), volume };
      expect(packCandles(odd)?.byteLength).toBe(float64Volume);
      const again = roundTrip(odd).volume;
      expect(again.map((v) => Object.is(v, -0) ? '-0' : String(v))).toEqual(volume.map((v) => Object.is(v, -0) ? '-0' : String(v)));
    }
  });

  it('chooses the coarsest exact unit for timestamps: minutes, seconds, then milliseconds', () => {
    const seconds = { ...bars(2), timestamp: [T, T + 1_000] };
    const ms = { ...bars(2), timestamp: [T, T + 1] };
    const daily = { ...bars(2), timestamp: [Date.UTC(1962, 0, 2, 5), Date.UTC(2025, 0, 2, 5)] };
    for (const c of [seconds, ms, daily]) expect(roundTrip(c).timestamp).toEqual(c.timestamp);
    // ms offsets beyond int32 (24.8 days apart) are float64.
    const wide = { ...bars(2), timestamp: [T, T + 2 ** 31 + 1] };
    expect(packCandles(wide)?.byteLength).toBe(240 + 6 * 16 + 8);
    expect(roundTrip(wide).timestamp).toEqual(wide.timestamp);
  });

  it('does not pack what is not plain numeric columns (null, a string, ragged, an unknown key)', () => {
    const withNull = { ...bars(2), close: [1, null] } as unknown as Candles;
    const withString = { ...bars(2), volume: [1, '2'] } as unknown as Candles;
    const ragged = { ...bars(2), high: [1] };
    const extra = { ...bars(2), note: [1, 2] } as unknown as Candles;
    const missing = bars(2) as Partial<Candles>;
    delete missing.amount;
    for (const c of [withNull, withString, ragged, extra, missing as Candles]) {
      expect(packCandles(c)).toBeUndefined();
      expect(packedCandleBytes(c)).toBeUndefined();
    }
  });

  it('round-trips any finite or non-finite doubles (property)', () => {
    const double = fc.double();
    fc.assert(fc.property(fc.array(fc.tuple(double, double, fc.integer({ min: 0, max: 2 ** 45 })), { maxLength: 40 }), (rows) => {
      const c = bars(rows.length);
      c.open = rows.map((r) => r[0]);
      c.amount = rows.map((r) => r[1]);
      c.volume = rows.map((r) => r[2]);
      const back = roundTrip(c);
      expect(back.open.map((v) => Object.is(v, -0) ? '-0' : v)).toEqual(c.open.map((v) => Object.is(v, -0) ? '-0' : v));
      expect(back.amount.map((v) => Object.is(v, -0) ? '-0' : v)).toEqual(c.amount.map((v) => Object.is(v, -0) ? '-0' : v));
      expect(back.volume).toEqual(c.volume);
      expect(back.timestamp).toEqual(c.timestamp);
    }));
  });
});
