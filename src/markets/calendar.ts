// Exchange calendars: local time, trading days, sessions and minute-bar labels (DESIGN.md 4.3).
// Pure functions over the holiday tables. They sit on hot paths (per request, per simulated
// bar), so work is done on integer day numbers (days since 1970-01-01, exchange-local) and
// epoch ms; Intl is only consulted for a zone's UTC offset once per UTC day, and per-day
// results live in memo Maps that share one byte budget (cache.calendarMemoMaxBytes, set through
// configureCalendarMemo): each entry is charged its measured size, and when the budget is spent
// every memo is cleared at once (they refill from the days requests actually touch).

import type { Region, Session } from '../domain.ts';
import { EARLY_CLOSES, HOLIDAYS, type EarlyClose } from './holidays.ts';

export const TIME_ZONES: Record<Region, string> = {
  CN: 'Asia/Shanghai',
  HK: 'Asia/Hong_Kong',
  US: 'America/New_York',
};

/** A regular session as epoch ms, [start, end). */
export interface SessionWindow {
  start: number;
  end: number;
}

interface Profile {
  /** Local minutes since midnight. */
  preOpen: number;
  sessions: readonly (readonly [start: number, end: number])[];
  /** Length of the after-hours state that follows the day's last regular session. */
  afterMinutes: number;
}

// CN: 09:15 call auction; 15:00–15:30 STAR/ChiNext after-hours fixed-price trading.
// HK: 09:00 pre-opening session; closing auction for 10 minutes after the last session.
// US: NYSE Arca early and late sessions, 04:00 and 4 hours after the close (17:00 on early closes).
const hm = (h: number, m: number) => h * 60 + m;
const PROFILES: Record<Region, Profile> = {
  CN: { preOpen: hm(9, 15), sessions: [[hm(9, 30), hm(11, 30)], [hm(13, 0), hm(15, 0)]], afterMinutes: 30 },
  HK: { preOpen: hm(9, 0), sessions: [[hm(9, 30), hm(12, 0)], [hm(13, 0), hm(16, 0)]], afterMinutes: 10 },
  US: { preOpen: hm(4, 0), sessions: [[hm(9, 30), hm(16, 0)]], afterMinutes: 240 },
};

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
import { DAY_MS } from './time.ts';
const REGIONS: readonly Region[] = ['CN', 'HK', 'US'];

// Bytes of one memo entry on a 64-bit V8 heap (Map slot with its share of the table's slack, plus
// the value), measured by bench/soak-calendar-memo.ts and rounded up.
const ENTRY_BYTES = {
  dayString: 96,
  offsetDay: 176,
  tradingDay: 64,
  plan: 384,
} as const;

/** The default of cache.calendarMemoMaxBytes (config/default.yaml). */
export const DEFAULT_CALENDAR_MEMO_MAX_BYTES = 4 * 1024 * 1024;
let memoMaxBytes = DEFAULT_CALENDAR_MEMO_MAX_BYTES;
let memoBytes = 0;
const memos: Map<unknown, unknown>[] = [];

function memo<K, V>(): Map<K, V> {
  const map = new Map<K, V>();
  memos.push(map as Map<unknown, unknown>);
  return map;
}

function clearMemos(): void {
  for (const map of memos) map.clear();
  memoBytes = 0;
}

function remember<K, V>(map: Map<K, V>, key: K, value: V, bytes: number): V {
  if (memoBytes + bytes > memoMaxBytes) clearMemos();
  if (bytes > memoMaxBytes) return value;
  map.set(key, value);
  memoBytes += bytes;
  return value;
}

/** Sets the calendar memos' byte budget (cache.calendarMemoMaxBytes); 0 turns memoising off. */
export function configureCalendarMemo(options: { maxBytes: number }): void {
  memoMaxBytes = Math.max(0, Math.floor(options.maxBytes));
  clearMemos();
}

/** Bytes charged to the calendar memos now, their budget, and their entries (tests, benches). */
export function calendarMemoStats(): { bytes: number; maxBytes: number; entries: number } {
  let entries = 0;
  for (const map of memos) entries += map.size;
  return { bytes: memoBytes, maxBytes: memoMaxBytes, entries };
}

function perRegion<T>(make: () => T): Record<Region, T> {
  return { CN: make(), HK: make(), US: make() };
}

// ---------------------------------------------------------------------------------------------
// Civil dates as day numbers

