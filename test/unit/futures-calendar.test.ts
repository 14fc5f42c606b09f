// China futures calendars: contract symbols per exchange, product sessions with the night session
// belonging to the next trading day (a Friday night to Monday, none on a holiday eve), session
// states through the night and the gap before the day session, and minute-bar labels.
import { describe, expect, it } from 'vitest';
import {
  calendarCoverage, dayStatus, latestStartedSessionDay, latestTradingDay, minuteBarLabelCount, minuteBarLabelFor, minuteBarLabels,
  sessions, sessionState, tradingDayOf, type CalendarKey,
} from '../../src/markets/calendar.ts';
import { FUTURES, validateFuturesCalendar } from '../../src/markets/futures.ts';
import { calendarKeyOf, marketOf, parseSymbol } from '../../src/markets/symbols.ts';
import { readFileSync } from 'node:fs';

/** Epoch ms of a Shanghai wall time (UTC+8, no DST). */
const sh = (date: string, hhmm: string) => Date.parse(`${date}T${hhmm}:00+08:00`);
const hhmm = (ms: number) => new Date(ms + 8 * 3_600_000).toISOString().slice(0, 16).replace('T', ' ');
const window = (key: CalendarKey, date: string) => sessions(key, date).map((w) => `${hhmm(w.start)}-${hhmm(w.end).slice(11)}`);

describe('futures symbols', () => {
  it("normalise each exchange's case and year digits", () => {
    expect(parseSymbol('AU2604.shf')).toEqual({ symbol: 'au2604.SHF', code: 'au2604', exchange: 'SHF', region: 'CN' });
    expect(parseSymbol('i2605.DCE')?.symbol).toBe('i2605.DCE');
    expect(parseSymbol('sr605.zce')?.symbol).toBe('SR605.ZCE');
    expect(parseSymbol('if2512.CFX')?.symbol).toBe('IF2512.CFX');
    expect(parseSymbol('SC2605.INE')?.symbol).toBe('sc2605.INE');
    expect(parseSymbol('si2605.gfe')?.symbol).toBe('si2605.GFE');
  });

  it('refuse a code of the wrong shape, month or exchange, or of a product not listed', () => {
    for (const bad of ['SR2605.ZCE', 'au604.SHF', 'au2613.SHF', 'au2600.SHF', 'i2605.SHF', 'xx2605.DCE', 'au2604.SHFE', '2604.SHF']) {
      expect(parseSymbol(bad), bad).toBeUndefined();
    }
  });

  it('need the CN_FUTURES market and keep their product calendar; equities keep their region', () => {
    const au = parseSymbol('au2604.SHF')!;
    expect(marketOf(au)).toBe('CN_FUTURES');
    expect(calendarKeyOf(au)).toBe('CN_FUTURES:au');
    expect(calendarKeyOf(parseSymbol('SR605.ZCE')!)).toBe('CN_FUTURES:sr');
    const stock = parseSymbol('600000.SH')!;
    expect(marketOf(stock)).toBe('CN');
    expect(calendarKeyOf(stock)).toBe('CN');
  });
});

