// The daily model: one raw (unadjusted) daily bar per trading day from listing, generated forward
// in time so every ex-date knows its P_prev.
//
// Prices follow a latent log path scale + drift·(i + 1) + noise(i), with Ornstein–Uhlenbeck noise
// and rare jumps drawn from a per-(symbol, date) seed. The raw close targets exp(latent − F), where
// F sums the log ex-factors realised so far (so raw prices drop on ex-dates and adjusted prices do
// not). scale (the issue price) and drift are solved once per instrument so the planned path meets
// `price` on ANCHOR_DATE; they depend only on the instrument and fixed dates, so a date's bar is
// the same whatever the window or the clock. Closes are snapped to the tick grid and clamped to
// A-share limits; a close that would pass a limit sits exactly on it, and the target pulls the
// next days along (consecutive limit days). The per-day step lives in walk.ts.

import { addDays, localMidnight, tradingDaysBetween } from '../../src/markets/calendar.ts';
import { onOrAfterTradingDay, planActions, type PlannedAction } from './actions.ts';
import { advanceWalk } from './walk.ts';
import {
  commitColumns, dateKeyOf, NUMERIC_COLUMNS, reserveColumns, type DailyHistory, type Midnight, type WalkParams,
} from './history.ts';
import { INDEX_TURNOVER, type SimInstrument } from './instruments.ts';

// A history's shape lives in history.ts; importers of the daily model get it from here too.
export type { DailyHistory, Midnight } from './history.ts';
import { limitPercent } from './limits.ts';
import { createRng, hashString, mixSeed3, rngFor, type Rng } from './random.ts';
import { roundToTick } from './ticks.ts';

/** Histories start here when the instrument listed earlier (older calendars are not modelled). */
export const HISTORY_START = '2000-01-04';
/** The date on which the planned path equals the instrument's `price` (a late-2026 level). */
export const ANCHOR_DATE = '2026-11-02';

const TRADING_DAYS_PER_YEAR = 250;
/** Mean reversion of the noise around the trend, per day: a half-life of about two years. */
const REVERSION = 1 / 750;

function defaultMidnight(inst: SimInstrument): Midnight {
  return (date) => localMidnight(inst.region, date);
}

const EMPTY_COLUMN = new Float64Array(0);

function walkParams(inst: SimInstrument): WalkParams {
  const rng = rngFor(inst.symbol, 'params');
  const growth = rng.range(0.02, 0.12);
  const startLog = rng.range(-1.3, 0.4);
  // Share of float traded on an ordinary day: A-shares churn more than HK and US names.
  const turnoverLow = 0.003;
  const turnoverHigh = inst.region === 'CN' ? 0.03 : 0.015;
  const drawn = turnoverLow * (turnoverHigh / turnoverLow) ** rng.next();
  // An index's volume is sized by its row (instruments.ts), so its turnover is fixed.
  const index = inst.type === 'index';
  const turnover = index ? INDEX_TURNOVER : drawn;
  const suspendRoll = rng.next();
  const pct = limitPercent(inst);
  // An index moves like a basket: no limit-sized jumps, never suspended.
  const etf = inst.type === 'etf' || index;
  return {
    // Under a tight limit (ST ±5%) a high volatility would pin the price to a limit most days.
    sigma: Math.min(inst.volatility / Math.sqrt(TRADING_DAYS_PER_YEAR), pct === undefined ? Infinity : pct / 100 / 2.6),
    drift: growth / TRADING_DAYS_PER_YEAR,
    startLog,
    // A-share stocks get enough jumps that limit-up and limit-down closes show up every year.
    jumpChance: etf ? 0.002 : inst.region === 'CN' ? (inst.st ? 0.02 : 0.012) : 0.004,
    jumpScale: pct !== undefined && !etf ? pct / 100 : 0.07,
    turnover,
    suspendable: inst.region === 'CN' && !etf && suspendRoll < 0.6,
  };
}

/**
 * Trading days of a region from HISTORY_START on, shared by every symbol: a cold history slices
 * this list instead of formatting a fresh string per day (the strings are then shared too).
 */
const tradingDayLists: Partial<Record<SimInstrument['region'], string[]>> = {};

