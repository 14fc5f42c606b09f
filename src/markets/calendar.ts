// Exchange calendars: local time, trading days, sessions and minute-bar labels (docs/contract.md#candle-time-semantics).
// Pure functions over the tables of holidays.ts. They sit on hot paths (per request, per simulated
// bar), so work is done on integer day numbers (days since 1970-01-01, exchange-local) and
// epoch ms; Intl is only consulted for a zone's UTC offset once per UTC day, and per-day
// results live in memo Maps that share one byte budget (cache.calendarMemoMaxBytes, set through
// configureCalendarMemo): each entry is charged its measured size, and when the budget is spent
// every memo is cleared at once (they refill from the days requests actually touch). The tables
// themselves are indexed once at load into fixed structures (a sorted Int32Array of each market's
// trading days, ~9-11k entries; Maps of its closures and shortened days): O(1) day lookups,
// O(log n) steps to the next/previous trading day.
//
// Coverage (HOLIDAY_COVERAGE): inside it every answer comes from the tables. Before its first day
// nothing trades (no session is invented; dayStatus says 'unknown'). After its last day the status is
// 'unknown' too, and /v1/calendar reports it so; the rest of the service (planning, streams, the sim)
// then treats weekdays as provisional sessions with the latest regular hours, so that a table not
// yet extended for a new year degrades to weekdays instead of stopping the service.

import type { Region, Session } from '../domain.ts';
import { FUTURES, futuresProduct, type FuturesCalendarKey, type FuturesProduct } from './futures.ts';
import { CLOSURE_ROWS, HOLIDAY_COVERAGE, MARKET_CALENDARS, SESSION_REGIMES, SHORT_DAY_ROWS, type ShortDay } from './holidays.ts';

/** Each market's IANA time zone, from its calendar file. */
export const TIME_ZONES: Record<Region, string> = {
  CN: MARKET_CALENDARS.CN.timezone,
  HK: MARKET_CALENDARS.HK.timezone,
  US: MARKET_CALENDARS.US.timezone,
};

/**
 * What a calendar is kept for: a region's exchanges (CN, HK, US), or China futures: one product's
 * sessions (`CN_FUTURES:au`) or every product's together (`CN_FUTURES`). Futures trade on CN's
 * days, in its zone; a night session belongs to the next trading day, so a futures instant's
 * trading day is not its local date (sessionDay).
 */
export type CalendarKey = Region | FuturesCalendarKey;

/** The region whose time zone a calendar keeps. */
function zoneOf(key: CalendarKey): Region {
  return key.length === 2 ? (key as Region) : 'CN';
}

function isFutures(key: CalendarKey): key is FuturesCalendarKey {
  return key.length > 2;
}

