import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Region } from '../../src/domain.ts';
import {
  TIME_ZONES,
  addDays,
  calendarMemoStats,
  dayStatus,
  configureCalendarMemo,
  DEFAULT_CALENDAR_MEMO_MAX_BYTES,
  earlyClose,
  holidayName,
  isMarketOpen,
  isTradingDay,
  latestStartedSessionDay,
  latestTradingDay,
  localDate,
  localMidnight,
  localParts,
  localTimeMs,
  minuteBarLabelFor,
  minuteBarLabels,
  nextTradingDay,
  prevTradingDay,
  sessionState,
  sessions,
  tradingDaysBetween,
} from '../../src/markets/calendar.ts';
import { CLOSURE_ROWS, HOLIDAY_COVERAGE, SHORT_DAY_ROWS } from '../../src/markets/holidays.ts';

const REGIONS: Region[] = ['CN', 'HK', 'US'];
/** Epoch ms of a UTC wall time; month is 1-based. */
const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0) => Date.UTC(y, mo - 1, d, h, mi, s, ms);
const isoDays = (from: string, to: string) => {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
};

describe('time zones and local time', () => {
  it('maps regions to IANA zones', () => {
    expect(TIME_ZONES).toEqual({ CN: 'Asia/Shanghai', HK: 'Asia/Hong_Kong', US: 'America/New_York' });
  });

  it('localMidnight gives 00:00 exchange-local', () => {
    expect(localMidnight('CN', '2026-07-07')).toBe(1783353600000);
    expect(localMidnight('HK', '2025-01-01')).toBe(utc(2024, 12, 31, 16));
    expect(localMidnight('US', '2025-03-09')).toBe(utc(2025, 3, 9, 5)); // EST, DST starts 02:00 that day
    expect(localMidnight('US', '2025-03-10')).toBe(utc(2025, 3, 10, 4));
    expect(localMidnight('US', '2025-11-02')).toBe(utc(2025, 11, 2, 4)); // still EDT at midnight
    expect(localMidnight('US', '2025-11-03')).toBe(utc(2025, 11, 3, 5));
  });

  it('localTimeMs follows US DST switches', () => {
    expect(localTimeMs('US', '2025-03-07', '09:30')).toBe(utc(2025, 3, 7, 14, 30));
    expect(localTimeMs('US', '2025-03-10', '09:30')).toBe(utc(2025, 3, 10, 13, 30));
    expect(localTimeMs('US', '2025-10-31', '09:30')).toBe(utc(2025, 10, 31, 13, 30));
    expect(localTimeMs('US', '2025-11-03', '09:30')).toBe(utc(2025, 11, 3, 14, 30));
    expect(localTimeMs('CN', '2025-03-10', '09:30')).toBe(utc(2025, 3, 10, 1, 30));
    expect(localTimeMs('HK', '2025-07-01', '16:00')).toBe(utc(2025, 7, 1, 8));
  });

  it('resolves a skipped local time forward and a repeated one to its first occurrence', () => {
    expect(localTimeMs('US', '2025-03-09', '02:30')).toBe(utc(2025, 3, 9, 7, 30)); // = 03:30 EDT
    expect(localTimeMs('US', '2025-11-02', '01:30')).toBe(utc(2025, 11, 2, 5, 30)); // 01:30 EDT
  });

  it('localParts and localDate read the exchange wall clock', () => {
    expect(localParts('US', utc(2025, 3, 10, 3, 59))).toEqual({ date: '2025-03-09', minutes: 1439, weekday: 0 });
    expect(localParts('US', utc(2025, 3, 10, 4, 0))).toEqual({ date: '2025-03-10', minutes: 0, weekday: 1 });
    expect(localParts('CN', utc(2025, 1, 1, 16))).toEqual({ date: '2025-01-02', minutes: 0, weekday: 4 });
    expect(localParts('US', utc(2025, 11, 2, 5, 30))).toEqual({ date: '2025-11-02', minutes: 90, weekday: 0 });
    expect(localParts('US', utc(2025, 11, 2, 6, 30))).toEqual({ date: '2025-11-02', minutes: 90, weekday: 0 });
    expect(localParts('HK', utc(2025, 3, 3, 1, 30, 59, 999))).toEqual({ date: '2025-03-03', minutes: 570, weekday: 1 });
    expect(localDate('HK', utc(2025, 12, 31, 15, 59, 59, 999))).toBe('2025-12-31');
    expect(localDate('HK', utc(2025, 12, 31, 16))).toBe('2026-01-01');
    expect(localDate('US', utc(2025, 1, 1, 4, 59))).toBe('2024-12-31');
  });

  it('rejects malformed dates and times', () => {
    for (const bad of ['2025-02-29', '2025-1-01', '2025/01/01', '2025-13-01', '2025-04-31', '']) {
      expect(() => localMidnight('CN', bad)).toThrow(RangeError);
    }
    for (const bad of ['9:30', '24:00', '09:60', '0930']) {
      expect(() => localTimeMs('CN', '2025-03-03', bad)).toThrow(RangeError);
    }
    expect(localMidnight('CN', '2024-02-29')).toBe(utc(2024, 2, 28, 16));
  });
});

