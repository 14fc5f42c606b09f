// The store's bar checks before a write (src/store/validate.ts, docs/contract.md#shapes-and-units): which bars are
// dropped, and that an answer with nothing to drop is passed through without a copy.
import { describe, expect, it } from 'vitest';
import type { Candles } from '../../src/domain.ts';
import { validateCandles } from '../../src/store/validate.ts';

const bars = (rows: Array<[number, number, number, number, number, number, number]>, prev?: number[]): Candles => {
  const c: Candles = {
    timestamp: rows.map((r) => r[0]), open: rows.map((r) => r[1]), high: rows.map((r) => r[2]), low: rows.map((r) => r[3]),
    close: rows.map((r) => r[4]), volume: rows.map((r) => r[5]), amount: rows.map((r) => r[6]),
  };
  if (prev !== undefined) c.prev_close = prev;
  return c;
};

/** The rule, bar by bar, written plainly: what validateCandles must keep. */
function reference(c: Candles): number[] {
  const n = c.timestamp.length;
  const columns = [c.open, c.high, c.low, c.close, c.volume, c.amount];
  const pos = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x > 0;
  const kept: number[] = [];
  let last = -Infinity;
  for (let i = 0; i < n; i++) {
    const t = c.timestamp[i];
    if (!Number.isSafeInteger(t) || t <= last) continue;
    if (columns.some((col) => col === undefined || col.length !== n)) return [];
    const [o, h, l, cl] = [c.open[i], c.high[i], c.low[i], c.close[i]];
    if (![o, h, l, cl].every(pos) || l > o || l > cl || h < o || h < cl) continue;
    if (!Number.isSafeInteger(c.volume[i]) || c.volume[i] < 0) continue;
    if (!Number.isFinite(c.amount[i]) || c.amount[i] < 0) continue;
    if (c.prev_close !== undefined && c.prev_close.length === n && !pos(c.prev_close[i])) continue;
    kept.push(i);
    last = t;
  }
  return kept;
}

describe('validateCandles', () => {
  it('passes a clean answer through as it is (no copy)', () => {
    const c = bars([[1, 10, 11, 9, 10.5, 100, 1000], [2, 10.5, 12, 10, 11, 200, 2100]], [9.8, 10.5]);
    const v = validateCandles(c);
    expect(v.dropped).toBe(0);
    expect(v.candles).toBe(c);
  });

  it('drops each kind of bad bar and keeps the rest, prev_close included', () => {
    const c = bars([
      [1, 0, 11, 9, 10, 100, 1000], // open not positive
      [2, 10, 11, 9, 10, 100, 1000],
      [2, 10, 11, 9, 10, 100, 1000], // label not ascending
      [3, 10, 9.5, 9, 10, 100, 1000], // high below open
      [4, 10, 11, 9, 10, 1.5, 1000], // fractional volume
      [5, 10, 11, 9, 10, 100, -1], // negative amount
      [6, 10, 11, 9, 10, 100, 1000],
      [7.5, 10, 11, 9, 10, 100, 1000], // label not an integer
      [8, 10, 11, 9, 10, 100, 1000], // prev_close NaN
      [9, 10, 11, 9, 10, 0, 0],
    ], [1, 1, 1, 1, 1, 1, 1, 1, Number.NaN, 1]);
    const v = validateCandles(c);
    expect(v.candles.timestamp).toEqual([2, 6, 9]);
    expect(v.candles.prev_close).toEqual([1, 1, 1]);
    expect(v.candles.volume).toEqual([100, 100, 0]);
    expect(v.dropped).toBe(7);
  });

  it('a ragged answer (a column of another length) loses every bar', () => {
    const c = bars([[1, 10, 11, 9, 10, 100, 1000], [2, 10, 11, 9, 10, 100, 1000]]);
    c.amount = [1000];
    expect(validateCandles(c)).toEqual({ candles: { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] }, dropped: 2 });
  });

  it('agrees with the rule written plainly on random answers with a few bad bars', () => {
    let seed = 11;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const spoil = [Number.NaN, 0, -1, Number.POSITIVE_INFINITY, 0.5];
    let droppedSome = 0;
    for (let k = 0; k < 200; k++) {
      const n = Math.floor(rand() * 30);
      const rows: Array<[number, number, number, number, number, number, number]> = [];
      for (let i = 0; i < n; i++) {
        const t = 1000 + i * 10 + (rand() < 0.05 ? -15 : 0);
        const o = 10 + rand();
        const cl = 10 + rand();
        const row: [number, number, number, number, number, number, number] = [t, o, Math.max(o, cl) + rand(), Math.min(o, cl) - rand(), cl, Math.floor(rand() * 1000), rand() * 1e4];
        if (rand() < 0.08) row[1 + Math.floor(rand() * 6)] = spoil[Math.floor(rand() * spoil.length)];
        rows.push(row);
      }
      const prev = rand() < 0.5 ? rows.map(() => (rand() < 0.03 ? 0 : 9)) : undefined;
      const c = bars(rows, prev);
      const kept = reference(c);
      const v = validateCandles(c);
      expect(v.candles.timestamp).toEqual(kept.map((i) => c.timestamp[i]));
      expect(v.candles.close).toEqual(kept.map((i) => c.close[i]));
      expect(v.dropped).toBe(n - kept.length);
      if (v.dropped > 0) droppedSome++;
    }
    expect(droppedSome).toBeGreaterThan(20);
  });
});

describe('futures columns', () => {
  const rows: Array<[number, number, number, number, number, number, number]> = [
    [1000, 10, 11, 9, 10.5, 100, 1050], [2000, 10, 11, 9, 10.5, 100, 1050], [3000, 10, 11, 9, 10.5, 100, 1050], [4000, 10, 11, 9, 10.5, 100, 1050],
  ];
  it('a bar with a negative or fractional open interest, or a settlement price that is not positive and finite, is dropped; the kept bars keep both columns', () => {
    const c = { ...bars(rows), open_interest: [500, -1, 502.5, 503], settlement_price: [10.2, 10.2, 10.2, 10.3] };
    const bad = { ...bars(rows), open_interest: [500, 501, 502, 503], settlement_price: [10.2, 0, Number.NaN, 10.3] };
    expect(validateCandles(c)).toEqual({ dropped: 2, candles: { ...bars([rows[0], rows[3]]), open_interest: [500, 503], settlement_price: [10.2, 10.3] } });
    expect(validateCandles(bad).candles.timestamp).toEqual([1000, 4000]);
    expect(validateCandles(bad).candles.settlement_price).toEqual([10.2, 10.3]);
  });
  it('a futures column of another length fails the whole answer, like a ragged price column', () => {
    const c = { ...bars(rows), open_interest: [500, 501] };
    expect(validateCandles(c)).toMatchObject({ dropped: 4, candles: { timestamp: [], open_interest: [] } });
  });
});
