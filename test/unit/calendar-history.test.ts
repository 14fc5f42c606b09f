// The calendars back to each market's first day (issue 24): every closure the issue lists is not a
// session; every weekday of five sample years agrees with a second, independently transcribed list
// (pandas_market_calendars, where the committed tables come from exchange_calendars); shortened days
// and the historical HK session hours; outside coverage nothing is invented.
import { describe, expect, it } from 'vitest';
import type { Region } from '../../src/domain.ts';
import {
  calendarCoverage, dayStatus, earlyClose, holidayName, isTradingDay, localTimeMs, minuteBarLabels, nextTradingDay,
  prevTradingDay, sessions, shortDay, tradingDaysBetween,
} from '../../src/markets/calendar.ts';
import { CLOSURE_ROWS } from '../../src/markets/holidays.ts';

const SAMPLE_YEARS = [1995, 2003, 2008, 2015, 2020] as const;

// Weekday closures of the sample years, as pandas_market_calendars (rsheftel/pandas_market_calendars @ 966ffb3)
// computes them: SSEExchangeCalendar (holidays/cn.py all_holidays), HKEXExchangeCalendar (calendars/hkex.py
// rules and adhoc list), NYSEExchangeCalendar (holidays/nyse.py). CN years checked by hand against the State
// Council arrangements (e.g. 2008: 7-day Spring Festival from 02-06, the new Qingming/Dragon Boat/Mid-Autumn days;
// 2015: 09-03/04 Victory Day; 2020: Spring Festival extended to 01-31). HK 2020 adds 2020-10-13 (typhoon Nangka,
// a full-day closure recorded by exchange_calendars, missing from pandas_market_calendars).
const PUBLISHED: Record<Region, Record<(typeof SAMPLE_YEARS)[number], string[]>> = {
  CN: {
    1995: ['1995-01-02', '1995-01-30', '1995-01-31', '1995-02-01', '1995-02-02', '1995-02-03', '1995-05-01', '1995-10-02', '1995-10-03'],
    2003: ['2003-01-01', '2003-01-30', '2003-01-31', '2003-02-03', '2003-02-04', '2003-02-05', '2003-02-06', '2003-02-07', '2003-05-01', '2003-05-02', '2003-05-05', '2003-05-06', '2003-05-07', '2003-05-08', '2003-05-09', '2003-10-01', '2003-10-02', '2003-10-03', '2003-10-06', '2003-10-07'],
    2008: ['2008-01-01', '2008-02-06', '2008-02-07', '2008-02-08', '2008-02-11', '2008-02-12', '2008-04-04', '2008-05-01', '2008-05-02', '2008-06-09', '2008-09-15', '2008-09-29', '2008-09-30', '2008-10-01', '2008-10-02', '2008-10-03'],
    2015: ['2015-01-01', '2015-01-02', '2015-02-18', '2015-02-19', '2015-02-20', '2015-02-23', '2015-02-24', '2015-04-06', '2015-05-01', '2015-06-22', '2015-09-03', '2015-09-04', '2015-10-01', '2015-10-02', '2015-10-05', '2015-10-06', '2015-10-07'],
    2020: ['2020-01-01', '2020-01-24', '2020-01-27', '2020-01-28', '2020-01-29', '2020-01-30', '2020-01-31', '2020-04-06', '2020-05-01', '2020-05-04', '2020-05-05', '2020-06-25', '2020-06-26', '2020-10-01', '2020-10-02', '2020-10-05', '2020-10-06', '2020-10-07', '2020-10-08'],
  },
  HK: {
    1995: ['1995-01-02', '1995-01-31', '1995-02-01', '1995-02-02', '1995-04-05', '1995-04-14', '1995-04-17', '1995-06-02', '1995-06-19', '1995-08-28', '1995-11-01', '1995-12-25', '1995-12-26'],
    2003: ['2003-01-01', '2003-01-31', '2003-02-03', '2003-04-18', '2003-04-21', '2003-05-01', '2003-05-08', '2003-06-04', '2003-07-01', '2003-09-12', '2003-10-01', '2003-12-25', '2003-12-26'],
    2008: ['2008-01-01', '2008-02-07', '2008-02-08', '2008-03-21', '2008-03-24', '2008-04-04', '2008-05-01', '2008-05-12', '2008-06-09', '2008-07-01', '2008-08-06', '2008-08-22', '2008-09-15', '2008-10-01', '2008-10-07', '2008-12-25', '2008-12-26'],
    2015: ['2015-01-01', '2015-02-19', '2015-02-20', '2015-04-03', '2015-04-06', '2015-04-07', '2015-05-01', '2015-05-25', '2015-07-01', '2015-09-03', '2015-09-28', '2015-10-01', '2015-10-21', '2015-12-25'],
    2020: ['2020-01-01', '2020-01-27', '2020-01-28', '2020-04-10', '2020-04-13', '2020-04-30', '2020-05-01', '2020-06-25', '2020-07-01', '2020-10-01', '2020-10-02', '2020-10-13', '2020-10-26', '2020-12-25'],
  },
  US: {
    1995: ['1995-01-02', '1995-02-20', '1995-04-14', '1995-05-29', '1995-07-04', '1995-09-04', '1995-11-23', '1995-12-25'],
    2003: ['2003-01-01', '2003-01-20', '2003-02-17', '2003-04-18', '2003-05-26', '2003-07-04', '2003-09-01', '2003-11-27', '2003-12-25'],
    2008: ['2008-01-01', '2008-01-21', '2008-02-18', '2008-03-21', '2008-05-26', '2008-07-04', '2008-09-01', '2008-11-27', '2008-12-25'],
    2015: ['2015-01-01', '2015-01-19', '2015-02-16', '2015-04-03', '2015-05-25', '2015-07-03', '2015-09-07', '2015-11-26', '2015-12-25'],
    2020: ['2020-01-01', '2020-01-20', '2020-02-17', '2020-04-10', '2020-05-25', '2020-07-03', '2020-09-07', '2020-11-26', '2020-12-25'],
  },
};

