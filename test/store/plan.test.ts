// Pure range planning of the candle store (src/store/plan.ts, coverage.ts, labels.ts).
import { describe, expect, it } from 'vitest';
import {
  calendarMemoStats, configureCalendarMemo, DEFAULT_CALENDAR_MEMO_MAX_BYTES, isTradingDay, localDate, localMidnight, localTimeMs, minuteBarLabels, nextTradingDay,
} from '../../src/markets/calendar.ts';
import { activeAt, expiredAt, gaps, overlay, overlayAll, type Segment } from '../../src/store/coverage.ts';
import { closedEnd, countLabelsIn, firstLabelAtOrAfter, floorMs, labelBack, labelsIn, lastLabelAtOrBefore, nextClose, openLabel } from '../../src/store/labels.ts';
import { countRange, coverageFor, deficitStep, planFetches, windowFor } from '../../src/store/plan.ts';

const d = (date: string) => localMidnight('CN', date);
const t = (date: string, hhmm: string) => localTimeMs('CN', date, hhmm);
const final = (lo: number, hi: number): Segment => ({ lo, hi, recheckAt: null });
const policy = { bars: { '1d': 2, '1m': 30 } as const };
// Friday 2026-11-20, 20:00 Shanghai: after the close.
const AFTER_CLOSE = t('2026-11-20', '20:00');

describe('coverage segments', () => {
  it('merges touching final ranges and keeps provisional ones apart', () => {
    const merged = overlayAll([], [final(10, 19), final(20, 29), { lo: 30, hi: 39, recheckAt: 100 }]);
    expect(merged).toEqual([final(10, 29), { lo: 30, hi: 39, recheckAt: 100 }]);
  });

  it('a final range replaces provisional parts; a provisional one never downgrades a final one', () => {
    const base = [final(0, 9), { lo: 10, hi: 19, recheckAt: 100 }];
    expect(overlay(base, final(15, 25))).toEqual([final(0, 9), { lo: 10, hi: 14, recheckAt: 100 }, final(15, 25)]);
    expect(overlay(base, { lo: 5, hi: 12, recheckAt: 200 })).toEqual([final(0, 9), { lo: 10, hi: 12, recheckAt: 200 }, { lo: 13, hi: 19, recheckAt: 100 }]);
  });

  it('expired provisional ranges stop counting as covered', () => {
    const segs = [final(0, 9), { lo: 10, hi: 19, recheckAt: 100 }];
    expect(activeAt(segs, 99)).toEqual(segs);
    expect(activeAt(segs, 100)).toEqual([final(0, 9)]);
    expect(expiredAt(segs, 100)).toEqual([{ lo: 10, hi: 19, recheckAt: 100 }]);
    expect(gaps(activeAt(segs, 100), 0, 30)).toEqual([{ lo: 10, hi: 30 }]);
  });
});