describe('addDays', () => {
  it('does pure ISO date arithmetic', () => {
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(addDays('2025-03-01', -1)).toBe('2025-02-28');
    expect(addDays('2025-12-31', 1)).toBe('2026-01-01');
    expect(addDays('2025-01-01', 365)).toBe('2026-01-01');
    expect(addDays('2000-02-28', 1)).toBe('2000-02-29');
    expect(addDays('1900-02-28', 1)).toBe('1900-03-01');
    expect(addDays('2025-06-15', 0)).toBe('2025-06-15');
    expect(() => addDays('2025-06-15', 1.5)).toThrow(RangeError);
  });
});

describe('holiday tables', () => {
  it.each(REGIONS)('%s entries are sorted, unique weekdays inside the covered dates', (region) => {
    const { first, last } = HOLIDAY_COVERAGE[region];
    for (const rows of [CLOSURE_ROWS[region], SHORT_DAY_ROWS[region]]) {
      const dates = rows.map((r) => r[0]);
      expect([...dates].sort()).toEqual(dates);
      expect(new Set(dates).size).toBe(dates.length);
      for (const [date, name] of rows) {
        const weekday = new Date(`${date}T00:00:00Z`).getUTCDay();
        expect(weekday, date).not.toBe(0);
        expect(weekday, date).not.toBe(6);
        expect(date >= first && date <= last, date).toBe(true);
        expect(name.length).toBeGreaterThan(0);
      }
    }
    for (const [date, , open, close] of SHORT_DAY_ROWS[region]) {
      expect(isTradingDay(region, date), date).toBe(true);
      expect(open !== null || close !== null, date).toBe(true);
    }
  });

  it('has closures in every covered year of every market', () => {
    for (const region of REGIONS) {
      const { first, last } = HOLIDAY_COVERAGE[region];
      for (let year = Number(first.slice(0, 4)) + 1; year <= Number(last.slice(0, 4)); year++) {
        expect(CLOSURE_ROWS[region].some(([date]) => date.startsWith(`${year}-`)), `${region} ${year}`).toBe(true);
      }
    }
    expect(HOLIDAY_COVERAGE).toEqual({
      CN: { first: '1990-12-19', last: '2026-12-31' },
      HK: { first: '1986-01-01', last: '2027-12-31' },
      US: { first: '1986-01-01', last: '2028-12-31' },
    });
  });
});