function invalid(what: string, value: unknown): never {
  throw new RangeError(`invalid ${what}: ${String(value)}`);
}

function digits(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** 'YYYY-MM-DD' → days since 1970-01-01; no Date string parsing. */
function parseDay(date: string): number {
  if (typeof date !== 'string' || date.length !== 10 || date[4] !== '-' || date[7] !== '-') invalid('date', date);
  const y = digits(date, 0, 4);
  const m = digits(date, 5, 7);
  const d = digits(date, 8, 10);
  if (y < 0 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) invalid('date', date);
  return daysFromCivil(y, m, d);
}

// Proleptic Gregorian, counted from March so the leap day ends the year (Date.UTC would map
// years 0–99 onto 1900–1999).
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * ((m + 9) % 12) + 2) / 5) + d - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}

function daysInMonth(y: number, m: number): number {
  if (m !== 2) return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
  return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28;
}

const dayStrings = memo<number, string>();

function formatDay(day: number): string {
  const cached = dayStrings.get(day);
  if (cached !== undefined) return cached;
  const t = new Date(day * DAY_MS);
  const m = t.getUTCMonth() + 1;
  const d = t.getUTCDate();
  const s = `${String(t.getUTCFullYear()).padStart(4, '0')}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}`;
  return remember(dayStrings, day, s, ENTRY_BYTES.dayString);
}

/** 0 = Sunday; day 0 (1970-01-01) was a Thursday. */
function weekdayOf(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

function parseHhmm(hhmm: string): number {
  if (typeof hhmm !== 'string' || hhmm.length !== 5 || hhmm[2] !== ':') invalid('time', hhmm);
  const h = digits(hhmm, 0, 2);
  const m = digits(hhmm, 3, 5);
  if (h < 0 || h > 23 || m < 0 || m > 59) invalid('time', hhmm);
  return h * 60 + m;
}

export function addDays(date: string, n: number): string {
  if (!Number.isInteger(n)) invalid('day count', n);
  return formatDay(parseDay(date) + n);
}

// ---------------------------------------------------------------------------------------------
// Zone offsets

const formatters = new Map<Region, Intl.DateTimeFormat>();

function intlOffset(region: Region, ms: number): number {
  let f = formatters.get(region);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: TIME_ZONES[region],
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(region, f);
  }
  let y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  for (const p of f.formatToParts(ms)) {
    if (p.type === 'year') y = Number(p.value);
    else if (p.type === 'month') mo = Number(p.value);
    else if (p.type === 'day') d = Number(p.value);
    else if (p.type === 'hour') h = Number(p.value);
    else if (p.type === 'minute') mi = Number(p.value);
    else if (p.type === 'second') s = Number(p.value);
  }
  return Date.UTC(y, mo - 1, d, h, mi, s) - Math.floor(ms / 1000) * 1000;
}

interface OffsetDay {
  before: number;
  after: number;
  /** First instant using `after`; Infinity when the offset holds all day. */
  switchAt: number;
}

const offsetDays = perRegion(() => memo<number, OffsetDay>());

// These zones change offset at most once per UTC day and only on whole UTC hours, so one
// entry per UTC day (with the switching hour found by scanning, twice a year) is exact.
function computeOffsetDay(region: Region, utcDay: number): OffsetDay {
  const start = utcDay * DAY_MS;
  // Neighbouring days share a boundary instant; sequential scans then pay one Intl call a day.
  const cache = offsetDays[region];
  const before = cache.get(utcDay - 1)?.after ?? intlOffset(region, start);
  const after = cache.get(utcDay + 1)?.before ?? intlOffset(region, start + DAY_MS);
  let switchAt = Infinity;
  if (after !== before) {
    for (let h = 1; h <= 24; h++) {
      if (intlOffset(region, start + h * HOUR_MS) !== before) {
        switchAt = start + h * HOUR_MS;
        break;
      }
    }
  }
  return { before, after, switchAt };
}

/** Local wall time minus UTC, in ms, at instant `ms`. */
function offsetAt(region: Region, ms: number): number {
  const utcDay = Math.floor(ms / DAY_MS);
  const cache = offsetDays[region];
  const od = cache.get(utcDay) ?? remember(cache, utcDay, computeOffsetDay(region, utcDay), ENTRY_BYTES.offsetDay);
  return ms < od.switchAt ? od.before : od.after;
}