describe('planFetches', () => {
  it('a covered window makes no call', () => {
    const plan = planFetches('CN', '1d', [final(d('2025-01-01'), d('2025-12-31'))], d('2025-03-03'), d('2025-06-30'), 5000);
    expect(plan).toEqual({ fetches: [], free: [] });
  });

  it('a partly covered window fetches only the missing month, trimmed to trading days', () => {
    const plan = planFetches('CN', '1d', [final(d('2025-01-01'), d('2025-12-31'))], d('2025-06-01'), d('2026-01-31'), 5000);
    // 2026-01-01/02 are holidays and 01-03/04 a weekend; 01-30 is the last trading day of January.
    expect(plan.fetches).toEqual([{ lo: d('2026-01-05'), hi: d('2026-01-30'), cover: { lo: d('2025-12-31') + 1, hi: d('2026-01-31') }, labels: 20 }]);
  });

  it('gaps at both ends become two calls', () => {
    const plan = planFetches('CN', '1d', [final(d('2025-03-01'), d('2025-03-31'))], d('2025-01-01'), d('2025-05-31'), 5000);
    expect(plan.fetches.map((f) => [f.lo, f.hi])).toEqual([[d('2025-01-02'), d('2025-02-28')], [d('2025-04-01'), d('2025-05-30')]]);
  });

  it('two gaps around a small covered island are one call', () => {
    const plan = planFetches('CN', '1d', [final(d('2025-03-03'), d('2025-03-05'))], d('2025-02-03'), d('2025-03-31'), 5000);
    expect(plan.fetches.map((f) => [f.lo, f.hi])).toEqual([[d('2025-02-05'), d('2025-03-31')]]);
  });

  it('a gap holding only a holiday week is covered without a call', () => {
    const covered = [final(d('2025-12-01'), d('2026-02-13')), final(d('2026-02-24'), d('2026-03-31'))];
    const plan = planFetches('CN', '1d', covered, d('2026-01-05'), d('2026-03-20'), 5000);
    expect(plan.fetches).toEqual([]);
    expect(plan.free).toEqual([{ lo: d('2026-02-13') + 1, hi: d('2026-02-24') - 1 }]);
  });

  it('a suspension inside a covered range costs nothing (coverage, not bars, decides)', () => {
    const plan = planFetches('CN', '1d', [final(d('2025-01-01'), d('2025-12-31'))], d('2025-05-01'), d('2025-05-31'), 5000);
    expect(plan.fetches).toEqual([]);
  });

  it('splits a long gap by the per-call limit without holes in the coverage', () => {
    const plan = planFetches('CN', '1d', [], d('2025-01-01'), d('2025-12-31'), 100);
    expect(plan.fetches.map((f) => f.labels)).toEqual([100, 100, 43]);
    for (let i = 1; i < plan.fetches.length; i++) expect(plan.fetches[i].cover.lo).toBe(plan.fetches[i - 1].cover.hi + 1);
    expect(plan.fetches[0].cover.lo).toBe(d('2025-01-01'));
    expect(plan.fetches[2].cover.hi).toBe(d('2025-12-31'));
  });

  it('minute gaps skip the lunch break and the night', () => {
    const plan = planFetches('CN', '1m', [final(t('2026-11-19', '09:31'), t('2026-11-19', '11:30'))], t('2026-11-19', '09:31'), t('2026-11-19', '23:59'), 5000);
    expect(plan.fetches.map((f) => [f.lo, f.hi, f.labels])).toEqual([[t('2026-11-19', '13:01'), t('2026-11-19', '15:00'), 120]]);
  });
});

/** The possible labels in [lo, hi], written plainly day by day (what labelsIn must return). */
function plainLabels(region: 'CN' | 'HK' | 'US', period: '1d' | '1m', lo: number, hi: number): number[] {
  const out: number[] = [];
  if (hi < lo) return out;
  let day = localDate(region, Math.max(lo, floorMs(region)));
  for (const last = localDate(region, hi); day <= last; day = nextTradingDay(region, day)) {
    const labels = period === '1m' ? minuteBarLabels(region, day, 1) : isTradingDay(region, day) ? [localMidnight(region, day)] : [];
    out.push(...labels.filter((t) => t >= lo && t <= hi));
  }
  return out;
}