describe('trading days', () => {
  const closed: Record<Region, string[]> = {
    CN: [
      ...isoDays('2025-01-28', '2025-02-04'),
      ...isoDays('2025-10-01', '2025-10-08'),
      '2024-01-01', '2024-02-09', '2024-04-04', '2024-05-03', '2024-06-10', '2024-09-17', '2024-10-07',
      '2025-01-01', '2025-04-04', '2025-05-05', '2025-06-02',
      '2026-01-02', ...isoDays('2026-02-15', '2026-02-23'), '2026-04-06', '2026-05-05', '2026-06-19', '2026-09-25',
      '2026-10-07',
      // make-up working weekends are still closed for the exchange
      '2025-01-26', '2025-02-08', '2025-09-28', '2025-10-11', '2026-01-04', '2026-02-14', '2026-02-28',
    ],
    HK: [
      '2024-02-12', '2024-02-13', '2024-03-29', '2024-04-01', '2024-09-18', '2024-10-11',
      '2025-01-29', '2025-01-30', '2025-01-31', '2025-04-18', '2025-04-21', '2025-05-05', '2025-10-07', '2025-10-29',
      '2025-12-25', '2025-12-26',
      '2026-02-17', '2026-04-06', '2026-04-07', '2026-05-25', '2026-10-19', '2026-12-25',
      '2027-02-08', '2027-02-09', '2027-09-16', '2027-10-08', '2027-12-27',
    ],
    US: [
      '2024-01-15', '2024-03-29', '2024-06-19', '2024-11-28',
      '2025-01-09', '2025-01-20', '2025-04-18', '2025-06-19', '2025-07-04', '2025-11-27', '2025-12-25',
      '2026-04-03', '2026-07-03', '2026-11-26',
      '2027-03-26', '2027-06-18', '2027-07-05', '2027-12-24',
      '2028-01-17', '2028-11-23',
    ],
  };
  const open: Record<Region, string[]> = {
    CN: ['2025-01-27', '2025-02-05', '2025-09-30', '2025-10-09', '2026-02-13', '2026-02-24', '2026-09-28', '2026-10-08'],
    // 2025-05-30: Tuen Ng fell on Saturday 05-31 (no substitute); 2026-12-28: Boxing Day on a Saturday
    HK: ['2025-01-28', '2025-02-03', '2025-05-30', '2026-02-16', '2026-02-20', '2026-12-28', '2027-12-24'],
    // 2027-12-31: New Year's Day 2028 falls on a Saturday and is not observed
    US: ['2025-01-08', '2025-01-10', '2025-11-28', '2026-07-06', '2027-12-31', '2028-01-03'],
  };

  it.each(REGIONS)('%s known closures are not trading days', (region) => {
    for (const date of closed[region]) expect(isTradingDay(region, date), date).toBe(false);
  });

  it.each(REGIONS)('%s days next to closures are trading days', (region) => {
    for (const date of open[region]) expect(isTradingDay(region, date), date).toBe(true);
  });

  it('CN 2027 is not published yet: unknown, not a guessed closure or session', () => {
    // Intended change: the derived 2027 CN rows are gone (the tables stop at the latest published year).
    for (const date of ['2027-01-01', '2027-02-05', '2027-02-12', '2027-10-07']) expect(dayStatus('CN', date), date).toBe('unknown');
  });

  it('closes weekends everywhere, also outside the tables', () => {
    for (const region of REGIONS) {
      for (const date of ['2025-03-08', '2025-03-09', '2035-06-02', '2035-06-03']) {
        expect(isTradingDay(region, date), `${region} ${date}`).toBe(false);
      }
      expect(isTradingDay(region, '2035-06-04')).toBe(true);
    }
  });

  it('names holidays, not weekends or trading days', () => {
    expect(holidayName('CN', '2025-01-28')).toBe('Spring Festival');
    expect(holidayName('CN', '2025-10-06')).toBe('Mid-Autumn Festival');
    expect(holidayName('HK', '2025-01-29')).toBe("Lunar New Year's Day");
    expect(holidayName('HK', '2026-04-07')).toBe('The day following Easter Monday');
    expect(holidayName('US', '2025-01-09')).toBe('National Day of Mourning for President Carter');
    expect(holidayName('US', '2025-11-27')).toBe('Thanksgiving Day');
    expect(holidayName('CN', '2025-02-08')).toBeUndefined();
    expect(holidayName('US', '2025-11-28')).toBeUndefined();
  });

  it('exposes early closes', () => {
    expect(earlyClose('US', '2025-11-28')).toEqual({ date: '2025-11-28', name: 'Day after Thanksgiving', close: '13:00' });
    expect(earlyClose('HK', '2025-12-24')?.close).toBe('12:00');
    expect(earlyClose('CN', '2025-12-24')).toBeUndefined();
  });

  it('steps to the next and previous trading day', () => {
    expect(nextTradingDay('CN', '2025-01-27')).toBe('2025-02-05');
    expect(nextTradingDay('CN', '2025-01-30')).toBe('2025-02-05');
    expect(prevTradingDay('CN', '2025-02-05')).toBe('2025-01-27');
    expect(nextTradingDay('CN', '2026-02-13')).toBe('2026-02-24');
    expect(nextTradingDay('CN', '2025-09-30')).toBe('2025-10-09');
    expect(nextTradingDay('CN', '2025-03-07')).toBe('2025-03-10');
    expect(prevTradingDay('CN', '2025-03-10')).toBe('2025-03-07');
    expect(nextTradingDay('HK', '2025-01-28')).toBe('2025-02-03');
    expect(prevTradingDay('HK', '2025-02-03')).toBe('2025-01-28');
    expect(nextTradingDay('US', '2025-11-26')).toBe('2025-11-28');
    expect(prevTradingDay('US', '2025-01-10')).toBe('2025-01-08');
    expect(nextTradingDay('US', '2027-12-23')).toBe('2027-12-27');
  });

  it('lists trading days in a range, inclusive and ascending', () => {
    const oct = tradingDaysBetween('CN', '2025-10-01', '2025-10-31');
    expect(oct.length).toBe(17);
    expect(oct.slice(0, 3)).toEqual(['2025-10-09', '2025-10-10', '2025-10-13']);
    expect(oct.at(-1)).toBe('2025-10-31');
    expect(tradingDaysBetween('CN', '2025-02-01', '2025-02-28').length).toBe(18);
    expect(tradingDaysBetween('US', '2025-11-01', '2025-11-30').length).toBe(19);
    expect(tradingDaysBetween('HK', '2025-12-01', '2025-12-31').length).toBe(21);
    expect(tradingDaysBetween('CN', '2025-03-03', '2025-03-03')).toEqual(['2025-03-03']);
    expect(tradingDaysBetween('CN', '2025-10-01', '2025-10-01')).toEqual([]);
    expect(tradingDaysBetween('CN', '2025-03-10', '2025-03-03')).toEqual([]);
  });

  it('matches published annual trading-day counts', () => {
    const count = (region: Region, year: number) => tradingDaysBetween(region, `${year}-01-01`, `${year}-12-31`).length;
    expect(count('CN', 2023)).toBe(242);
    expect(count('CN', 2024)).toBe(242);
    expect(count('CN', 2025)).toBe(243);
    expect(count('US', 2023)).toBe(250);
    expect(count('US', 2024)).toBe(252);
    expect(count('US', 2025)).toBe(250);
  });
});

