// When the recorder records what: pure functions of the calendar and the clock.
//
//   recordableDay(market, now, delayMinutes)     the newest trading day closed at least delay ago
//   dueDays(market, now, { delayMinutes, catchUpDays, done })
//                                                 the trading days to record now, oldest first:
//                                                 the newest `catchUpDays` closed ones not done
//
// `market` is a calendar: a region's, CN_FUTURES (every futures product's hours together: the day
// is recordable once the last product, treasury futures at 15:15, has closed) or one product's.
import { isTradingDay, latestTradingDay, localMidnight, prevTradingDay, sessions, type CalendarKey } from '../markets/calendar.ts';
import { MINUTE_MS } from '../markets/time.ts';

/** When `day`'s last session closes (epoch ms); its midnight + 24 h when it has none. */
export function closeOf(market: CalendarKey, day: string): number {
  const s = sessions(market, day);
  return s.length === 0 ? localMidnight(market, day) + 86_400_000 : s[s.length - 1].end;
}

/** The newest trading day whose close is at least `delayMinutes` before `now`. */
export function recordableDay(market: CalendarKey, now: number, delayMinutes: number): string {
  let day = latestTradingDay(market, now);
  while (closeOf(market, day) + delayMinutes * MINUTE_MS > now) day = prevTradingDay(market, day);
  return day;
}

/** When the day after `day` becomes recordable (its close plus the delay): the recorder's next wake-up. */
export function nextRecordableAt(market: CalendarKey, now: number, delayMinutes: number): number {
  let day = recordableDay(market, now, delayMinutes);
  for (let i = 0; i < 30; i++) {
    const next = nextDay(day);
    day = next;
    if (isTradingDay(market, day)) return closeOf(market, day) + delayMinutes * MINUTE_MS;
  }
  return now + 86_400_000;
}

function nextDay(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

/**
 * The trading days to record now, oldest first: the newest `catchUpDays` recordable ones (at
 * least the newest one), without those in `done`; none before `notBefore` (the vendor's window).
 */
export function dueDays(market: CalendarKey, now: number, o: { delayMinutes: number; catchUpDays: number; done: ReadonlySet<string>; notBefore?: string }): string[] {
  const out: string[] = [];
  let day = recordableDay(market, now, o.delayMinutes);
  for (let i = 0; i < Math.max(1, o.catchUpDays); i++) {
    if (o.notBefore !== undefined && day < o.notBefore) break;
    if (!o.done.has(day)) out.push(day);
    day = prevTradingDay(market, day);
  }
  return out.reverse();
}