function weekdaysOf(year: number): string[] {
  const out: string[] = [];
  for (let t = Date.UTC(year, 0, 1); t < Date.UTC(year + 1, 0, 1); t += 86_400_000) {
    const wd = new Date(t).getUTCDay();
    if (wd !== 0 && wd !== 6) out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

const utc = (y: number, mo: number, d: number, h = 0, mi = 0) => Date.UTC(y, mo - 1, d, h, mi);

describe('sample years agree with an independently transcribed published list', () => {
  for (const region of ['CN', 'HK', 'US'] as const) {
    it.each(SAMPLE_YEARS)(`${region} %i: every weekday`, (year) => {
      const closed = new Set(PUBLISHED[region][year]);
      for (const date of weekdaysOf(year)) {
        expect(dayStatus(region, date), `${region} ${date}`).toBe(closed.has(date) ? 'closed' : 'trading');
        expect(isTradingDay(region, date), `${region} ${date}`).toBe(!closed.has(date));
        expect(sessions(region, date).length > 0, `${region} ${date}`).toBe(!closed.has(date));
        if (closed.has(date)) expect(holidayName(region, date), `${region} ${date}`).toBeTruthy();
      }
    });
  }
});

describe('unscheduled closures', () => {
  it('US: September 11, Hurricane Sandy, national days of mourning', () => {
    const closed = {
      '2001-09-11': 'September 11 attacks', '2001-09-12': 'September 11 attacks', '2001-09-13': 'September 11 attacks',
      '2001-09-14': 'September 11 attacks', '2012-10-29': 'Hurricane Sandy', '2012-10-30': 'Hurricane Sandy',
      '1994-04-27': 'National Day of Mourning for President Nixon', '2004-06-11': 'National Day of Mourning for President Reagan',
      '2007-01-02': 'National Day of Mourning for President Ford', '2018-12-05': 'National Day of Mourning for President George H. W. Bush',
      '2025-01-09': 'National Day of Mourning for President Carter',
    };
    for (const [date, name] of Object.entries(closed)) {
      expect(isTradingDay('US', date), date).toBe(false);
      expect(sessions('US', date), date).toEqual([]);
      expect(holidayName('US', date), date).toBe(name);
    }
    expect(nextTradingDay('US', '2001-09-10')).toBe('2001-09-17');
    expect(nextTradingDay('US', '2012-10-26')).toBe('2012-10-31');
  });

  it('CN: the 2020 Spring Festival closure extended through 2020-02-02, trading again on 02-03', () => {
    for (const date of ['2020-01-24', '2020-01-27', '2020-01-28', '2020-01-29', '2020-01-30', '2020-01-31']) {
      expect(isTradingDay('CN', date), date).toBe(false);
    }
    expect(holidayName('CN', '2020-01-31')).toMatch(/extended/);
    expect(prevTradingDay('CN', '2020-02-03')).toBe('2020-01-23');
    expect(nextTradingDay('CN', '2020-01-23')).toBe('2020-02-03');
  });

  it('HK: full-day typhoon and black-rainstorm closures as recorded, none after 2024-09-23', () => {
    const weather = [
      '1992-07-22', '1993-09-17', '1999-09-16', '2001-07-06', '2001-07-25', '2008-08-06', '2008-08-22', '2011-09-29',
      '2013-08-14', '2016-08-02', '2016-10-21', '2017-08-23', '2020-10-13', '2021-10-13', '2023-07-17', '2023-09-01',
      '2023-09-08', '2024-09-06',
    ];
    for (const date of weather) {
      expect(isTradingDay('HK', date), date).toBe(false);
      expect(holidayName('HK', date), date).toMatch(/Typhoon|rainstorm/);
    }
    const recorded = CLOSURE_ROWS.HK.filter(([, name]) => /Typhoon|rainstorm/.test(name)).map(([date]) => date);
    expect(recorded).toEqual(weather);
    expect(recorded.every((date) => date < '2024-09-23')).toBe(true);
  });
});

describe('shortened days', () => {
  it('US 13:00 closes (14:00 before 1993), and unscheduled late opens and early closes', () => {
    const at = (date: string, hhmm: string) => localTimeMs('US', date, hhmm);
    for (const date of ['2019-07-03', '2019-11-29', '2019-12-24', '2025-07-03', '2025-11-28', '2025-12-24', '1997-12-26', '2003-12-26']) {
      expect(sessions('US', date), date).toEqual([{ start: at(date, '09:30'), end: at(date, '13:00') }]);
    }
    expect(earlyClose('US', '1992-11-27')).toEqual({ date: '1992-11-27', name: 'Day after Thanksgiving', close: '14:00' });
    expect(earlyClose('US', '1990-11-23')).toBeUndefined(); // both sources: a full day
    expect(sessions('US', '1990-12-24')).toEqual([{ start: at('1990-12-24', '09:30'), end: at('1990-12-24', '14:00') }]);
    // No early close when NYSE announced none: Christmas Eve 2023 was a Sunday, 2026-07-02 a regular day
    expect(sessions('US', '2026-07-02')).toEqual([{ start: at('2026-07-02', '09:30'), end: at('2026-07-02', '16:00') }]);
    // 1996-01-08 blizzard: opened 11:00, closed 14:00; 2002-09-11: opened at noon
    expect(sessions('US', '1996-01-08')).toEqual([{ start: at('1996-01-08', '11:00'), end: at('1996-01-08', '14:00') }]);
    expect(shortDay('US', '2002-09-11')).toMatchObject({ open: '12:00' });
    expect(earlyClose('US', '2002-09-11')).toBeUndefined();
    expect(minuteBarLabels('US', '2002-09-11', 1)).toHaveLength(240);
    expect(minuteBarLabels('US', '2019-11-29', 1)).toHaveLength(210);
  });

  it('HK half days keep the morning session of their era', () => {
    expect(sessions('HK', '2008-12-24')).toEqual([{ start: utc(2008, 12, 24, 2), end: utc(2008, 12, 24, 4, 30) }]); // 10:00-12:30 HKT
    expect(earlyClose('HK', '2008-12-31')?.close).toBe('12:30');
    expect(sessions('HK', '2015-02-18')).toEqual([{ start: utc(2015, 2, 18, 1, 30), end: utc(2015, 2, 18, 4) }]); // Lunar New Year's Eve
    expect(earlyClose('HK', '2020-12-24')).toEqual({ date: '2020-12-24', name: 'Christmas Eve', close: '12:00' });
    expect(minuteBarLabels('HK', '2020-12-31', 1)).toHaveLength(150);
  });

  it('CN has no shortened days', () => {
    for (const year of SAMPLE_YEARS) {
      for (const date of weekdaysOf(year)) expect(shortDay('CN', date), date).toBeUndefined();
    }
  });
});

describe('historical session times', () => {
  it('HK: 10:00-12:30/14:30-16:00 until 2011-03-04, 13:30 afternoon from 2011-03-07, 13:00 from 2012-03-05', () => {
    const hk = (y: number, mo: number, d: number, h: number, mi = 0) => utc(y, mo, d, h - 8, mi);
    expect(sessions('HK', '1990-03-01')).toEqual([
      { start: hk(1990, 3, 1, 10), end: hk(1990, 3, 1, 12, 30) }, { start: hk(1990, 3, 1, 14, 30), end: hk(1990, 3, 1, 16) },
    ]);
    expect(sessions('HK', '2011-03-04')).toEqual([
      { start: hk(2011, 3, 4, 10), end: hk(2011, 3, 4, 12, 30) }, { start: hk(2011, 3, 4, 14, 30), end: hk(2011, 3, 4, 16) },
    ]);
    expect(sessions('HK', '2011-03-07')).toEqual([
      { start: hk(2011, 3, 7, 9, 30), end: hk(2011, 3, 7, 12) }, { start: hk(2011, 3, 7, 13, 30), end: hk(2011, 3, 7, 16) },
    ]);
    expect(sessions('HK', '2012-03-02')[1]).toEqual({ start: hk(2012, 3, 2, 13, 30), end: hk(2012, 3, 2, 16) });
    expect(sessions('HK', '2012-03-05')[1]).toEqual({ start: hk(2012, 3, 5, 13), end: hk(2012, 3, 5, 16) });
    expect(minuteBarLabels('HK', '2011-03-04', 1)).toHaveLength(240);
    expect(minuteBarLabels('HK', '2011-03-07', 1)).toHaveLength(300);
    expect(minuteBarLabels('HK', '2012-03-05', 1)).toHaveLength(330);
    expect(minuteBarLabels('HK', '2011-03-04', 60).at(2)).toBe(hk(2011, 3, 4, 12, 30)); // the morning's short last bar
  });

  it('CN: 09:30-11:30 and 13:00-15:00 from the first day; US: 09:30-16:00', () => {
    expect(sessions('CN', '1990-12-19')).toEqual([
      { start: utc(1990, 12, 19, 1, 30), end: utc(1990, 12, 19, 3, 30) }, { start: utc(1990, 12, 19, 5), end: utc(1990, 12, 19, 7) },
    ]);
    expect(sessions('US', '1986-06-02')).toEqual([{ start: utc(1986, 6, 2, 13, 30), end: utc(1986, 6, 2, 20) }]);
  });
});

describe('outside coverage', () => {
  it('reports each market coverage', () => {
    expect(calendarCoverage('CN')).toEqual({ first: '1990-12-19', last: '2026-12-31' });
    expect(calendarCoverage('HK')).toEqual({ first: '1986-01-01', last: '2027-12-31' });
    expect(calendarCoverage('US')).toEqual({ first: '1986-01-01', last: '2028-12-31' });
  });

  it('before the first day: unknown, no session, no bar label', () => {
    for (const [region, date] of [['CN', '1990-12-18'], ['CN', '1990-03-01'], ['HK', '1985-12-31'], ['US', '1985-07-01']] as const) {
      expect(dayStatus(region, date), `${region} ${date}`).toBe('unknown');
      expect(isTradingDay(region, date), `${region} ${date}`).toBe(false);
      expect(sessions(region, date)).toEqual([]);
      expect(minuteBarLabels(region, date, 1)).toEqual([]);
      expect(holidayName(region, date)).toBeUndefined();
    }
    expect(tradingDaysBetween('CN', '1990-01-01', '1990-12-31')).toEqual([
      '1990-12-19', '1990-12-20', '1990-12-21', '1990-12-24', '1990-12-25', '1990-12-26', '1990-12-27', '1990-12-28', '1990-12-31',
    ]);
    expect(nextTradingDay('CN', '1980-01-01')).toBe('1990-12-19');
    // stepping back past the first day stays bounded: the previous calendar day, itself unknown
    expect(prevTradingDay('CN', '1990-12-19')).toBe('1990-12-18');
    expect(dayStatus('CN', '1990-12-19')).toBe('trading');
  });

  it('after the last published year: unknown in the calendar, never a closure or a named holiday', () => {
    expect(dayStatus('CN', '2027-01-01')).toBe('unknown');
    expect(dayStatus('CN', '2026-12-31')).toBe('trading');
    expect(dayStatus('HK', '2028-01-03')).toBe('unknown');
    expect(dayStatus('US', '2029-01-02')).toBe('unknown');
    expect(holidayName('CN', '2027-02-08')).toBeUndefined();
  });
});