describe('sessions', () => {
  it('gives the regular sessions of a full day', () => {
    expect(sessions('CN', '2025-03-03')).toEqual([
      { start: utc(2025, 3, 3, 1, 30), end: utc(2025, 3, 3, 3, 30) },
      { start: utc(2025, 3, 3, 5), end: utc(2025, 3, 3, 7) },
    ]);
    expect(sessions('HK', '2025-03-03')).toEqual([
      { start: utc(2025, 3, 3, 1, 30), end: utc(2025, 3, 3, 4) },
      { start: utc(2025, 3, 3, 5), end: utc(2025, 3, 3, 8) },
    ]);
    expect(sessions('US', '2025-03-07')).toEqual([{ start: utc(2025, 3, 7, 14, 30), end: utc(2025, 3, 7, 21) }]);
    expect(sessions('US', '2025-03-10')).toEqual([{ start: utc(2025, 3, 10, 13, 30), end: utc(2025, 3, 10, 20) }]);
  });

  it('shortens half days', () => {
    expect(sessions('US', '2025-11-28')).toEqual([{ start: utc(2025, 11, 28, 14, 30), end: utc(2025, 11, 28, 18) }]);
    expect(sessions('US', '2025-07-03')).toEqual([{ start: utc(2025, 7, 3, 13, 30), end: utc(2025, 7, 3, 17) }]);
    expect(sessions('HK', '2025-12-24')).toEqual([{ start: utc(2025, 12, 24, 1, 30), end: utc(2025, 12, 24, 4) }]);
    expect(sessions('HK', '2026-02-16')).toEqual([{ start: utc(2026, 2, 16, 1, 30), end: utc(2026, 2, 16, 4) }]);
  });

  it('is empty on closed days and shared, frozen otherwise', () => {
    expect(sessions('CN', '2025-10-01')).toEqual([]);
    expect(sessions('US', '2025-03-08')).toEqual([]);
    expect(sessions('CN', '2025-03-03')).toBe(sessions('CN', '2025-03-03'));
    expect(Object.isFrozen(sessions('CN', '2025-03-03'))).toBe(true);
  });
});