function tradingDays(region: SimInstrument['region'], from: string, to: string): string[] {
  if (from < HISTORY_START) return tradingDaysBetween(region, from, to);
  let list = tradingDayLists[region];
  if (list === undefined) list = tradingDayLists[region] = tradingDaysBetween(region, HISTORY_START, to);
  const last = list.length > 0 ? list[list.length - 1] : HISTORY_START;
  if (to > last) for (const day of tradingDaysBetween(region, addDays(last, 1), to)) list.push(day);
  return list.slice(firstIndexAfter(list, from, false), firstIndexAfter(list, to, true));
}

/** First index whose day is > day (inclusive: true) or ≥ day (false). */
function firstIndexAfter(list: readonly string[], day: string, inclusive: boolean): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid] < day || (inclusive && list[mid] === day)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const SALT_WALK = hashString('walk');

/** The next value of the zero-mean part of the latent log path (OU noise plus rare jumps). */
function nextNoise(params: WalkParams, symbolHash: number, day: string, previous: number, noiseRng: Rng): number {
  noiseRng.reseed(mixSeed3(symbolHash, dateKeyOf(day), SALT_WALK));
  const shock = noiseRng.normal();
  const jumpRoll = noiseRng.next();
  const jumpSize = noiseRng.range(0.6, 1.6) * params.jumpScale * (noiseRng.next() < 0.5 ? -1 : 1);
  return previous * (1 - REVERSION) + params.sigma * shock + (jumpRoll < params.jumpChance ? jumpSize : 0);
}

/** Sum of log ex-factors the plan implies up to `date`, with dividends as exact yields. */
function plannedLogFactor(planned: readonly PlannedAction[], date: string): number {
  let sum = 0;
  for (const action of planned) {
    if (action.date > date) break;
    sum += Math.log(1 + action.shareRatio) - Math.log(1 - action.cashYield);
  }
  return sum;
}

/** Multiplier from the anchor-date share count to the share count on `date` (splits, bonus). */
export function shareMultiplier(history: Pick<DailyHistory, 'planned'>, date: string): number {
  let mult = 1;
  for (const action of history.planned) {
    if (action.shareRatio === 0) continue;
    if (action.date <= date && action.date > ANCHOR_DATE) mult *= 1 + action.shareRatio;
    else if (action.date > date && action.date <= ANCHOR_DATE) mult /= 1 + action.shareRatio;
  }
  return mult;
}

function emptyHistory(inst: SimInstrument, firstDay: string, through: string): DailyHistory {
  return {
    symbol: inst.symbol, firstDay, through, dates: [], timestamp: EMPTY_COLUMN, open: EMPTY_COLUMN, high: EMPTY_COLUMN,
    low: EMPTY_COLUMN, close: EMPTY_COLUMN, volume: EMPTY_COLUMN, amount: EMPTY_COLUMN, prevClose: EMPTY_COLUMN, events: [], planned: [],
  };
}