/** A regular session as epoch ms, [start, end). */
export interface SessionWindow {
  start: number;
  end: number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
import { DAY_MS } from './time.ts';
const REGIONS: readonly Region[] = ['CN', 'HK', 'US'];

// Bytes of one memo entry on a 64-bit V8 heap (Map slot with its share of the table's slack, plus
// the value), measured by bench/diagnostics/calendar-memo-bytes.ts and rounded up.
const ENTRY_BYTES = {
  dayString: 96,
  offsetDay: 176,
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

function localDay(key: CalendarKey, ms: number): number {
  const region = zoneOf(key);
  return Math.floor((ms + offsetAt(region, ms)) / DAY_MS);
}

export function localDate(region: CalendarKey, ms: number): string {
  return formatDay(localDay(region, ms));
}

export function localParts(key: CalendarKey, ms: number): { date: string; minutes: number; weekday: number } {
  const region = zoneOf(key);
  const local = ms + offsetAt(region, ms);
  const day = Math.floor(local / DAY_MS);
  return { date: formatDay(day), minutes: Math.floor((local - day * DAY_MS) / MINUTE_MS), weekday: weekdayOf(day) };
}

export function localMidnight(region: CalendarKey, date: string): number {
  return wallToUtc(zoneOf(region), parseDay(date), 0);
}

export function localTimeMs(region: CalendarKey, date: string, hhmm: string): number {
  return wallToUtc(zoneOf(region), parseDay(date), parseHhmm(hhmm));
}

// ---------------------------------------------------------------------------------------------
// Trading days

interface RegimeIndex {
  from: number;
  preOpen: number;
  sessions: readonly (readonly [start: number, end: number])[];
  afterMinutes: number;
}

interface ShortIndex {
  name: string;
  /** Local minutes; NaN when the regular time holds. */
  open: number;
  close: number;
}

interface MarketIndex {
  first: number;
  last: number;
  /** Every trading day in [first, last], ascending. */
  days: Int32Array;
  closures: Map<number, string>;
  short: Map<number, ShortIndex>;
  regimes: readonly RegimeIndex[];
}

function isWeekend(day: number): boolean {
  const wd = weekdayOf(day);
  return wd === 0 || wd === 6;
}

function buildIndex(region: Region): MarketIndex {
  const first = parseDay(HOLIDAY_COVERAGE[region].first);
  const last = parseDay(HOLIDAY_COVERAGE[region].last);
  const closures = new Map<number, string>();
  for (const [date, name] of CLOSURE_ROWS[region]) closures.set(parseDay(date), name);
  const short = new Map<number, ShortIndex>();
  for (const [date, name, open, close] of SHORT_DAY_ROWS[region]) {
    short.set(parseDay(date), { name, open: open === null ? Number.NaN : parseHhmm(open), close: close === null ? Number.NaN : parseHhmm(close) });
  }
  const all = new Int32Array(last - first + 1);
  let n = 0;
  for (let d = first; d <= last; d++) if (!isWeekend(d) && !closures.has(d)) all[n++] = d;
  const regimes = SESSION_REGIMES[region].map((r) => ({
    from: parseDay(r.from),
    preOpen: parseHhmm(r.preOpen),
    sessions: r.sessions.map(([a, b]) => [parseHhmm(a), parseHhmm(b)] as const),
    afterMinutes: r.afterMinutes,
  }));
  return { first, last, days: all.slice(0, n), closures, short, regimes };
}

const regionIndex: Record<Region, MarketIndex> = { CN: buildIndex('CN'), HK: buildIndex('HK'), US: buildIndex('US') };
const futuresIndex = new Map<CalendarKey, MarketIndex>();

/** CN's days from the futures coverage (or the product's first day) on; unknown keys are refused. */
function buildFuturesIndex(key: FuturesCalendarKey): MarketIndex {
  const product = key === 'CN_FUTURES' ? undefined : futuresProduct(key.slice('CN_FUTURES:'.length));
  if (key !== 'CN_FUTURES' && product === undefined) invalid('calendar', key);
  const cn = regionIndex.CN;
  const first = parseDay(product?.since ?? FUTURES.first);
  const from = upperBound(cn.days, first - 1);
  return { ...cn, first, days: cn.days.subarray(from), short: new Map(), regimes: cn.regimes };
}

function ixOf(key: CalendarKey): MarketIndex {
  if (!isFutures(key)) return regionIndex[key];
  let ix = futuresIndex.get(key);
  if (ix === undefined) futuresIndex.set(key, ix = buildFuturesIndex(key));
  return ix;
}

/** Whether `day` has regular sessions: table days inside coverage, none before it, weekdays after it (provisional). */
function trading(region: CalendarKey, day: number): boolean {
  const ix = ixOf(region);
  if (day < ix.first) return false;
  if (isWeekend(day)) return false;
  return day > ix.last || !ix.closures.has(day);
}

/** Index of the first entry of `days` that is > day. */
function upperBound(days: Int32Array, day: number): number {
  let lo = 0;
  let hi = days.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (days[mid] <= day) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function nextDay(region: CalendarKey, day: number): number {
  const ix = ixOf(region);
  const i = upperBound(ix.days, day);
  if (i < ix.days.length) return ix.days[i];
  let d = Math.max(day, ix.last) + 1;
  while (isWeekend(d)) d++;
  return d;
}

/** The previous trading day; before coverage, where none is known, the previous calendar day. */
function prevDay(region: CalendarKey, day: number): number {
  const ix = ixOf(region);
  let d = day - 1;
  for (; d > ix.last; d--) if (!isWeekend(d)) return d;
  const i = upperBound(ix.days, d);
  return i > 0 ? ix.days[i - 1] : d;
}

export type DayStatus = 'trading' | 'closed' | 'unknown';

/** What the tables say of `date`: 'unknown' outside the market's coverage (never a guessed session). */
export function dayStatus(region: CalendarKey, date: string): DayStatus {
  const day = parseDay(date);
  const ix = ixOf(region);
  if (day < ix.first || day > ix.last) return 'unknown';
  return trading(region, day) ? 'trading' : 'closed';
}

/** First and last date (inclusive, exchange-local) the market's tables cover. */
export function calendarCoverage(region: CalendarKey): { first: string; last: string } {
  if (!isFutures(region)) return HOLIDAY_COVERAGE[region];
  return { first: formatDay(ixOf(region).first), last: HOLIDAY_COVERAGE.CN.last };
}

export function isTradingDay(region: CalendarKey, date: string): boolean {
  return trading(region, parseDay(date));
}

/** Why the exchange was closed on a weekday inside coverage (holiday or unscheduled closure). */
export function holidayName(region: CalendarKey, date: string): string | undefined {
  return ixOf(region).closures.get(parseDay(date));
}

function shortDayOf(region: CalendarKey, day: number, date: string): ShortDay | undefined {
  const s = ixOf(region).short.get(day);
  if (s === undefined) return undefined;
  const out: ShortDay = { date, name: s.name };
  if (!Number.isNaN(s.open)) out.open = formatMinutes(s.open);
  if (!Number.isNaN(s.close)) out.close = formatMinutes(s.close);
  return out;
}

function formatMinutes(minutes: number): string {
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return `${h < 10 ? '0' : ''}${h}:${m < 10 ? '0' : ''}${m}`;
}

/** The shortened-day entry for `date` (late open and/or early close), if any. */
export function shortDay(region: CalendarKey, date: string): ShortDay | undefined {
  return shortDayOf(region, parseDay(date), date);
}

/** The shortened-day entry for `date` when it closes early (HK half day, NYSE 13:00 close), if any. */
export function earlyClose(region: CalendarKey, date: string): ShortDay | undefined {
  const s = shortDay(region, date);
  return s?.close === undefined ? undefined : s;
}

export function nextTradingDay(region: CalendarKey, date: string): string {
  return formatDay(nextDay(region, parseDay(date)));
}

export function prevTradingDay(region: CalendarKey, date: string): string {
  return formatDay(prevDay(region, parseDay(date)));
}

export function tradingDaysBetween(region: CalendarKey, from: string, to: string): string[] {
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
const regionPlans = perRegion(() => memo<number, DayPlan | null>());
const futuresPlans = new Map<CalendarKey, Map<number, DayPlan | null>>();

function plansOf(key: CalendarKey): Map<number, DayPlan | null> {
  if (!isFutures(key)) return regionPlans[key];
  let cache = futuresPlans.get(key);
  if (cache === undefined) futuresPlans.set(key, cache = memo<number, DayPlan | null>());
  return cache;
}

/**
 * Whether trading day `day` opens with the night session of the evening before: only when that
 * evening is the previous trading day's with nothing but a weekend between (a Friday night belongs
 * to Monday; there is none on the eve of a weekday closure, so none opens the day after one).
 */
function hasNightSession(key: CalendarKey, day: number): boolean {
  const previous = prevDay(key, day);
  if (previous < ixOf(key).first) return false;
  for (let d = previous + 1; d < day; d++) if (!isWeekend(d)) return false;
  return true;
}

/** A night session's window: from the night open on `eve` to its close that evening or after midnight. */
function nightWindow(product: FuturesProduct, eve: number): SessionWindow {
  const open = parseHhmm(FUTURES.nightOpen);
  const close = parseHhmm(product.nightClose as string);
  return { start: wallToUtc('CN', eve, open), end: wallToUtc('CN', close > open ? eve : eve + 1, close) };
}

/** One product's sessions of trading day `day` (its night first), or every product's merged. */
function buildFuturesPlan(key: FuturesCalendarKey, day: number): DayPlan | null {
  if (!trading(key, day)) return null;
  const products = key === 'CN_FUTURES' ? [...FUTURES.products.values()] : [futuresProduct(key.slice('CN_FUTURES:'.length)) as FuturesProduct];
  const night = hasNightSession(key, day);
  const eve = prevDay(key, day);
  const windows: SessionWindow[] = [];
  for (const product of products) {
    if (key === 'CN_FUTURES' && formatDay(day) < product.since) continue;
    if (night && product.nightClose !== null) windows.push(nightWindow(product, eve));
    for (const [open, close] of product.day) windows.push({ start: wallToUtc('CN', day, parseHhmm(open)), end: wallToUtc('CN', day, parseHhmm(close)) });
  }
  windows.sort((a, b) => a.start - b.start);
  const merged: SessionWindow[] = [];
  for (const w of windows) {
    const last = merged[merged.length - 1];
    if (last !== undefined && w.start <= last.end) merged[merged.length - 1] = { start: last.start, end: Math.max(last.end, w.end) };
    else merged.push(w);
  }
  const sessions = merged.map((w) => Object.freeze(w));
  return {
    sessions: Object.freeze(sessions) as SessionWindow[],
    preOpen: sessions[0].start - FUTURES.preOpenMinutes * MINUTE_MS,
    afterEnd: sessions[sessions.length - 1].end,
  };
}

// A futures night ends by 03:00 and opens from 20:55: an instant from 18:00 on belongs to the next
// trading day's sessions, one before 03:00 to those of the trading day after the previous date.
const NIGHT_FROM_MINUTES = 18 * 60;
const NIGHT_UNTIL_MINUTES = 3 * 60;

/** The trading day whose sessions (or the gaps around them) `ms` falls in: the local date, except futures evenings and nights. */
function sessionDay(key: CalendarKey, ms: number): number {
  const day = localDay(key, ms);
  if (!isFutures(key)) return day;
  const minutes = Math.floor((ms + offsetAt('CN', ms) - day * DAY_MS) / MINUTE_MS);
  if (minutes >= NIGHT_FROM_MINUTES) return nextDay(key, day);
  if (minutes < NIGHT_UNTIL_MINUTES) return nextDay(key, day - 1);
  return day;
}

/** The futures trading day an instant's bars, volume and settlement belong to (a night's are the next trading day's). */
export function tradingDayOf(key: CalendarKey, ms: number): string {
  return formatDay(sessionDay(key, ms));
}

/**
 * The trading day whose bar labels are the first that can reach `ms`: the local date for a
 * region; for a futures calendar the trading day `ms` belongs to, or the next one when that is
 * not a trading day (a Friday night or a Saturday morning is already Monday's night session).
 */
export function labelDayOf(key: CalendarKey, ms: number): string {
  if (!isFutures(key)) return formatDay(localDay(key, ms));
  const day = sessionDay(key, ms);
  return formatDay(trading(key, day) ? day : nextDay(key, day));
}

function regimeOf(region: CalendarKey, day: number): RegimeIndex {
  const regimes = ixOf(region).regimes;
  for (let i = regimes.length - 1; i > 0; i--) if (day >= regimes[i].from) return regimes[i];
  return regimes[0];
}

function buildPlan(region: CalendarKey, day: number): DayPlan | null {
  if (isFutures(region)) return buildFuturesPlan(region, day);
  if (!trading(region, day)) return null;
  const regime = regimeOf(region, day);
  const short = ixOf(region).short.get(day);
  const open = short === undefined || Number.isNaN(short.open) ? -Infinity : short.open;
  const close = short === undefined || Number.isNaN(short.close) ? Infinity : short.close;
  const sessions: SessionWindow[] = [];
  let lastEnd = 0;
  for (const [start, end] of regime.sessions) {
    if (start >= close) break;
    if (end <= open) continue;
    lastEnd = Math.min(end, close);
    sessions.push(Object.freeze({ start: wallToUtc(region, day, Math.max(start, open)), end: wallToUtc(region, day, lastEnd) }));
  }
  return {
    sessions: Object.freeze(sessions) as SessionWindow[],
    preOpen: wallToUtc(region, day, regime.preOpen),
    afterEnd: wallToUtc(region, day, lastEnd + regime.afterMinutes),
  };
}

function planFor(region: CalendarKey, day: number): DayPlan | null {
  const cache = plansOf(region);
  const hit = cache.get(day);
  return hit !== undefined ? hit : remember(cache, day, buildPlan(region, day), ENTRY_BYTES.plan);
}

/** Regular sessions of `date` (shortened on half days); [] when closed. Shared and frozen: do not mutate. */
export function sessions(region: CalendarKey, date: string): SessionWindow[] {
  return planFor(region, parseDay(date))?.sessions ?? EMPTY;
}

/**
 * Computes every market's session at `ms`: the first such computation loads ICU's time-zone data
 * (~25 ms), so a server does it once it listens rather than in its boot or its first request.
 */
export function warmCalendar(ms: number): void {
  for (const region of REGIONS) sessionState(region, ms);
}

export function sessionState(region: CalendarKey, ms: number): Session {
  const plan = planFor(region, sessionDay(region, ms));
  if (plan === null || plan.sessions.length === 0 || ms < plan.preOpen) return 'closed';
  const windows = plan.sessions;
  if (ms < windows[0].start) return 'pre_market';
  let previousEnd = windows[0].start;
  for (const w of windows) {
    // Between a futures night and the day session the market is closed until the day's call auction.
    if (ms < w.start && w.start - previousEnd > NIGHT_UNTIL_MINUTES * MINUTE_MS) {
      return ms < w.start - FUTURES.preOpenMinutes * MINUTE_MS ? 'closed' : 'pre_market';
    }
    previousEnd = w.end;
    if (ms < w.start) return 'lunch_break';
    if (ms < w.end) return 'regular';
  }
  return ms < plan.afterEnd ? 'after_hours' : 'closed';
}

export function isMarketOpen(region: CalendarKey, ms: number): boolean {
  const plan = planFor(region, sessionDay(region, ms));
  if (plan === null) return false;
  for (const w of plan.sessions) if (ms >= w.start && ms < w.end) return true;
  return false;
}

export function latestTradingDay(region: CalendarKey, ms: number): string {
  // A futures evening before its night session still counts as the day that just closed.
  if (isFutures(region)) return latestStartedSessionDay(region, ms);
  const day = localDay(region, ms);
  return formatDay(trading(region, day) ? day : prevDay(region, day));
}

export function latestStartedSessionDay(region: CalendarKey, ms: number): string {
  let day = sessionDay(region, ms);
  // A futures weekend or holiday may already be in the next trading day's night session.
  if (isFutures(region) && !trading(region, day)) day = nextDay(region, day);
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

/** How many labels minuteBarLabels(region, date, periodMinutes) returns, without building them. */
export function minuteBarLabelCount(region: CalendarKey, date: string, periodMinutes: number): number {
  return labelCountOf(planFor(region, parseDay(date))?.sessions ?? EMPTY, checkPeriod(periodMinutes));
}

/** Each session's whole spans after its start, then its end. */
function labelCountOf(windows: readonly SessionWindow[], span: number): number {
  let count = 0;
  for (const w of windows) count += Math.max(1, Math.ceil((w.end - w.start) / span));
  return count;
}

/**
 * End-of-bar labels of `date`, aligned to each session's start: a fresh array per call (the caller
 * owns it). Not memoised: it is arithmetic over the day's memoised sessions, cheaper to redo than
 * to keep (a frozen array of 390 labels held 9 KB of boxed numbers; issue 15 item 4).
 */
export function minuteBarLabels(region: CalendarKey, date: string, periodMinutes: number): number[] {
  const span = checkPeriod(periodMinutes);
  const windows = planFor(region, parseDay(date))?.sessions ?? EMPTY;
  const labels = new Array<number>(labelCountOf(windows, span));
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
export function minuteBarLabelFor(region: CalendarKey, ms: number, periodMinutes: number): number | undefined {
  const span = checkPeriod(periodMinutes);
  const plan = planFor(region, sessionDay(region, ms));
  if (plan === null) return undefined;
  for (const w of plan.sessions) {
    if (ms < w.start) return undefined;
    if (ms > w.end) continue;
    const label = ms <= w.start + span ? w.start + span : w.start + Math.ceil((ms - w.start) / span) * span;
    return label < w.end ? label : w.end;
  }
  return undefined;
}