describe('minuteBarLabels', () => {
  it('counts 240 / 330 / 390 one-minute bars', () => {
    const cn = minuteBarLabels('CN', '2025-03-03', 1);
    expect(cn.length).toBe(240);
    expect([cn[0], cn[119], cn[120], cn[239]]).toEqual([
      utc(2025, 3, 3, 1, 31), utc(2025, 3, 3, 3, 30), utc(2025, 3, 3, 5, 1), utc(2025, 3, 3, 7),
    ]);
    const hk = minuteBarLabels('HK', '2025-03-03', 1);
    expect(hk.length).toBe(330);
    expect([hk[0], hk[149], hk[150], hk[329]]).toEqual([
      utc(2025, 3, 3, 1, 31), utc(2025, 3, 3, 4), utc(2025, 3, 3, 5, 1), utc(2025, 3, 3, 8),
    ]);
    const us = minuteBarLabels('US', '2025-03-10', 1);
    expect(us.length).toBe(390);
    expect([us[0], us[389]]).toEqual([utc(2025, 3, 10, 13, 31), utc(2025, 3, 10, 20)]);
  });

  it('aligns longer periods to each session start, with a short last bar', () => {
    expect(minuteBarLabels('CN', '2025-03-03', 5).length).toBe(48);
    expect(minuteBarLabels('CN', '2025-03-03', 60)).toEqual([
      utc(2025, 3, 3, 2, 30), utc(2025, 3, 3, 3, 30), utc(2025, 3, 3, 6), utc(2025, 3, 3, 7),
    ]);
    expect(minuteBarLabels('HK', '2025-03-03', 60)).toEqual([
      utc(2025, 3, 3, 2, 30), utc(2025, 3, 3, 3, 30), utc(2025, 3, 3, 4),
      utc(2025, 3, 3, 6), utc(2025, 3, 3, 7), utc(2025, 3, 3, 8),
    ]);
    const us30 = minuteBarLabels('US', '2025-03-10', 30);
    expect(us30.length).toBe(13);
    expect([us30[0], us30[12]]).toEqual([utc(2025, 3, 10, 14), utc(2025, 3, 10, 20)]);
    // 120-minute sessions in 7-minute bars: 17 full bars and a 1-minute one each
    const cn7 = minuteBarLabels('CN', '2025-03-03', 7);
    expect(cn7.length).toBe(36);
    expect(cn7.slice(16, 19)).toEqual([utc(2025, 3, 3, 3, 29), utc(2025, 3, 3, 3, 30), utc(2025, 3, 3, 5, 7)]);
  });

  it('shortens half days and is empty on closed days', () => {
    const hk = minuteBarLabels('HK', '2025-12-24', 1);
    expect(hk.length).toBe(150);
    expect(hk.at(-1)).toBe(utc(2025, 12, 24, 4));
    const us = minuteBarLabels('US', '2025-11-28', 1);
    expect(us.length).toBe(210);
    expect(us.at(-1)).toBe(utc(2025, 11, 28, 18));
    expect(minuteBarLabels('CN', '2025-10-01', 1)).toEqual([]);
  });

  it('rejects periods that are not positive integers', () => {
    for (const p of [0, -5, 1.5, Number.NaN]) expect(() => minuteBarLabels('CN', '2025-03-03', p)).toThrow(RangeError);
    expect(() => minuteBarLabelFor('CN', utc(2025, 3, 3, 2), 0)).toThrow(RangeError);
  });
});