describe('futures sessions', () => {
  it('a Friday night belongs to Monday: gold 21:00-02:30, then the day sessions', () => {
    expect(window('CN_FUTURES:au', '2025-06-16')).toEqual([
      '2025-06-13 21:00-02:30', '2025-06-16 09:00-10:15', '2025-06-16 10:30-11:30', '2025-06-16 13:30-15:00',
    ]);
    expect(window('CN_FUTURES:rb', '2025-06-17')).toEqual([
      '2025-06-16 21:00-23:00', '2025-06-17 09:00-10:15', '2025-06-17 10:30-11:30', '2025-06-17 13:30-15:00',
    ]);
    expect(window('CN_FUTURES:cu', '2025-06-17')[0]).toBe('2025-06-16 21:00-01:00');
  });

  it('no night session on the eve of a holiday: the day after National Day opens at 09:00', () => {
    // 2025-09-30 is the last trading day before the closure of 10-01..10-08.
    expect(window('CN_FUTURES:au', '2025-09-30')[0]).toBe('2025-09-29 21:00-02:30');
    expect(window('CN_FUTURES:au', '2025-10-09')).toEqual(['2025-10-09 09:00-10:15', '2025-10-09 10:30-11:30', '2025-10-09 13:30-15:00']);
    expect(dayStatus('CN_FUTURES:au', '2025-10-01')).toBe('closed');
    expect(sessionState('CN_FUTURES:au', sh('2025-09-30', '21:30'))).toBe('closed');
    expect(tradingDayOf('CN_FUTURES:au', sh('2025-09-30', '21:30'))).toBe('2025-10-09');
  });

  it('products without a night session, CFFEX index and treasury futures', () => {
    expect(window('CN_FUTURES:jd', '2025-06-16')).toEqual(['2025-06-16 09:00-10:15', '2025-06-16 10:30-11:30', '2025-06-16 13:30-15:00']);
    expect(window('CN_FUTURES:if', '2025-06-16')).toEqual(['2025-06-16 09:30-11:30', '2025-06-16 13:00-15:00']);
    expect(window('CN_FUTURES:t', '2025-06-16')).toEqual(['2025-06-16 09:30-11:30', '2025-06-16 13:00-15:15']);
  });

  it('every product together: the longest night and the union of the day sessions', () => {
    expect(window('CN_FUTURES', '2025-06-16')).toEqual(['2025-06-13 21:00-02:30', '2025-06-16 09:00-11:30', '2025-06-16 13:00-15:15']);
  });

  it('the trading day of an instant: evenings and nights belong to the next trading day', () => {
    const key = 'CN_FUTURES:au';
    expect(tradingDayOf(key, sh('2025-06-13', '14:00'))).toBe('2025-06-13');
    expect(tradingDayOf(key, sh('2025-06-13', '21:30'))).toBe('2025-06-16');
    expect(tradingDayOf(key, sh('2025-06-14', '01:30'))).toBe('2025-06-16');
    expect(tradingDayOf(key, sh('2025-06-17', '00:30'))).toBe('2025-06-17');
    expect(latestTradingDay(key, sh('2025-06-13', '20:00'))).toBe('2025-06-13');
    expect(latestTradingDay(key, sh('2025-06-13', '21:00'))).toBe('2025-06-16');
    expect(latestStartedSessionDay(key, sh('2025-06-14', '10:00'))).toBe('2025-06-16');
  });

  it('session states through a night, the gap before the day session and a break', () => {
    const key = 'CN_FUTURES:au';
    expect(sessionState(key, sh('2025-06-13', '15:30'))).toBe('closed');
    expect(sessionState(key, sh('2025-06-13', '20:57'))).toBe('pre_market');
    expect(sessionState(key, sh('2025-06-13', '23:59'))).toBe('regular');
    expect(sessionState(key, sh('2025-06-14', '02:29'))).toBe('regular');
    expect(sessionState(key, sh('2025-06-14', '02:31'))).toBe('closed');
    expect(sessionState(key, sh('2025-06-16', '05:00'))).toBe('closed');
    expect(sessionState(key, sh('2025-06-16', '08:56'))).toBe('pre_market');
    expect(sessionState(key, sh('2025-06-16', '10:20'))).toBe('lunch_break');
    expect(sessionState('CN_FUTURES:rb', sh('2025-06-13', '23:30'))).toBe('closed');
  });

  it('minute-bar labels: the night first, each bar labelled by its end, all under the trading day', () => {
    const labels = minuteBarLabels('CN_FUTURES:au', '2025-06-16', 1);
    expect(labels).toHaveLength(330 + 225);
    expect(minuteBarLabelCount('CN_FUTURES:au', '2025-06-16', 1)).toBe(555);
    expect(hhmm(labels[0])).toBe('2025-06-13 21:01');
    expect(hhmm(labels[329])).toBe('2025-06-14 02:30');
    expect(hhmm(labels[330])).toBe('2025-06-16 09:01');
    expect(hhmm(labels.at(-1)!)).toBe('2025-06-16 15:00');
    expect(minuteBarLabelCount('CN_FUTURES:rb', '2025-06-16', 1)).toBe(120 + 225);
    expect(minuteBarLabelCount('CN_FUTURES:if', '2025-06-16', 1)).toBe(240);
    expect(minuteBarLabelCount('CN_FUTURES:t', '2025-06-16', 1)).toBe(255);
    expect(minuteBarLabelCount('CN_FUTURES:au', '2025-10-09', 1)).toBe(225);
    expect(hhmm(minuteBarLabelFor('CN_FUTURES:au', sh('2025-06-14', '00:59') + 30_000, 1)!)).toBe('2025-06-14 01:00');
    expect(hhmm(minuteBarLabelFor('CN_FUTURES:au', sh('2025-06-13', '21:00'), 60)!)).toBe('2025-06-13 22:00');
    expect(minuteBarLabelFor('CN_FUTURES:rb', sh('2025-06-13', '23:30'), 1)).toBeUndefined();
  });

  it('coverage: from 2020-07-20, or from a later listing', () => {
    expect(calendarCoverage('CN_FUTURES')).toEqual({ first: '2020-07-20', last: '2026-12-31' });
    expect(calendarCoverage('CN_FUTURES:lc')).toEqual({ first: '2023-07-21', last: '2026-12-31' });
    expect(dayStatus('CN_FUTURES:lc', '2023-07-20')).toBe('unknown');
    expect(sessions('CN_FUTURES:lc', '2023-07-20')).toEqual([]);
  });
});

describe('the futures calendar file', () => {
  const doc = () => JSON.parse(readFileSync(new URL('../../src/markets/holidays/cn-futures.json', import.meta.url), 'utf8')) as Record<string, unknown>;

  it('ships six exchanges and its products with sources', () => {
    expect(FUTURES.exchanges.map((e) => e.exchange)).toEqual(['SHF', 'DCE', 'ZCE', 'CFX', 'INE', 'GFE']);
    expect(FUTURES.products.get('au')).toMatchObject({ exchange: 'SHF', nightClose: '02:30', tickSize: 0.02, multiplier: 1000 });
    expect(Object.keys(FUTURES.sources)).toEqual(['trading_days', 'sessions', 'night_rule', 'products']);
    expect(validateFuturesCalendar(doc()).problems).toEqual([]);
  });

  it('reports every problem of a bad file', () => {
    const d = doc();
    const products = d.products as Record<string, unknown>[];
    products[0] = { ...products[0], product: 'AU', night_close: '12:00' };
    products[1] = { ...products[1], day: 'weekend', months: [3, 1] };
    (d.day_sessions as Record<string, unknown>).index = [['09:30', '11:30'], ['11:00', '15:00']];
    expect(validateFuturesCalendar(d).problems).toEqual([
      'day_sessions.index: ascending, non-overlapping [open, close] HH:MM pairs are required',
      "products[0].product: 'AU' is not in SHF's case (lower)",
      'products[0].night_close: null or a time after the night open or before 03:00 is required',
      "products[1].day: 'weekend' is not a day_sessions group",
      "products[1].months: ascending months 1-12 or 'cffex_index' are required",
      ...products.slice(2).filter((p) => p.day === 'index').map((_, i) => `products[${products.indexOf(products.filter((p) => p.day === 'index')[i])}].day: 'index' is not a day_sessions group`),
    ]);
  });
});
