import { describe, expect, it } from 'vitest';
import type { Candles } from '../../src/domain.ts';
import { aggregateBy, minuteKeyFn, periodKeyFn, type SessionBounds } from '../../src/candles/aggregate.ts';

const HOUR = 3_600_000;
const MIN = 60_000;
const cnDay = (date: string): number => Date.parse(`${date}T00:00:00Z`) - 8 * HOUR;
const cnAt = (date: string, hhmm: string): number => Date.parse(`${date}T${hhmm}:00Z`) - 8 * HOUR;
const cnLocalDate = (ts: number): string => new Date(ts + 8 * HOUR).toISOString().slice(0, 10);
const hkAt = cnAt; // Asia/Hong_Kong is UTC+8 too

/** Sessions as (start, end] around a 1m bar's end label. */
function sessionsOf(ranges: Array<[string, string]>): (ts: number) => SessionBounds | null {
  return (ts) => {
    const date = new Date(ts + 8 * HOUR).toISOString().slice(0, 10);
    for (const [from, to] of ranges) {
      const start = cnAt(date, from);
      const end = cnAt(date, to);
      if (ts > start && ts <= end) return { start, end };
    }
    return null;
  };
}
const cnSessionOf = sessionsOf([['09:30', '11:30'], ['13:00', '15:00']]);
const hkSessionOf = sessionsOf([['09:30', '12:00'], ['13:00', '16:00']]);

/** Bars with predictable prices: bar i has open 10+i/100, high +0.05, low −0.05, close +0.02. */
function minuteBars(stamps: number[]): Candles {
  const n = stamps.length;
  const c: Candles = { timestamp: stamps, open: [], high: [], low: [], close: [], volume: [], amount: [] };
  for (let i = 0; i < n; i++) {
    const o = Math.round((10 + i / 100) * 100) / 100;
    c.open.push(o);
    c.high.push(Math.round((o + 0.05) * 100) / 100);
    c.low.push(Math.round((o - 0.05) * 100) / 100);
    c.close.push(Math.round((o + 0.02) * 100) / 100);
    c.volume.push(100 * (i + 1));
    c.amount.push(1000 * (i + 1) + 0.1);
  }
  return c;
}