/** Local wall clock (day, minutes) → epoch ms. A time skipped by DST moves forward; a repeated one takes the first. */
function wallToUtc(region: Region, day: number, minutes: number): number {
  const wall = day * DAY_MS + minutes * MINUTE_MS;
  const guess = offsetAt(region, wall - offsetAt(region, wall));
  const at = wall - guess;
  const actual = offsetAt(region, at);
  return actual === guess ? at : wall - actual;
}

function localDay(region: Region, ms: number): number {
  return Math.floor((ms + offsetAt(region, ms)) / DAY_MS);
}

export function localDate(region: Region, ms: number): string {
  return formatDay(localDay(region, ms));
}

export function localParts(region: Region, ms: number): { date: string; minutes: number; weekday: number } {
  const local = ms + offsetAt(region, ms);
  const day = Math.floor(local / DAY_MS);
  return { date: formatDay(day), minutes: Math.floor((local - day * DAY_MS) / MINUTE_MS), weekday: weekdayOf(day) };
}

export function localMidnight(region: Region, date: string): number {
  return wallToUtc(region, parseDay(date), 0);
}

export function localTimeMs(region: Region, date: string, hhmm: string): number {
  return wallToUtc(region, parseDay(date), parseHhmm(hhmm));
}

// ---------------------------------------------------------------------------------------------
// Trading days

function indexTable<E extends { date: string }, V>(rows: Record<Region, readonly E[]>, value: (e: E) => V) {
  const out = perRegion(() => new Map<number, V>());
  for (const region of REGIONS) for (const e of rows[region]) out[region].set(parseDay(e.date), value(e));
  return out;
}

const holidayByDay = indexTable(HOLIDAYS, (e) => e.name);
const earlyByDay = indexTable(EARLY_CLOSES, (e) => e);

function trading(region: Region, day: number): boolean {
  const wd = weekdayOf(day);
  return wd !== 0 && wd !== 6 && !holidayByDay[region].has(day);
}

const nextMemo = perRegion(() => memo<number, number>());
const prevMemo = perRegion(() => memo<number, number>());

function nextDay(region: Region, day: number): number {
  const hit = nextMemo[region].get(day);
  if (hit !== undefined) return hit;
  let d = day + 1;
  while (!trading(region, d)) d++;
  return remember(nextMemo[region], day, d, ENTRY_BYTES.tradingDay);
}

function prevDay(region: Region, day: number): number {
  const hit = prevMemo[region].get(day);
  if (hit !== undefined) return hit;
  let d = day - 1;
  while (!trading(region, d)) d--;
  return remember(prevMemo[region], day, d, ENTRY_BYTES.tradingDay);
}

export function isTradingDay(region: Region, date: string): boolean {
  return trading(region, parseDay(date));
}

export function holidayName(region: Region, date: string): string | undefined {
  return holidayByDay[region].get(parseDay(date));
}

/** The shortened-day entry for `date` (HK half day, NYSE 13:00 close), if any. */
export function earlyClose(region: Region, date: string): EarlyClose | undefined {
  return earlyByDay[region].get(parseDay(date));
}

export function nextTradingDay(region: Region, date: string): string {
  return formatDay(nextDay(region, parseDay(date)));
}

export function prevTradingDay(region: Region, date: string): string {
  return formatDay(prevDay(region, parseDay(date)));
}

