// tradeDateStartFn (src/service/candle-plan.ts) remembers the last trade date's span; it must give
// exactly what the calendar gives for every bar, across days, weekends and DST changes.
import { describe, expect, it } from 'vitest';
import { localDate, localMidnight } from '../../src/markets/calendar.ts';
import { tradeDateStartFn } from '../../src/service/candle-plan.ts';

describe('tradeDateStartFn', () => {
  it('equals localMidnight(localDate(ts)) for every minute across DST changes, in and out of order', () => {
    for (const region of ['CN', 'HK', 'US'] as const) {
      const start = tradeDateStartFn(region);
      // 2025-03-07 … 2025-03-11 spans the US change to daylight time (03-09); 2025-11-01 … 11-04 the change back.
      for (const from of [Date.parse('2025-03-07T00:00:00Z'), Date.parse('2025-11-01T00:00:00Z')]) {
        for (let ts = from; ts < from + 4 * 86_400_000; ts += 7 * 60_000) {
          expect(start(ts)).toBe(localMidnight(region, localDate(region, ts)));
        }
        // Backwards, and jumping between days: the memo must not hold a stale span.
        for (const ts of [from + 3 * 86_400_000, from, from + 86_400_000 + 1, from - 1]) {
          expect(start(ts)).toBe(localMidnight(region, localDate(region, ts)));
        }
      }
    }
  });
});