describe('aggregateBy: 1m → N minutes with end-of-bar labels', () => {
  it('1m → 5m: 09:31..09:40 give bars labelled 09:35 and 09:40', () => {
    const stamps = Array.from({ length: 10 }, (_, i) => cnAt('2025-01-06', '09:31') + i * MIN);
    const out = aggregateBy(minuteBars(stamps), minuteKeyFn(5, cnSessionOf), 'key');
    expect(out.timestamp).toEqual([cnAt('2025-01-06', '09:35'), cnAt('2025-01-06', '09:40')]);
    expect(out.open).toEqual([10.0, 10.05]);
    expect(out.close).toEqual([10.06, 10.11]);
    expect(out.high).toEqual([10.09, 10.14]);
    expect(out.low).toEqual([9.95, 10.0]);
    expect(out.volume).toEqual([100 + 200 + 300 + 400 + 500, 600 + 700 + 800 + 900 + 1000]);
    expect(out.amount).toEqual([15000.5, 40000.5]);
    expect(out.prev_close).toBeUndefined();
  });

  it('never merges across the lunch break: 11:28..11:30 and 13:01..13:02 in 30m', () => {
    const stamps = ['11:28', '11:29', '11:30', '13:01', '13:02'].map((t) => cnAt('2025-01-06', t));
    const out = aggregateBy(minuteBars(stamps), minuteKeyFn(30, cnSessionOf), 'key');
    expect(out.timestamp).toEqual([cnAt('2025-01-06', '11:30'), cnAt('2025-01-06', '13:30')]);
    expect(out.open).toEqual([10.0, 10.03]);
    expect(out.close).toEqual([10.04, 10.06]);
    expect(out.volume).toEqual([600, 900]);
  });

  it('never merges across days, and a session-end bar closes its group', () => {
    const stamps = [cnAt('2025-01-06', '14:59'), cnAt('2025-01-06', '15:00'), cnAt('2025-01-07', '09:31')];
    const out = aggregateBy(minuteBars(stamps), minuteKeyFn(60, cnSessionOf), 'key');
    expect(out.timestamp).toEqual([cnAt('2025-01-06', '15:00'), cnAt('2025-01-07', '10:30')]);
  });

  it('HK 60m: the morning session ends with a shorter bar labelled 12:00', () => {
    const key = minuteKeyFn(60, hkSessionOf);
    expect(key(hkAt('2025-01-06', '09:31'))).toBe(hkAt('2025-01-06', '10:30'));
    expect(key(hkAt('2025-01-06', '11:30'))).toBe(hkAt('2025-01-06', '11:30'));
    expect(key(hkAt('2025-01-06', '11:31'))).toBe(hkAt('2025-01-06', '12:00'));
    expect(key(hkAt('2025-01-06', '12:00'))).toBe(hkAt('2025-01-06', '12:00'));
    expect(key(hkAt('2025-01-06', '13:01'))).toBe(hkAt('2025-01-06', '14:00'));
    expect(key(hkAt('2025-01-06', '16:00'))).toBe(hkAt('2025-01-06', '16:00'));
  });

  it('a bar outside every session keeps its own label', () => {
    const t = cnAt('2025-01-06', '12:15');
    expect(minuteKeyFn(5, cnSessionOf)(t)).toBe(t);
  });

  it('sums amounts to the cent without float noise', () => {
    const c: Candles = {
      timestamp: [1, 2, 3],
      open: [1, 1, 1],
      high: [1, 1, 1],
      low: [1, 1, 1],
      close: [1, 1, 1],
      volume: [1, 2, 3],
      amount: [0.1, 0.2, 0.4],
    };
    const out = aggregateBy(c, () => 0, 'last');
    expect(out.amount).toEqual([0.7]);
    expect(out.volume).toEqual([6]);
    expect(out.timestamp).toEqual([3]);
  });

  it('empty in, empty out', () => {
    const empty: Candles = { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] };
    expect(aggregateBy(empty, minuteKeyFn(5, cnSessionOf), 'key')).toEqual(empty);
  });
});

describe('aggregateBy: daily → weekly stamped with the last trading day', () => {
  // Week of 13 Jan complete; week of 20 Jan with a Monday holiday; week of 27 Jan partial (today Tue 28th).
  const dates = [
    '2025-01-13', '2025-01-14', '2025-01-15', '2025-01-16', '2025-01-17',
    '2025-01-21', '2025-01-22', '2025-01-23', '2025-01-24',
    '2025-01-27', '2025-01-28',
  ];
  const daily: Candles = {
    timestamp: dates.map(cnDay),
    open: [10, 10.2, 10.1, 10.4, 10.3, 10.5, 10.9, 10.7, 10.8, 11.0, 11.2],
    high: [10.3, 10.4, 10.5, 10.6, 10.5, 11.0, 11.1, 10.9, 11.0, 11.3, 11.5],
    low: [9.9, 10.0, 10.0, 10.2, 10.1, 10.4, 10.6, 10.5, 10.7, 10.9, 11.1],
    close: [10.2, 10.1, 10.4, 10.3, 10.45, 10.9, 10.7, 10.8, 10.95, 11.2, 11.4],
    volume: [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100],
    amount: [1000.1, 2000.2, 3000.3, 4000.4, 5000.5, 6000.6, 7000.7, 8000.8, 9000.9, 10000.1, 11000.2],
  };

  it('groups ISO weeks and stamps each with its last trading day', () => {
    const out = aggregateBy(daily, periodKeyFn('1w', cnLocalDate), 'last');
    expect(out.timestamp).toEqual([cnDay('2025-01-17'), cnDay('2025-01-24'), cnDay('2025-01-28')]);
    expect(out.open).toEqual([10, 10.5, 11.0]);
    expect(out.high).toEqual([10.6, 11.1, 11.5]);
    expect(out.low).toEqual([9.9, 10.4, 10.9]);
    expect(out.close).toEqual([10.45, 10.95, 11.4]);
    expect(out.volume).toEqual([1500, 3000, 2100]);
    expect(out.amount).toEqual([15001.5, 30003, 21000.3]);
  });

  it('stamp "key" would label by the week key instead', () => {
    const out = aggregateBy(daily, periodKeyFn('1w', cnLocalDate), 'key');
    expect(out.timestamp).toEqual([20250113, 20250120, 20250127]);
  });
});

