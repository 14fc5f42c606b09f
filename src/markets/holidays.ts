// Exchange calendars as data (docs/contract.md#candle-time-semantics): for each market, the years it covers, every weekday it
// was closed (holidays and unscheduled closures), its shortened days, and its regular session times
// with the dates they changed. The closure tables live in ./holidays/{cn,hk,us}.ts, each citing the
// source it was transcribed from; weekends are always closed and are not listed. Outside a market's
// coverage nothing is known (src/markets/calendar.ts says how that is reported).

import type { Region } from '../domain.ts';
import * as cn from './holidays/cn.ts';
import * as hk from './holidays/hk.ts';
import * as us from './holidays/us.ts';
import type { ClosureRow, ShortDayRow } from './holidays/types.ts';

export type { ClosureRow, ShortDayRow } from './holidays/types.ts';

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

/** First and last exchange-local date (inclusive) the tables are complete for. */
export const HOLIDAY_COVERAGE: Record<Region, { first: string; last: string }> = {
  CN: { first: cn.FIRST, last: cn.LAST },
  HK: { first: hk.FIRST, last: hk.LAST },
  US: { first: us.FIRST, last: us.LAST },
};

export const CLOSURE_ROWS: Record<Region, readonly ClosureRow[]> = { CN: cn.CLOSURES, HK: hk.CLOSURES, US: us.CLOSURES };
export const SHORT_DAY_ROWS: Record<Region, readonly ShortDayRow[]> = { CN: cn.SHORT_DAYS, HK: hk.SHORT_DAYS, US: us.SHORT_DAYS };

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

// CN: 09:30-11:30 and 13:00-15:00 with the 09:15 call auction, as exchange_calendars' XSHG and
//   pandas_market_calendars' SSE model it from 1990 on (open_times/break_*_times/close_times, constant in both);
//   15:00-15:30 is STAR/ChiNext after-hours fixed-price trading. Neither source records an earlier change.
// HK: HKEX news releases of 2010-11-23 ("HKEx Decides to Extend Trading Hours"), 2011-01-24 and 2012-03-01:
//   until 2011-03-07, pre-opening 09:30-10:00, morning 10:00-12:30, afternoon 14:30-16:00; from 2011-03-07
//   pre-opening 09:00-09:30, 09:30-12:00 and 13:30-16:00; from 2012-03-05 the afternoon opens at 13:00. The
//   10-minute closing auction follows the last session. The first regime is the one those releases call
//   "current" in 2010; no earlier change is modelled.
// US: NYSE 09:30-16:00 since 1985-09-30 (exchange_calendars XNYS open_times/close_times); NYSE Arca's early
//   session from 04:00 and late session for 4 hours after the close.
export const SESSION_REGIMES: Record<Region, readonly SessionRegime[]> = {
  CN: [{ from: cn.FIRST, preOpen: '09:15', sessions: [['09:30', '11:30'], ['13:00', '15:00']], afterMinutes: 30 }],
  HK: [
    { from: hk.FIRST, preOpen: '09:30', sessions: [['10:00', '12:30'], ['14:30', '16:00']], afterMinutes: 10 },
    { from: '2011-03-07', preOpen: '09:00', sessions: [['09:30', '12:00'], ['13:30', '16:00']], afterMinutes: 10 },
    { from: '2012-03-05', preOpen: '09:00', sessions: [['09:30', '12:00'], ['13:00', '16:00']], afterMinutes: 10 },
  ],
  US: [{ from: us.FIRST, preOpen: '04:00', sessions: [['09:30', '16:00']], afterMinutes: 240 }],
};