export function tradingDaysBetween(region: Region, from: string, to: string): string[] {
  const last = parseDay(to);
  const out: string[] = [];
  for (let d = parseDay(from); d <= last; d++) if (trading(region, d)) out.push(formatDay(d));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Sessions

interface DayPlan {
  sessions: SessionWindow[];
  /** Start of the pre-market state. */
  preOpen: number;
  /** End of the after-hours state. */
  afterEnd: number;
}

const EMPTY: SessionWindow[] = Object.freeze([]) as unknown as SessionWindow[];
const plans = perRegion(() => memo<number, DayPlan | null>());

function buildPlan(region: Region, day: number): DayPlan | null {
  if (!trading(region, day)) return null;
  const profile = PROFILES[region];
  const early = earlyByDay[region].get(day);
  const close = early === undefined ? Infinity : parseHhmm(early.close);
  const sessions: SessionWindow[] = [];
  let lastEnd = 0;
  for (const [start, end] of profile.sessions) {
    if (start >= close) break;
    lastEnd = Math.min(end, close);
    sessions.push(Object.freeze({ start: wallToUtc(region, day, start), end: wallToUtc(region, day, lastEnd) }));
  }
  return {
    sessions: Object.freeze(sessions) as SessionWindow[],
    preOpen: wallToUtc(region, day, profile.preOpen),
    afterEnd: wallToUtc(region, day, lastEnd + profile.afterMinutes),
  };
}

function planFor(region: Region, day: number): DayPlan | null {
  const cache = plans[region];
  const hit = cache.get(day);
  return hit !== undefined ? hit : remember(cache, day, buildPlan(region, day), ENTRY_BYTES.plan);
}

/** Regular sessions of `date` (shortened on half days); [] when closed. Shared and frozen: do not mutate. */
export function sessions(region: Region, date: string): SessionWindow[] {
  return planFor(region, parseDay(date))?.sessions ?? EMPTY;
}

/**
 * Computes every market's session at `ms`: the first such computation loads ICU's time-zone data
 * (~25 ms), so a server does it once it listens rather than in its boot or its first request.
 */
export function warmCalendar(ms: number): void {
  for (const region of REGIONS) sessionState(region, ms);
}

export function sessionState(region: Region, ms: number): Session {
  const plan = planFor(region, localDay(region, ms));
  if (plan === null || plan.sessions.length === 0 || ms < plan.preOpen) return 'closed';
  const windows = plan.sessions;
  if (ms < windows[0].start) return 'pre_market';
  for (const w of windows) {
    if (ms < w.start) return 'lunch_break';
    if (ms < w.end) return 'regular';
  }
  return ms < plan.afterEnd ? 'after_hours' : 'closed';
}

export function isMarketOpen(region: Region, ms: number): boolean {
  const plan = planFor(region, localDay(region, ms));
  if (plan === null) return false;
  for (const w of plan.sessions) if (ms >= w.start && ms < w.end) return true;
  return false;
}

export function latestTradingDay(region: Region, ms: number): string {
  const day = localDay(region, ms);
  return formatDay(trading(region, day) ? day : prevDay(region, day));
}

export function latestStartedSessionDay(region: Region, ms: number): string {
  const day = localDay(region, ms);
  const plan = planFor(region, day);
  const started = plan !== null && plan.sessions.length > 0 && ms >= plan.sessions[0].start;
  return formatDay(started ? day : prevDay(region, day));
}

// ---------------------------------------------------------------------------------------------
// Minute bars

function checkPeriod(periodMinutes: number): number {
  if (!Number.isInteger(periodMinutes) || periodMinutes <= 0) invalid('period', periodMinutes);
  return periodMinutes * MINUTE_MS;
}

/**
 * End-of-bar labels of `date`, aligned to each session's start: a fresh array per call (the caller
 * owns it). Not memoised: it is arithmetic over the day's memoised sessions, cheaper to redo than
 * to keep (a frozen array of 390 labels held 9 KB of boxed numbers; issue 15 item 4).
 */
export function minuteBarLabels(region: Region, date: string, periodMinutes: number): number[] {
  const span = checkPeriod(periodMinutes);
  const windows = planFor(region, parseDay(date))?.sessions ?? EMPTY;
  let count = 0;
  for (const w of windows) count += Math.max(1, Math.ceil((w.end - w.start) / span));
  const labels = new Array<number>(count);
  let k = 0;
  for (const w of windows) {
    for (let t = w.start + span; t < w.end; t += span) labels[k++] = t;
    labels[k++] = w.end;
  }
  return labels;
}

/**
 * Label of the bar containing `ms`: the first bar of a session covers [start, start + period]
 * (the opening auction folds into it), later bars (label − period, label]; the last bar ends at
 * the session end. Undefined outside regular sessions (lunch, after the close, closed days).
 */
export function minuteBarLabelFor(region: Region, ms: number, periodMinutes: number): number | undefined {
  const span = checkPeriod(periodMinutes);
  const plan = planFor(region, localDay(region, ms));
  if (plan === null) return undefined;
  for (const w of plan.sessions) {
    if (ms < w.start) return undefined;
    if (ms > w.end) continue;
    const label = ms <= w.start + span ? w.start + span : w.start + Math.ceil((ms - w.start) / span) * span;
    return label < w.end ? label : w.end;
  }
  return undefined;
}
