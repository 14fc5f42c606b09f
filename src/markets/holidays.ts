// Exchange calendars as data (docs/contract.md#candle-time-semantics): for each market, the years it covers, every weekday it
// was closed (holidays and unscheduled closures), its shortened days, and its regular session times
// with the dates they changed. They live in ./holidays/{cn,hk,us}.json, each with the sources it was
// transcribed from; weekends are always closed and are not listed. This module reads and validates
// them once, when it is first imported (at start): a file that is unreadable or inconsistent stops
// the process with every problem listed. Outside a market's coverage nothing is known
// (src/markets/calendar.ts says how that is reported).

import { readFileSync } from 'node:fs';
import type { Region } from '../domain.ts';
import { isClock, isDate, problemsOfDateRows, type Problems } from './holidays/validate.ts';

export type { ClosureRow, ShortDayRow } from './holidays/types.ts';
import type { ClosureRow, ShortDayRow } from './holidays/types.ts';

export interface CalendarEntry {
  /** Exchange-local date, YYYY-MM-DD. */
  date: string;
  name: string;
}

/** A day whose regular sessions were shortened: a late open, an early close, or both. */
export interface ShortDay extends CalendarEntry {
  /** Exchange-local HH:MM at which trading started that day (a late open). */
  open?: string;
  /** Exchange-local HH:MM at which the last regular session ended that day (an early close). */
  close?: string;
}

/** Regular hours in force from `from` (exchange-local date) until the next regime's `from`. */
export interface SessionRegime {
  from: string;
  /** Start of the pre-market state (call auction / pre-opening session), HH:MM. */
  preOpen: string;
  /** Continuous-trading sessions, [open, close] HH:MM, ascending. */
  sessions: readonly (readonly [open: string, close: string])[];
  /** Length of the after-hours state that follows the day's last regular session, minutes. */
  afterMinutes: number;
}

/** One market's calendar file, validated. */
export interface MarketCalendarData {
  market: Region;
  timezone: string;
  coverage: { first: string; last: string };
  sources: { closures: string; short_days: string; sessions: string };
  regimes: readonly SessionRegime[];
  closures: readonly ClosureRow[];
  shortDays: readonly ShortDayRow[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Problems of the session regimes at `at`; each regime's sessions ascend and do not overlap. */
function problemsOfRegimes(value: unknown, first: string | undefined, at: string, problems: Problems): SessionRegime[] {
  if (!Array.isArray(value) || value.length === 0) {
    problems.push(`${at}: a non-empty array of session regimes is required`);
    return [];
  }
  const out: SessionRegime[] = [];
  let previous = '';
  value.forEach((raw, i) => {
    const here = `${at}[${i}]`;
    if (!isRecord(raw)) {
      problems.push(`${here}: an object {from, pre_open, sessions, after_minutes} is required`);
      return;
    }
    const { from, pre_open: preOpen, sessions, after_minutes: afterMinutes } = raw;
    if (!isDate(from)) problems.push(`${here}.from: '${String(from)}' is not a date (YYYY-MM-DD)`);
    else if (from <= previous) problems.push(`${here}.from: ${from} does not follow the previous regime's ${previous}`);
    else if (i === 0 && first !== undefined && from !== first) problems.push(`${here}.from: the first regime must start on coverage.first (${first})`);
    if (!isClock(preOpen)) problems.push(`${here}.pre_open: '${String(preOpen)}' is not a time (HH:MM)`);
    if (!Number.isInteger(afterMinutes) || (afterMinutes as number) < 0 || (afterMinutes as number) > 720) {
      problems.push(`${here}.after_minutes: an integer from 0 to 720 is required`);
    }
    const windows: [string, string][] = [];
    if (!Array.isArray(sessions) || sessions.length === 0) {
      problems.push(`${here}.sessions: a non-empty array of [open, close] is required`);
    } else {
      let end = typeof preOpen === 'string' && isClock(preOpen) ? preOpen : '00:00';
      sessions.forEach((pair, j) => {
        if (!Array.isArray(pair) || pair.length !== 2 || !isClock(pair[0]) || !isClock(pair[1])) {
          problems.push(`${here}.sessions[${j}]: ['HH:MM', 'HH:MM'] is required`);
          return;
        }
        const [open, close] = pair as [string, string];
        if (open >= close) problems.push(`${here}.sessions[${j}]: opens at ${open}, not before its close ${close}`);
        if (open < end) problems.push(`${here}.sessions[${j}]: opens at ${open}, before ${end} (the pre-open or the previous session's close)`);
        end = close;
        windows.push([open, close]);
      });
    }
    if (typeof from === 'string') previous = from;
    out.push({ from: String(from), preOpen: String(preOpen), sessions: windows, afterMinutes: Number(afterMinutes) });
  });
  return out;
}

/**
 * Validates one market's calendar document (the parsed JSON of ./holidays/<market>.json): every
 * problem is reported, each with where it is. `data` is only meaningful when `problems` is empty.
 */
export function validateMarketCalendar(doc: unknown, market: Region): { data: MarketCalendarData; problems: string[] } {
  const problems: Problems = [];
  const d = isRecord(doc) ? doc : {};
  if (!isRecord(doc)) problems.push('the document must be a JSON object');
  if (d.market !== market) problems.push(`market: '${String(d.market)}' is not ${market}`);
  let timezone = '';
  if (typeof d.timezone !== 'string') problems.push('timezone: an IANA time zone name is required');
  else {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: d.timezone });
      timezone = d.timezone;
    } catch {
      problems.push(`timezone: '${d.timezone}' is not an IANA time zone`);
    }
  }
  const coverage = isRecord(d.coverage) ? d.coverage : {};
  const first = isDate(coverage.first) ? coverage.first : undefined;
  const last = isDate(coverage.last) ? coverage.last : undefined;
  if (first === undefined) problems.push(`coverage.first: '${String(coverage.first)}' is not a date (YYYY-MM-DD)`);
  if (last === undefined) problems.push(`coverage.last: '${String(coverage.last)}' is not a date (YYYY-MM-DD)`);
  if (first !== undefined && last !== undefined && first > last) problems.push(`coverage: first ${first} is after last ${last}`);
  const sources = isRecord(d.sources) ? d.sources : {};
  for (const part of ['closures', 'short_days', 'sessions'] as const) {
    if (typeof sources[part] !== 'string' || (sources[part] as string).trim().length === 0) {
      problems.push(`sources.${part}: say where the ${part.replace('_', ' ')} were transcribed from`);
    }
  }
  const regimes = problemsOfRegimes(d.sessions, first, 'sessions', problems);
  const closures = problemsOfDateRows(d.closures, 'closures', { first, last, width: 2 }, problems) as unknown as ClosureRow[];
  const shortDays = problemsOfDateRows(d.short_days, 'short_days', { first, last, width: 4 }, problems) as unknown as ShortDayRow[];
  const closed = new Set(closures.map(([date]) => date));
  for (const [date] of shortDays) if (closed.has(date)) problems.push(`short_days: ${date} is also a closure`);
  return {
    data: {
      market,
      timezone,
      coverage: { first: first ?? '', last: last ?? '' },
      sources: { closures: String(sources.closures), short_days: String(sources.short_days), sessions: String(sources.sessions) },
      regimes,
      closures,
      shortDays,
    },
    problems,
  };
}