describe('counting labels without building them', () => {
  // countLabelsIn is what planFetches sizes its calls with; labelsIn is the list it must agree with.
  it('agrees with labelsIn on every region, both periods, edges inside sessions and caps', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const regions = ['CN', 'HK', 'US'] as const;
    let checked = 0;
    let minuteDaysWhole = 0;
    for (let i = 0; i < 240; i++) {
      const region = regions[i % 3];
      const period = i % 2 === 0 ? '1d' : '1m';
      // Minute ranges of up to ~3 weeks (some whole days, edges anywhere), daily ones of up to ~3 years.
      const span = period === '1m' ? rand() * 21 * 86_400_000 : rand() * 3 * 365 * 86_400_000;
      const lo = localMidnight(region, '2019-01-01') + Math.floor(rand() * 7 * 365 * 86_400_000);
      const hi = lo + Math.floor(span);
      const all = labelsIn(region, period, lo, hi);
      expect(all).toEqual(plainLabels(region, period, lo, hi));
      expect(countLabelsIn(region, period, lo, hi), `${region} ${period} ${lo}..${hi}`).toBe(all.length);
      const cap = 1 + Math.floor(rand() * 400);
      expect(countLabelsIn(region, period, lo, hi, cap)).toBe(labelsIn(region, period, lo, hi, cap).length);
      if (period === '1m' && all.length > 1000) minuteDaysWhole++;
      checked++;
    }
    expect(checked).toBe(240);
    // Some minute ranges span whole days, so the count-from-sessions branch ran, not only the edge one.
    expect(minuteDaysWhole).toBeGreaterThan(10);
    // Half days and the lunch break: a known day counted both ways.
    const cnDay = labelsIn('CN', '1m', t('2026-11-20', '00:00'), t('2026-11-20', '23:59'));
    expect(cnDay.length).toBe(240);
    expect(countLabelsIn('CN', '1m', t('2026-11-20', '00:00'), t('2026-11-20', '23:59'))).toBe(240);
    expect(countLabelsIn('CN', '1m', t('2026-11-20', '10:00'), t('2026-11-20', '13:30'))).toBe(labelsIn('CN', '1m', t('2026-11-20', '10:00'), t('2026-11-20', '13:30')).length);
    expect(countLabelsIn('CN', '1d', d('2026-11-21'), d('2026-11-20'))).toBe(0);
  });
});

describe('count queries', () => {
  it('map to the count-th newest trading day', () => {
    // Ten trading days back from Friday 2026-11-20: 11-09 … 11-20.
    expect(countRange('CN', '1d', floorMs('CN'), d('2026-11-20'), 10)).toEqual({ lo: d('2026-11-09'), hi: d('2026-11-20') });
    expect(labelBack('CN', '1m', t('2026-11-20', '15:00'), 240)).toBe(t('2026-11-20', '09:31'));
  });

  it('holidays inside a count window lengthen the range', () => {
    // 5 trading days back from 2026-02-25: 02-11, 02-12, 02-13, 02-24, 02-25.
    expect(countRange('CN', '1d', floorMs('CN'), d('2026-02-25'), 5)).toEqual({ lo: d('2026-02-11'), hi: d('2026-02-25') });
  });

  it('a count reaching back past the floor stops at the query start or the floor', () => {
    expect(countRange('CN', '1d', floorMs('CN'), d('2026-11-20'), 100_000)).toEqual({ lo: floorMs('CN'), hi: d('2026-11-20') });
    expect(countRange('CN', '1d', d('2026-11-16'), d('2026-11-20'), 100)).toEqual({ lo: d('2026-11-16'), hi: d('2026-11-20') });
  });

  it('a window wholly before the floor or inverted holds nothing', () => {
    expect(countRange('CN', '1d', d('2026-11-20'), d('2026-11-19'), 5)).toBeUndefined();
  });

  it('walking back: a covered segment to count from, else a count call down to the next covered one', () => {
    const covered = [final(100, 199), final(300, 399)];
    expect(deficitStep(covered, 350, 0)).toEqual({ kind: 'covered', segment: final(300, 399) });
    expect(deficitStep(covered, 299, 0)).toEqual({ kind: 'fetch', lo: 200, hi: 299 });
    expect(deficitStep(covered, 99, 0)).toEqual({ kind: 'fetch', lo: 0, hi: 99 });
  });
});