/** The instrument's raw daily bars and realised ex-events for every trading day up to `through`. */
export function buildDailyHistory(inst: SimInstrument, through: string, midnight: Midnight = defaultMidnight(inst)): DailyHistory {
  const region = inst.region;
  const firstDay = onOrAfterTradingDay(region, inst.listingDate > HISTORY_START ? inst.listingDate : HISTORY_START);
  if (through < firstDay) return emptyHistory(inst, firstDay, through);
  const walkEnd = through > ANCHOR_DATE ? through : ANCHOR_DATE;
  const days = tradingDays(region, firstDay, walkEnd);
  const params = walkParams(inst);
  const symbolHash = hashString(inst.symbol);
  const noise: number[] = [];
  let lastNoise = 0;
  const rng = createRng(0);
  for (const day of days) noise.push((lastNoise = nextNoise(params, symbolHash, day, lastNoise, rng)));
  const planned = planActions(inst, firstDay, walkEnd);

  // The latent path is scale + drift·(i + 1) + noise[i]; scale is the issue price. With an anchor
  // inside the history, the drift is solved so the planned raw path meets `price` on the anchor
  // date exactly, starting from an issue price a seeded ratio away (splits and bonus issues make
  // old raw prices higher, so the trend absorbs them instead of leaving a 6000-dollar 2000 AAPL).
  let anchorIndex = -1;
  for (let i = 0; i < days.length && days[i] <= ANCHOR_DATE; i++) anchorIndex = i;
  let scale = Math.log(inst.price);
  let drift = params.drift;
  if (anchorIndex >= 0) {
    const years = (anchorIndex + 1) / TRADING_DAYS_PER_YEAR;
    scale += params.startLog * Math.min(1, years / 10);
    const planLog = plannedLogFactor(planned, days[anchorIndex]);
    drift = (Math.log(inst.price) + planLog - scale - noise[anchorIndex]) / (anchorIndex + 1);
  }

  const history = emptyHistory(inst, firstDay, through);
  history.planned = planned;
  // Room for every walk day up front: building a year at a time (prepare) then never copies.
  commitColumns(history, reserveColumns(history, days.length), 0);
  history.walk = {
    params, symbolHash, scale, drift, days, noise, cursor: 0, index: 0, lastNoise,
    lastClose: roundToTick(inst, Math.exp(scale)), logFactors: 0, nextAction: 0, suspendedLeft: 0,
    shares: inst.floatShares * shareMultiplier(history, firstDay),
  };
  advanceWalk(inst, history, history.walk, through, midnight);
  return history;
}

/**
 * Continues a history in place up to `through` (generation is forward and per-date seeded, so the
 * result equals a fresh build). A history that ended before listing is rebuilt.
 */
export function extendDailyHistory(inst: SimInstrument, history: DailyHistory, through: string, midnight: Midnight = defaultMidnight(inst)): DailyHistory {
  if (through <= history.through) return history;
  if (history.walk === undefined) return buildDailyHistory(inst, through, midnight);
  const walk = history.walk;
  const lastDay = walk.days.length > 0 ? walk.days[walk.days.length - 1] : history.firstDay;
  if (through > lastDay) {
    const rng = createRng(0);
    for (const day of tradingDays(inst.region, addDays(lastDay, 1), through)) {
      walk.days.push(day);
      walk.noise.push((walk.lastNoise = nextNoise(walk.params, walk.symbolHash, day, walk.lastNoise, rng)));
    }
    // Plans are per year and filtered by date, so a longer plan starts with the shorter one.
    history.planned = planActions(inst, history.firstDay, through);
  }
  history.through = through;
  advanceWalk(inst, history, walk, through, midnight);
  return history;
}

/** The newest `bars` bars with every event and its own copy of the walk, so it extends alone. */
export function tailOf(history: DailyHistory, bars: number): DailyHistory & { truncated: boolean } {
  const from = Math.max(0, history.dates.length - bars);
  const walk = history.walk;
  return {
    ...history,
    dates: history.dates.slice(from), timestamp: history.timestamp.slice(from), open: history.open.slice(from),
    high: history.high.slice(from), low: history.low.slice(from), close: history.close.slice(from),
    volume: history.volume.slice(from), amount: history.amount.slice(from), prevClose: history.prevClose.slice(from),
    events: history.events.slice(),
    walk: walk === undefined ? undefined : {
      ...walk, days: walk.days.slice(walk.cursor), noise: walk.noise.slice(walk.cursor), cursor: 0,
    },
    truncated: from > 0,
  };
}

/** Drops all but the newest `bars` bars of a tail after it was extended. */
export function trimTail(tail: DailyHistory & { truncated: boolean }, bars: number): void {
  const n = tail.dates.length;
  const drop = n - bars;
  if (drop <= 0) return;
  tail.dates.splice(0, drop);
  // Shift within each buffer: a tail keeps its (small) capacity for the next day.
  for (const name of NUMERIC_COLUMNS) tail[name] = tail[name].copyWithin(0, drop, n).subarray(0, bars);
  tail.truncated = true;
}

/** Index of the last bar dated on or before `date`, or -1. */
export function lastIndexOnOrBefore(history: DailyHistory, date: string): number {
  let lo = 0;
  let hi = history.dates.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (history.dates[mid] <= date) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}