describe('periodKeyFn', () => {
  const key = (period: '1w' | '1M' | '1Q' | '1Y', date: string) => periodKeyFn(period, cnLocalDate)(cnDay(date));

  it('week key is the Monday of the ISO week, also across a year end', () => {
    expect(key('1w', '2025-01-06')).toBe(20250106);
    expect(key('1w', '2025-01-10')).toBe(20250106);
    expect(key('1w', '2025-01-12')).toBe(20250106); // Sunday still belongs to that week
    expect(key('1w', '2025-01-02')).toBe(20241230);
    expect(key('1w', '2024-12-31')).toBe(20241230);
    expect(key('1w', '2024-03-01')).toBe(20240226); // back across a leap-year February
  });

  it('month, quarter and year keys', () => {
    expect(key('1M', '2025-01-31')).toBe(202501);
    expect(key('1M', '2025-02-03')).toBe(202502);
    expect(key('1M', '2024-12-31')).toBe(202412);
    expect(key('1Q', '2025-01-02')).toBe(20251);
    expect(key('1Q', '2025-03-31')).toBe(20251);
    expect(key('1Q', '2025-04-01')).toBe(20252);
    expect(key('1Q', '2025-09-30')).toBe(20253);
    expect(key('1Q', '2025-12-31')).toBe(20254);
    expect(key('1Y', '2024-12-31')).toBe(2024);
    expect(key('1Y', '2025-01-02')).toBe(2025);
  });

  it('uses the exchange-local date, not the UTC date (CN daily bars sit at 16:00 UTC the day before)', () => {
    // 2025-04-01 00:00 +08:00 is 2025-03-31 in UTC; the local date puts it in Q2.
    expect(new Date(cnDay('2025-04-01')).toISOString().slice(0, 10)).toBe('2025-03-31');
    expect(key('1Q', '2025-04-01')).toBe(20252);
  });

  it('monthly, quarterly and yearly bars stamped with their last trading day', () => {
    const dates = ['2024-12-30', '2024-12-31', '2025-01-02', '2025-03-31', '2025-04-01'];
    const c: Candles = {
      timestamp: dates.map(cnDay),
      open: [1, 2, 3, 4, 5],
      high: [1.5, 2.5, 3.5, 4.5, 5.5],
      low: [0.5, 1.5, 2.5, 3.5, 4.5],
      close: [1.2, 2.2, 3.2, 4.2, 5.2],
      volume: [1, 2, 3, 4, 5],
      amount: [10, 20, 30, 40, 50],
    };
    const monthly = aggregateBy(c, periodKeyFn('1M', cnLocalDate), 'last');
    expect(monthly.timestamp).toEqual([cnDay('2024-12-31'), cnDay('2025-01-02'), cnDay('2025-03-31'), cnDay('2025-04-01')]);
    expect(monthly.close).toEqual([2.2, 3.2, 4.2, 5.2]);
    const quarterly = aggregateBy(c, periodKeyFn('1Q', cnLocalDate), 'last');
    expect(quarterly.timestamp).toEqual([cnDay('2024-12-31'), cnDay('2025-03-31'), cnDay('2025-04-01')]);
    expect(quarterly.open).toEqual([1, 3, 5]);
    expect(quarterly.high).toEqual([2.5, 4.5, 5.5]);
    expect(quarterly.volume).toEqual([3, 7, 5]);
    const yearly = aggregateBy(c, periodKeyFn('1Y', cnLocalDate), 'last');
    expect(yearly.timestamp).toEqual([cnDay('2024-12-31'), cnDay('2025-04-01')]);
    expect(yearly.low).toEqual([0.5, 2.5]);
    expect(yearly.amount).toEqual([30, 120]);
  });
});