describe('closed and open bars', () => {
  it('after the close the day is closed and nothing is forming', () => {
    expect(closedEnd('CN', '1d', AFTER_CLOSE)).toBe(d('2026-11-20'));
    expect(openLabel('CN', '1d', AFTER_CLOSE)).toBeUndefined();
    expect(windowFor('CN', '1d', { count: 5 }, AFTER_CLOSE)).toEqual({ lo: floorMs('CN'), upper: d('2026-11-20'), closedEnd: d('2026-11-20'), open: undefined });
  });

  it('during the session today is forming, yesterday is the newest closed day', () => {
    const now = t('2026-11-20', '10:15') + 30_000;
    expect(closedEnd('CN', '1d', now)).toBe(d('2026-11-19'));
    expect(openLabel('CN', '1d', now)).toBe(d('2026-11-20'));
    expect(openLabel('CN', '1m', now)).toBe(t('2026-11-20', '10:16'));
    expect(windowFor('CN', '1m', { end: t('2026-11-20', '10:00') }, now).open).toBeUndefined();
  });

  it('provisional bars are re-fetched at the next session close', () => {
    expect(nextClose('CN', AFTER_CLOSE)).toBe(t('2026-11-23', '15:00'));
    expect(nextClose('CN', t('2026-11-20', '10:00'))).toBe(t('2026-11-20', '15:00'));
  });
});

describe('revision window', () => {
  it('the newest two closed daily bars are provisional, the rest final', () => {
    const segs = coverageFor('CN', '1d', { lo: d('2026-01-01'), hi: d('2026-11-20') }, AFTER_CLOSE, policy);
    expect(segs).toEqual([
      final(d('2026-01-01'), d('2026-11-19') - 1),
      { lo: d('2026-11-19'), hi: d('2026-11-20'), recheckAt: t('2026-11-23', '15:00') },
    ]);
  });

  it('the re-fetch of due provisional bars makes them final', () => {
    const later = t('2026-11-23', '15:30');
    const segs = coverageFor('CN', '1d', { lo: d('2026-11-19'), hi: d('2026-11-23') }, later, policy, [{ lo: d('2026-11-19'), hi: d('2026-11-20') }]);
    // 11-20 was rechecked (final now); 11-23 is new and young.
    expect(segs).toEqual([
      final(d('2026-11-19'), d('2026-11-20') - 1),
      final(d('2026-11-20'), d('2026-11-20')),
      { lo: d('2026-11-20') + 1, hi: d('2026-11-23'), recheckAt: t('2026-11-24', '15:00') },
    ]);
  });

  it('the newest thirty closed minute bars of a mid-session fill wait for today\'s close', () => {
    const now = t('2026-11-20', '10:30');
    const segs = coverageFor('CN', '1m', { lo: t('2026-11-20', '09:31'), hi: now }, now, policy);
    expect(segs).toEqual([
      final(t('2026-11-20', '09:31'), t('2026-11-20', '10:01') - 1),
      { lo: t('2026-11-20', '10:01'), hi: now, recheckAt: t('2026-11-20', '15:00') },
    ]);
  });

  it('old ranges are final at once, and a zero window disables revision', () => {
    expect(coverageFor('CN', '1d', { lo: d('2025-01-01'), hi: d('2025-12-31') }, AFTER_CLOSE, policy)).toEqual([final(d('2025-01-01'), d('2025-12-31'))]);
    expect(coverageFor('CN', '1d', { lo: d('2026-11-01'), hi: d('2026-11-20') }, AFTER_CLOSE, { bars: { '1d': 0, '1m': 0 } })).toEqual([final(d('2026-11-01'), d('2026-11-20'))]);
  });
});

