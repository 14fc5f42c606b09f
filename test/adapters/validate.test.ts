// The shared row checks of adapters/common/validate.ts (issue 14.4), input to output.
import { describe, expect, it } from 'vitest';
import type { InvalidRowsEvent } from '../../adapters/types.ts';
import type { Bar } from '../../adapters/common/bars.ts';
import {
  checkBars, checkCandles, checkExFactorList, envelopeOk, payloadReader, rowCheck,
} from '../../adapters/common/validate.ts';
import { AppError } from '../../src/errors.ts';

const bar = (t: number, close: number, extra: Partial<Bar> = {}): Bar => ({ t, open: close, high: close, low: close, close, volume: 100, amount: 1000, ...extra });

function sink(): { events: InvalidRowsEvent[]; check: (symbol?: string) => ReturnType<typeof rowCheck> } {
  const events: InvalidRowsEvent[] = [];
  return { events, check: (symbol) => rowCheck('v', (e) => events.push(e), 'candles', symbol) };
}

describe('payload reader: numbers a vendor may send', () => {
  const r = payloadReader('v');
  it('reads NaN / Infinity tokens of text rows as non-finite values (a bad row), other text as a broken payload', () => {
    expect(r.cell('NaN', 'p')).toBeNaN();
    expect([r.cell('Infinity', 'p'), r.cell('-inf', 'p'), r.cell('+INF', 'p')]).toEqual([Infinity, -Infinity, Infinity]);
    expect([r.cell('-', 'p'), r.cell(' 12.5 ', 'p')]).toEqual([null, 12.5]);
    expect(() => r.cell('abc', 'p')).toThrow(AppError);
  });

  it('`value` takes any JSON number (an overflowed literal is Infinity), never a string', () => {
    expect(r.value(JSON.parse('1e999'), 'p')).toBe(Infinity);
    expect(r.optionalValue('-', 'p')).toBeNull();
    expect(() => r.value('1.5', 'p')).toThrow(AppError);
    expect(() => r.number(Infinity, 'p')).toThrow(AppError);
  });
});

describe('checkBars', () => {
  it('keeps valid rows, drops and reports each bad one once per reason', () => {
    const { events, check } = sink();
    const out = checkBars([
      bar(1, 10), bar(2, -1), bar(3, 10, { volume: -5 }), bar(4, 10, { amount: NaN }), bar(5, 10, { high: 9, low: 8 }),
      bar(6, 10, { prevClose: 0 }), bar(7, 10, { high: 10.05, low: 9.95, open: 10.08 }),
    ], check('X'));
    expect(out.map((b) => b.t)).toEqual([1, 7]);
    expect(events).toEqual([
      { adapter: 'v', resource: 'candles', symbol: 'X', dropped: 2, reason: 'non_positive_price' },
      { adapter: 'v', resource: 'candles', symbol: 'X', dropped: 1, reason: 'negative_volume' },
      { adapter: 'v', resource: 'candles', symbol: 'X', dropped: 1, reason: 'non_finite' },
      { adapter: 'v', resource: 'candles', symbol: 'X', dropped: 1, reason: 'ohlc_envelope' },
    ]);
  });

  it('sorts, and keeps the later copy of a repeated stamp', () => {
    const { events, check } = sink();
    expect(checkBars([bar(3, 3), bar(1, 1), bar(2, 2), bar(1, 1.5)], check()).map((b) => [b.t, b.close])).toEqual([[1, 1.5], [2, 2], [3, 3]]);
    expect(events.map((e) => [e.reason, e.dropped])).toEqual([['unsorted_timestamps', 0], ['duplicate_timestamp', 1]]);
  });

  it('an empty input is an empty answer; rows with none valid are UPSTREAM_BAD_RESPONSE', () => {
    const { events, check } = sink();
    expect(checkBars([], check())).toEqual([]);
    expect(() => checkBars([bar(1, -1), bar(2, 0)], check())).toThrow(expect.objectContaining({ reason: 'UPSTREAM_BAD_RESPONSE', status: 502 }));
    expect(events).toEqual([{ adapter: 'v', resource: 'candles', dropped: 2, reason: 'non_positive_price' }]);
  });

  it('envelope: one percent of slack for independent rounding, no more', () => {
    expect(envelopeOk(10.09, 10, 9, 9.5)).toBe(true);
    expect(envelopeOk(10.2, 10, 9, 9.5)).toBe(false);
    expect(envelopeOk(9.5, 8, 9, 9.5)).toBe(false);
  });
});

describe('checkCandles (columnar, e.g. sim)', () => {
  const candles = { timestamp: [1, 2, 3], open: [1, 2, 3], high: [1, 2, 3], low: [1, 2, 3], close: [1, 2, 3], volume: [1, 1, 1], amount: [1, 1, 1] };
  it('returns clean candles untouched', () => {
    const { events, check } = sink();
    expect(checkCandles(candles, check())).toBe(candles);
    expect(events).toEqual([]);
  });
  it('drops a bad row; unequal columns are refused', () => {
    const { events, check } = sink();
    expect(checkCandles({ ...candles, close: [1, -2, 3] }, check()).timestamp).toEqual([1, 3]);
    expect(() => checkCandles({ ...candles, close: [1, 2] }, check())).toThrow(expect.objectContaining({ reason: 'UPSTREAM_BAD_RESPONSE' }));
    expect(events.map((e) => [e.reason, e.dropped])).toEqual([['non_positive_price', 1], ['unequal_columns', 3]]);
  });
});

describe('checkExFactorList', () => {
  it('applies a repeated row once, refuses conflicting or invalid factors for the symbol', () => {
    const { events, check } = sink();
    expect(checkExFactorList([{ timestamp: 2, ex_factor: 1.1 }, { timestamp: 1, ex_factor: 2 }, { timestamp: 2, ex_factor: 1.1 }], check()))
      .toEqual([{ timestamp: 1, ex_factor: 2 }, { timestamp: 2, ex_factor: 1.1 }]);
    expect(checkExFactorList([{ timestamp: 1, ex_factor: 2 }, { timestamp: 1, ex_factor: 3 }], check())).toBeUndefined();
    expect(checkExFactorList([{ timestamp: 1, ex_factor: 0 }], check())).toBeUndefined();
    expect(checkExFactorList([{ timestamp: 1, ex_factor: NaN }], check())).toBeUndefined();
  });
});