describe('minuteBarLabelFor', () => {
  const cn = (h: number, mi: number, s = 0, ms = 0) => utc(2025, 3, 3, h - 8, mi, s, ms); // CST wall time

  it('folds the opening instant into the first bar and labels (label − 1m, label]', () => {
    expect(minuteBarLabelFor('CN', cn(9, 30), 1)).toBe(cn(9, 31));
    expect(minuteBarLabelFor('CN', cn(9, 31), 1)).toBe(cn(9, 31));
    expect(minuteBarLabelFor('CN', cn(9, 31, 0, 1), 1)).toBe(cn(9, 32));
    expect(minuteBarLabelFor('CN', cn(11, 29, 30), 1)).toBe(cn(11, 30));
    expect(minuteBarLabelFor('CN', cn(11, 30), 1)).toBe(cn(11, 30));
    expect(minuteBarLabelFor('CN', cn(13, 0), 1)).toBe(cn(13, 1));
    expect(minuteBarLabelFor('CN', cn(14, 59, 59, 999), 1)).toBe(cn(15, 0));
    expect(minuteBarLabelFor('CN', cn(15, 0), 1)).toBe(cn(15, 0));
  });

  it('is undefined outside regular sessions', () => {
    for (const t of [cn(9, 29, 59, 999), cn(11, 30, 0, 1), cn(12, 0), cn(12, 59, 59, 999), cn(15, 0, 0, 1), cn(20, 0)]) {
      expect(minuteBarLabelFor('CN', t, 1)).toBeUndefined();
    }
    expect(minuteBarLabelFor('CN', utc(2025, 10, 1, 2), 1)).toBeUndefined(); // National Day 10:00
    expect(minuteBarLabelFor('CN', utc(2025, 3, 8, 2), 1)).toBeUndefined(); // Saturday
  });

  it('handles longer periods and short last bars', () => {
    expect(minuteBarLabelFor('CN', cn(9, 30), 5)).toBe(cn(9, 35));
    expect(minuteBarLabelFor('CN', cn(9, 35), 5)).toBe(cn(9, 35));
    expect(minuteBarLabelFor('CN', cn(9, 35, 0, 1), 5)).toBe(cn(9, 40));
    expect(minuteBarLabelFor('CN', cn(13, 0), 5)).toBe(cn(13, 5));
    expect(minuteBarLabelFor('CN', cn(11, 29), 7)).toBe(cn(11, 29));
    expect(minuteBarLabelFor('CN', cn(11, 29, 0, 1), 7)).toBe(cn(11, 30));
    expect(minuteBarLabelFor('HK', cn(11, 45), 60)).toBe(cn(12, 0));
    expect(minuteBarLabelFor('HK', cn(12, 0), 60)).toBe(cn(12, 0));
    expect(minuteBarLabelFor('HK', cn(13, 0), 60)).toBe(cn(14, 0));
    expect(minuteBarLabelFor('HK', cn(15, 59), 60)).toBe(cn(16, 0));
  });

  it('follows DST and early closes in the US', () => {
    expect(minuteBarLabelFor('US', utc(2025, 3, 10, 13, 30), 1)).toBe(utc(2025, 3, 10, 13, 31));
    expect(minuteBarLabelFor('US', utc(2025, 3, 7, 13, 30), 1)).toBeUndefined(); // 08:30 EST
    expect(minuteBarLabelFor('US', utc(2025, 11, 28, 17, 59, 30), 1)).toBe(utc(2025, 11, 28, 18));
    expect(minuteBarLabelFor('US', utc(2025, 11, 28, 18), 1)).toBe(utc(2025, 11, 28, 18));
    expect(minuteBarLabelFor('US', utc(2025, 11, 28, 18, 0, 0, 1), 1)).toBeUndefined();
  });

  it('always returns one of the day’s labels, the nearest one at or after the instant', () => {
    const start = utc(2024, 1, 1);
    const end = utc(2027, 1, 1);
    fc.assert(
      fc.property(
        fc.constantFrom<Region>('CN', 'HK', 'US'),
        fc.integer({ min: start, max: end }),
        fc.constantFrom(1, 5, 10, 15, 30, 60),
        (region, ms, period) => {
          const label = minuteBarLabelFor(region, ms, period);
          if (label === undefined) {
            expect(isMarketOpen(region, ms)).toBe(false);
            return;
          }
          const labels = minuteBarLabels(region, localDate(region, ms), period);
          const i = labels.indexOf(label);
          expect(i).toBeGreaterThanOrEqual(0);
          expect(label).toBeGreaterThanOrEqual(ms);
          expect(label - ms).toBeLessThanOrEqual(period * 60_000);
          if (i > 0) expect(labels[i - 1]).toBeLessThan(ms);
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('sessionState and isMarketOpen', () => {
  const cn = (h: number, mi: number, s = 0, ms = 0) => utc(2025, 3, 3, h - 8, mi, s, ms);

  it('walks a CN day', () => {
    const states = [
      [cn(3, 0), 'closed'], [cn(9, 14, 59, 999), 'closed'], [cn(9, 15), 'pre_market'], [cn(9, 20), 'pre_market'],
      [cn(9, 29, 59, 999), 'pre_market'], [cn(9, 30), 'regular'], [cn(10, 0), 'regular'],
      [cn(11, 29, 59, 999), 'regular'], [cn(11, 30), 'lunch_break'], [cn(12, 0), 'lunch_break'],
      [cn(13, 0), 'regular'], [cn(14, 59, 59, 999), 'regular'], [cn(15, 0), 'after_hours'],
      [cn(15, 10), 'after_hours'], [cn(15, 30), 'closed'], [cn(20, 0), 'closed'],
    ] as const;
    for (const [t, state] of states) expect(sessionState('CN', t), new Date(t).toISOString()).toBe(state);
  });

  it('is closed all day on holidays, weekends and make-up Saturdays', () => {
    for (const h of [9, 10, 12, 15]) {
      expect(sessionState('CN', utc(2025, 10, 1, h - 8, 20))).toBe('closed');
      expect(sessionState('CN', utc(2025, 2, 8, h - 8, 20))).toBe('closed');
      expect(sessionState('US', utc(2025, 11, 27, h + 5))).toBe('closed');
    }
  });

  it('walks an HK full day and half day', () => {
    const hk = (d: number, h: number, mi: number, s = 0) => utc(2025, 12, d, h - 8, mi, s);
    const full = [
      [hk(23, 8, 59), 'closed'], [hk(23, 9, 0), 'pre_market'], [hk(23, 9, 30), 'regular'], [hk(23, 12, 0), 'lunch_break'],
      [hk(23, 13, 0), 'regular'], [hk(23, 16, 0), 'after_hours'], [hk(23, 16, 9, 59), 'after_hours'],
      [hk(23, 16, 10), 'closed'],
    ] as const;
    for (const [t, state] of full) expect(sessionState('HK', t), new Date(t).toISOString()).toBe(state);
    const half = [
      [hk(24, 11, 59), 'regular'], [hk(24, 12, 0), 'after_hours'], [hk(24, 12, 10), 'closed'], [hk(24, 13, 30), 'closed'],
    ] as const;
    for (const [t, state] of half) expect(sessionState('HK', t), new Date(t).toISOString()).toBe(state);
  });

  it('walks a US day across DST and an early close', () => {
    const states = [
      [utc(2025, 3, 10, 7, 59), 'closed'], [utc(2025, 3, 10, 8), 'pre_market'], [utc(2025, 3, 10, 13, 29), 'pre_market'],
      [utc(2025, 3, 10, 13, 30), 'regular'], [utc(2025, 3, 10, 19, 59), 'regular'], [utc(2025, 3, 10, 20), 'after_hours'],
      [utc(2025, 3, 10, 23, 59), 'after_hours'], [utc(2025, 3, 11, 0), 'closed'],
      [utc(2025, 3, 7, 13, 30), 'pre_market'], [utc(2025, 3, 7, 14, 30), 'regular'], [utc(2025, 3, 7, 21), 'after_hours'],
      [utc(2025, 11, 28, 17, 59), 'regular'], [utc(2025, 11, 28, 18), 'after_hours'], [utc(2025, 11, 28, 21, 59), 'after_hours'],
      [utc(2025, 11, 28, 22), 'closed'],
    ] as const;
    for (const [t, state] of states) expect(sessionState('US', t), new Date(t).toISOString()).toBe(state);
  });

  it('isMarketOpen is true exactly inside regular sessions', () => {
    expect(isMarketOpen('CN', cn(9, 30))).toBe(true);
    expect(isMarketOpen('CN', cn(9, 29, 59, 999))).toBe(false);
    expect(isMarketOpen('CN', cn(11, 30))).toBe(false);
    expect(isMarketOpen('CN', cn(14, 59, 59, 999))).toBe(true);
    expect(isMarketOpen('CN', cn(15, 0))).toBe(false);
    expect(isMarketOpen('US', utc(2025, 3, 7, 14, 30))).toBe(true);
    expect(isMarketOpen('US', utc(2025, 3, 7, 13, 30))).toBe(false);
    expect(isMarketOpen('US', utc(2025, 11, 27, 15))).toBe(false);
    fc.assert(
      fc.property(fc.constantFrom<Region>('CN', 'HK', 'US'), fc.integer({ min: utc(2024, 1, 1), max: utc(2027, 1, 1) }), (region, ms) => {
        expect(isMarketOpen(region, ms)).toBe(sessionState(region, ms) === 'regular');
      }),
      { numRuns: 3000 },
    );
  });
});

describe('latest trading day', () => {
  it('latestTradingDay is the local date when it trades, else the previous trading day', () => {
    expect(latestTradingDay('CN', utc(2025, 3, 10, 0))).toBe('2025-03-10'); // 08:00 CST Monday
    expect(latestTradingDay('CN', utc(2025, 3, 8, 4))).toBe('2025-03-07');
    expect(latestTradingDay('CN', utc(2025, 2, 1, 4))).toBe('2025-01-27');
    expect(latestTradingDay('US', utc(2025, 1, 9, 15))).toBe('2025-01-08');
    expect(latestTradingDay('US', utc(2025, 3, 11, 2))).toBe('2025-03-10'); // 22:00 EDT
  });

  it('latestStartedSessionDay waits for the open', () => {
    expect(latestStartedSessionDay('CN', utc(2025, 3, 10, 0))).toBe('2025-03-07');
    expect(latestStartedSessionDay('CN', utc(2025, 3, 10, 1, 29, 59, 999))).toBe('2025-03-07');
    expect(latestStartedSessionDay('CN', utc(2025, 3, 10, 1, 30))).toBe('2025-03-10');
    expect(latestStartedSessionDay('CN', utc(2025, 3, 10, 12))).toBe('2025-03-10');
    expect(latestStartedSessionDay('CN', utc(2025, 2, 5, 0))).toBe('2025-01-27');
    expect(latestStartedSessionDay('US', utc(2025, 3, 10, 13, 29, 59, 999))).toBe('2025-03-07');
    expect(latestStartedSessionDay('US', utc(2025, 3, 10, 13, 30))).toBe('2025-03-10');
    expect(latestStartedSessionDay('US', utc(2025, 3, 11, 2))).toBe('2025-03-10');
    expect(latestStartedSessionDay('HK', utc(2025, 3, 8, 2))).toBe('2025-03-07');
  });
});

describe('memoisation', () => {
  it('stays correct after its bounded caches are cleared', () => {
    const before = sessions('CN', '2025-03-03');
    let weekdays = 0;
    let date = '1950-01-02';
    for (let i = 0; i < 25_000; i++) {
      if (sessions('CN', date).length === 2) weekdays++;
      minuteBarLabels('US', date, 1);
      date = addDays(date, 1);
    }
    // 25,000 days from 1950-01-02; CN trades only from 1990-12-19 (intended change: weekdays before the
    // tables were sessions until the tables reached back to each market's first day)
    expect(date).toBe('2018-06-14');
    expect(weekdays).toBe(6721);
    expect(tradingDaysBetween('CN', '1950-01-02', '2018-06-13')).toHaveLength(6721);
    expect(sessions('CN', '2025-03-03')).toEqual(before);
    expect(minuteBarLabels('US', '2025-03-10', 1).length).toBe(390);
    expect(nextTradingDay('CN', '2025-01-27')).toBe('2025-02-05');
  });

  it('keeps its memos inside a byte budget, cleared at once when spent (cache.calendarMemoMaxBytes)', () => {
    expect(calendarMemoStats().maxBytes).toBe(DEFAULT_CALENDAR_MEMO_MAX_BYTES);
    const budget = 64 * 1024;
    configureCalendarMemo({ maxBytes: budget });
    try {
      expect(calendarMemoStats()).toEqual({ bytes: 0, maxBytes: budget, entries: 0 });
      let date = '1990-01-01';
      let peak = 0;
      let cleared = 0;
      for (let i = 0; i < 3_000; i++) {
        const bytes = calendarMemoStats().bytes;
        sessions('US', date);
        nextTradingDay('HK', date);
        if (calendarMemoStats().bytes < bytes) cleared++;
        peak = Math.max(peak, calendarMemoStats().bytes);
        date = addDays(date, 1);
      }
      expect(peak).toBeLessThanOrEqual(budget);
      expect(peak).toBeGreaterThan(budget / 2);
      expect(cleared).toBeGreaterThan(0);
      expect(calendarMemoStats().entries).toBeGreaterThan(0);
      // Answers do not depend on what the memos hold.
      expect(sessions('US', '2025-11-28')).toEqual([{ start: utc(2025, 11, 28, 14, 30), end: utc(2025, 11, 28, 18) }]);
      expect(nextTradingDay('CN', '2025-01-27')).toBe('2025-02-05');

      configureCalendarMemo({ maxBytes: 0 });
      expect(sessions('CN', '2025-03-03')).toHaveLength(2);
      expect(localDate('CN', utc(2025, 3, 3, 20))).toBe('2025-03-04');
      expect(calendarMemoStats()).toEqual({ bytes: 0, maxBytes: 0, entries: 0 });
    } finally {
      configureCalendarMemo({ maxBytes: DEFAULT_CALENDAR_MEMO_MAX_BYTES });
    }
  });

  it('hands out minute labels the caller owns (computed, not memoised)', () => {
    const first = minuteBarLabels('CN', '2025-03-03', 1);
    expect(first).not.toBe(minuteBarLabels('CN', '2025-03-03', 1));
    first[0] = 0;
    first.push(1);
    expect(minuteBarLabels('CN', '2025-03-03', 1)).toHaveLength(240);
    expect(minuteBarLabels('CN', '2025-03-03', 1)[0]).toBe(utc(2025, 3, 3, 1, 31));
    expect(minuteBarLabels('CN', '2025-10-01', 1)).toEqual([]);
  });
});