describe('a futures product calendar (night sessions belong to the next trading day)', () => {
  const KEY = 'CN_FUTURES:au' as const;
  const at = (date: string, hhmm: string) => Date.parse(`${date}T${hhmm}:00+08:00`);
  // Monday 2025-06-16's session: Friday 21:00 – Saturday 02:30, then 09:00 – 15:00.
  const monday = minuteBarLabels(KEY, '2025-06-16', 1);

  it('labels across Friday night and the weekend are Monday\'s, in order, counted without building them', () => {
    const lo = at('2025-06-13', '15:00');
    const hi = at('2025-06-16', '15:00');
    const labels = labelsIn(KEY, '1m', lo + 1, hi);
    expect(labels).toEqual(monday);
    expect(countLabelsIn(KEY, '1m', lo + 1, hi)).toBe(monday.length);
    expect(labels[0]).toBe(at('2025-06-13', '21:01'));
  });

  it('the newest label at or before a Saturday morning is the night\'s last (02:30), not Friday\'s 15:00', () => {
    expect(lastLabelAtOrBefore(KEY, '1m', at('2025-06-14', '10:00'))).toBe(at('2025-06-14', '02:30'));
    expect(lastLabelAtOrBefore(KEY, '1m', at('2025-06-13', '22:00'))).toBe(at('2025-06-13', '22:00'));
    expect(lastLabelAtOrBefore(KEY, '1m', at('2025-06-13', '18:00'))).toBe(at('2025-06-13', '15:00'));
    expect(firstLabelAtOrAfter(KEY, '1m', at('2025-06-13', '18:00'))).toBe(at('2025-06-13', '21:01'));
    expect(firstLabelAtOrAfter(KEY, '1m', at('2025-06-14', '03:00'))).toBe(at('2025-06-16', '09:01'));
  });

  it('counting back from Monday\'s close walks through the night into Friday', () => {
    expect(labelBack(KEY, '1m', at('2025-06-16', '15:00'), monday.length)).toBe(monday[0]);
    expect(labelBack(KEY, '1m', at('2025-06-16', '15:00'), monday.length + 1)).toBe(at('2025-06-13', '15:00'));
    expect(labelBack(KEY, '1d', localMidnight(KEY, '2025-06-16'), 2)).toBe(localMidnight(KEY, '2025-06-13'));
  });

  it('before the futures calendar begins (2020-07-20) there is no label, found without walking every day back to 1990', () => {
    // A memo large enough to keep every day a walk touches: its growth is the days walked.
    configureCalendarMemo({ maxBytes: 1 << 30 });
    try {
      const before = calendarMemoStats().entries;
      expect(lastLabelAtOrBefore(KEY, '1m', at('2019-06-03', '10:00'))).toBeUndefined();
      expect(lastLabelAtOrBefore(KEY, '1d', at('2019-06-03', '10:00'))).toBeUndefined();
      // More minute labels than the product has: the walk ends where its calendar does.
      expect(labelBack(KEY, '1m', at('2020-07-22', '15:00'), 5000)).toBeUndefined();
      expect(calendarMemoStats().entries - before).toBeLessThan(100);
    } finally {
      configureCalendarMemo({ maxBytes: DEFAULT_CALENDAR_MEMO_MAX_BYTES });
    }
    // The first labels are still found.
    expect(lastLabelAtOrBefore(KEY, '1d', at('2020-07-20', '10:00'))).toBe(localMidnight(KEY, '2020-07-20'));
    expect(labelBack(KEY, '1m', at('2020-07-20', '15:00'), minuteBarLabels(KEY, '2020-07-20', 1).length)).toBe(at('2020-07-20', '09:01'));
  });

  it('Friday 22:00: Monday\'s 1d bar is forming, Friday\'s the newest closed; the 1m bar forming is 22:01', () => {
    const now = at('2025-06-13', '22:00');
    expect(closedEnd(KEY, '1d', now)).toBe(localMidnight(KEY, '2025-06-13'));
    expect(openLabel(KEY, '1d', now)).toBe(localMidnight(KEY, '2025-06-16'));
    expect(openLabel(KEY, '1m', now)).toBe(at('2025-06-13', '22:01'));
    expect(nextClose(KEY, now)).toBe(at('2025-06-16', '15:00'));
  });
});