/** Reads and validates a calendar file; throws one error listing every problem. */
export function loadMarketCalendar(url: URL, market: Region): MarketCalendarData {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(url, 'utf8'));
  } catch (err) {
    throw new Error(`calendar ${url.pathname}: ${(err as Error).message}`, { cause: err });
  }
  const { data, problems } = validateMarketCalendar(doc, market);
  if (problems.length > 0) throw new Error(`calendar ${url.pathname} is invalid:\n  ${problems.join('\n  ')}`);
  return data;
}

const FILES: Record<Region, URL> = {
  CN: new URL('./holidays/cn.json', import.meta.url),
  HK: new URL('./holidays/hk.json', import.meta.url),
  US: new URL('./holidays/us.json', import.meta.url),
};

export const MARKET_CALENDARS: Record<Region, MarketCalendarData> = {
  CN: loadMarketCalendar(FILES.CN, 'CN'),
  HK: loadMarketCalendar(FILES.HK, 'HK'),
  US: loadMarketCalendar(FILES.US, 'US'),
};

/** First and last exchange-local date (inclusive) the tables are complete for. */
export const HOLIDAY_COVERAGE: Record<Region, { first: string; last: string }> = {
  CN: MARKET_CALENDARS.CN.coverage,
  HK: MARKET_CALENDARS.HK.coverage,
  US: MARKET_CALENDARS.US.coverage,
};

export const CLOSURE_ROWS: Record<Region, readonly ClosureRow[]> = {
  CN: MARKET_CALENDARS.CN.closures, HK: MARKET_CALENDARS.HK.closures, US: MARKET_CALENDARS.US.closures,
};
export const SHORT_DAY_ROWS: Record<Region, readonly ShortDayRow[]> = {
  CN: MARKET_CALENDARS.CN.shortDays, HK: MARKET_CALENDARS.HK.shortDays, US: MARKET_CALENDARS.US.shortDays,
};
export const SESSION_REGIMES: Record<Region, readonly SessionRegime[]> = {
  CN: MARKET_CALENDARS.CN.regimes, HK: MARKET_CALENDARS.HK.regimes, US: MARKET_CALENDARS.US.regimes,
};
