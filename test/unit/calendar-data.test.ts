// The calendar files (src/markets/holidays/*.json): loaded and validated at start, every problem of
// a bad file reported with where it is.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLOSURE_ROWS, HOLIDAY_COVERAGE, loadMarketCalendar, MARKET_CALENDARS, SESSION_REGIMES, validateMarketCalendar } from '../../src/markets/holidays.ts';
import { dayStatus, holidayName, sessions, TIME_ZONES } from '../../src/markets/calendar.ts';

const cnFile = new URL('../../src/markets/holidays/cn.json', import.meta.url);
const cnDoc = (): Record<string, unknown> => JSON.parse(readFileSync(cnFile, 'utf8')) as Record<string, unknown>;

describe('calendar files', () => {
  it('ship every market with its sources, coverage, sessions and closures', () => {
    for (const market of ['CN', 'HK', 'US'] as const) {
      const data = MARKET_CALENDARS[market];
      expect(data.sources.closures).toMatch(/exchange_calendars @ [0-9a-f]{40}/);
      expect(data.sources.sessions.length).toBeGreaterThan(20);
      expect(HOLIDAY_COVERAGE[market]).toBe(data.coverage);
    }
    expect(HOLIDAY_COVERAGE).toEqual({
      CN: { first: '1990-12-19', last: '2026-12-31' },
      HK: { first: '1986-01-01', last: '2027-12-31' },
      US: { first: '1986-01-01', last: '2028-12-31' },
    });
    expect(CLOSURE_ROWS.CN.length).toBe(605);
    expect(CLOSURE_ROWS.HK.length).toBe(591);
    expect(CLOSURE_ROWS.US.length).toBe(387);
    expect(SESSION_REGIMES.HK.map((r) => r.from)).toEqual(['1986-01-01', '2011-03-07', '2012-03-05']);
    expect(TIME_ZONES).toEqual({ CN: 'Asia/Shanghai', HK: 'Asia/Hong_Kong', US: 'America/New_York' });
  });

  it('drive the calendar: a closure of the file is a holiday, its sessions the day\'s hours', () => {
    expect(holidayName('CN', '2026-10-01')).toBe('National Day');
    expect(dayStatus('CN', '2026-10-01')).toBe('closed');
    expect(dayStatus('CN', '2027-01-04')).toBe('unknown');
    expect(sessions('HK', '2011-03-04').length).toBe(2);
  });

  it('a valid document has no problems', () => {
    expect(validateMarketCalendar(cnDoc(), 'CN').problems).toEqual([]);
  });

  it('reports every problem of a bad document at once, each with where it is', () => {
    const doc = cnDoc();
    doc.timezone = 'Asia/Nowhere';
    doc.sources = { closures: 'somewhere', short_days: '', sessions: 'x' };
    doc.sessions = [{ from: '1990-12-19', pre_open: '09:15', sessions: [['09:30', '11:30'], ['11:00', '15:00']], after_minutes: 30 }];
    const closures = doc.closures as unknown[][];
    closures[1] = ['1991-02-16', 'Spring Festival']; // a Saturday
    closures[2] = ['1991-02-14', 'Spring Festival']; // out of order after the row before
    closures.push(['2027-01-01', "New Year's Day"]); // after coverage
    doc.short_days = [['2020-02-31', 'x', null, '11:30'], ['2021-03-01', 'y', null, null]];
    const { problems } = validateMarketCalendar(doc, 'CN');
    expect(problems).toEqual([
      "timezone: 'Asia/Nowhere' is not an IANA time zone",
      'sources.short_days: say where the short days were transcribed from',
      "sessions[0].sessions[1]: opens at 11:00, before 11:30 (the pre-open or the previous session's close)",
      'closures[1]: 1991-02-16 is a weekend day (weekends are always closed and not listed)',
      'closures[2]: 1991-02-14 does not follow 1991-02-16 (rows ascend without repeats)',
      'closures[605]: 2027-01-01 is outside coverage 1990-12-19..2026-12-31',
      "short_days[0]: '2020-02-31' is not a date (YYYY-MM-DD)",
      'short_days[1]: a shortened day needs an open or a close',
    ]);
  });

  it('loading a bad file throws one error naming the file and listing the problems', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mdqs-calendar-'));
    const path = join(dir, 'hk.json');
    const doc = cnDoc();
    writeFileSync(path, JSON.stringify(doc));
    expect(() => loadMarketCalendar(pathToFileURL(path), 'HK')).toThrow(/hk\.json is invalid:\n {2}market: 'CN' is not HK/);
    writeFileSync(path, '{ not json');
    expect(() => loadMarketCalendar(pathToFileURL(path), 'HK')).toThrow(/hk\.json: .*JSON/);
    writeFileSync(path, JSON.stringify({ ...doc, market: 'HK', timezone: 'Asia/Hong_Kong' }));
    expect(loadMarketCalendar(pathToFileURL(path), 'HK').closures.length).toBe(605);
  });
});
