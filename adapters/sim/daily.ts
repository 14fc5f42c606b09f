// The daily model: one raw (unadjusted) daily bar per trading day from listing, generated forward
// in time so every ex-date knows its P_prev.
//
// Prices follow a latent log path a(t) = trend + Ornstein–Uhlenbeck noise + rare jumps, drawn from
// a per-(symbol, date) seed. The raw close targets exp(c + a(t) − F(t)), where F(t) sums the log
// ex-factors realised so far (so raw prices drop on ex-dates and adjusted prices do not), and c is
// one constant per instrument that puts the planned path at `price` on ANCHOR_DATE. c depends only
// on the instrument and fixed dates, so a date's bar is the same whatever the window or the clock.
// Closes are snapped to the tick grid and clamped to A-share limits; a close that would pass a
// limit sits exactly on it, and the target pulls the next days along (consecutive limit days).

import { localMidnight, tradingDaysBetween } from '../../src/markets/calendar.ts';
import { onOrAfterTradingDay, planActions, realiseAction, type PlannedAction } from './actions.ts';
import type { SimInstrument } from './instruments.ts';
import { limitPercent, limitPrices } from './limits.ts';
import { createRng, hashString, mixSeed, rngFor } from './random.ts';
import { roundToTick } from './ticks.ts';

/** Histories start here when the instrument listed earlier (older calendars are not modelled). */
export const HISTORY_START = '2000-01-04';
/** The date on which the planned path equals the instrument's `price` (a late-2026 level). */
export const ANCHOR_DATE = '2026-11-02';

const TRADING_DAYS_PER_YEAR = 250;
/** Mean reversion of the noise around the trend, per day: a half-life of about two years. */
const REVERSION = 1 / 750;

export interface ExEvent {
  date: string;
  /** 00:00 exchange-local of the ex-date. */
  timestamp: number;
  /** Raw close of the last bar before the ex-date. */
  pPrev: number;
  cash: number;
  shareRatio: number;
  /** Ex-rights reference price, unrounded: ex_factor = pPrev / ref exactly. */
  ref: number;
  /** ref on the tick grid: the ex-date's prev_close and limit base, as an exchange publishes it. */
  base: number;
  factor: number;
}

export interface DailyHistory {
  symbol: string;
  /** First trading day of the history (the listing day, or the first day from HISTORY_START). */
  firstDay: string;
  /** Last date the walk covers; bars stop earlier only when the instrument was suspended. */
  through: string;
  dates: string[];
  timestamp: number[];
  open: number[];
  high: number[];
  low: number[];
  close: number[];
  volume: number[];
  amount: number[];
  /** Previous raw close; on an ex-date the reference price; on the first day the issue price. */
  prevClose: number[];
  events: ExEvent[];
  /** Planned actions through max(through, ANCHOR_DATE), for share counts at any date. */
  planned: PlannedAction[];
}

interface WalkParams {
  sigma: number;
  /** Trend per day for instruments listed after ANCHOR_DATE (others are calibrated). */
  drift: number;
  /** log(issue price / price) the calibrated trend aims for over a long history. */
  startLog: number;
  jumpChance: number;
  jumpScale: number;
  turnover: number;
  suspendable: boolean;
}

function walkParams(inst: SimInstrument): WalkParams {
  const rng = rngFor(inst.symbol, 'params');
  const growth = rng.range(0.02, 0.12);
  const startLog = rng.range(-1.3, 0.4);
  const turnoverLow = inst.region === 'CN' ? 0.003 : 0.002;
  const turnoverHigh = inst.region === 'CN' ? 0.03 : 0.012;
  const turnover = turnoverLow * (turnoverHigh / turnoverLow) ** rng.next();
  const suspendRoll = rng.next();
  const pct = limitPercent(inst);
  const etf = inst.type === 'etf';
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

/** 'YYYY-MM-DD' → YYYYMMDD, a per-date seed part that needs no calendar. */
export function dateKey(date: string): number {
  let key = 0;
  for (let i = 0; i < 10; i++) if (i !== 4 && i !== 7) key = key * 10 + (date.charCodeAt(i) - 48);
  return key;
}

const SALT_WALK = hashString('walk');
const SALT_BAR = hashString('bar');

/** Zero-mean part of the latent log path over `days` (OU noise plus jumps); 0 before day 0. */
function noisePath(inst: SimInstrument, params: WalkParams, days: readonly string[]): Float64Array {
  const out = new Float64Array(days.length);
  const symbolHash = hashString(inst.symbol);
  const rng = createRng(0);
  let noise = 0;
  for (let i = 0; i < days.length; i++) {
    rng.reseed(mixSeed(symbolHash, dateKey(days[i]), SALT_WALK));
    const shock = rng.normal();
    const jumpRoll = rng.next();
    const jumpSize = rng.range(0.6, 1.6) * params.jumpScale * (rng.next() < 0.5 ? -1 : 1);
    noise = noise * (1 - REVERSION) + params.sigma * shock + (jumpRoll < params.jumpChance ? jumpSize : 0);
    out[i] = noise;
  }
  return out;
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
    symbol: inst.symbol, firstDay, through, dates: [], timestamp: [], open: [], high: [], low: [], close: [],
    volume: [], amount: [], prevClose: [], events: [], planned: [],
  };
}

function clamp(value: number, low: number, high: number): number {
  return value < low ? low : value > high ? high : value;
}

/** The instrument's raw daily bars and realised ex-events for every trading day up to `through`. */
export function buildDailyHistory(
  inst: SimInstrument,
  through: string,
  midnight: (date: string) => number = (date) => localMidnight(inst.region, date),
): DailyHistory {
  const region = inst.region;
  const firstDay = onOrAfterTradingDay(region, inst.listingDate > HISTORY_START ? inst.listingDate : HISTORY_START);
  if (through < firstDay) return emptyHistory(inst, firstDay, through);
  const walkEnd = through > ANCHOR_DATE ? through : ANCHOR_DATE;
  const days = tradingDaysBetween(region, firstDay, walkEnd);
  const params = walkParams(inst);
  const noise = noisePath(inst, params, days);
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
  let shares = inst.floatShares * shareMultiplier(history, firstDay);
  let lastClose = roundToTick(inst, Math.exp(scale));
  let logFactors = 0;
  let nextAction = 0;
  let suspendedLeft = 0;
  const symbolHash = hashString(inst.symbol);
  const rng = createRng(0);
  for (let i = 0; i < days.length && days[i] <= through; i++) {
    const date = days[i];
    rng.reseed(mixSeed(symbolHash, dateKey(date), SALT_BAR));
    // Fixed draw order: every draw happens whether or not it is used.
    const gapNoise = rng.normal();
    const gapShare = rng.next();
    const highExt = Math.abs(rng.normal());
    const lowExt = Math.abs(rng.normal());
    const lockedRoll = rng.next();
    const volumeNoise = rng.normal();
    const priceNoise = rng.normal();
    const suspendRoll = rng.next();
    const suspendLength = rng.int(1, 3);

    let base = lastClose;
    const action = planned[nextAction];
    const exDate = action !== undefined && action.date === date;
    if (exDate) {
      nextAction++;
      const realised = realiseAction(region, lastClose, action);
      base = roundToTick(inst, realised.ref);
      logFactors += Math.log(realised.factor);
      shares *= 1 + action.shareRatio;
      history.events.push({
        date, timestamp: midnight(date), pPrev: lastClose, cash: realised.cash,
        shareRatio: action.shareRatio, ref: realised.ref, base, factor: realised.factor,
      });
    } else if (i > 0 && params.suspendable) {
      if (suspendedLeft > 0) {
        suspendedLeft--;
        continue;
      }
      if (suspendRoll < 1 / 1200) {
        suspendedLeft = suspendLength - 1;
        continue;
      }
    }
    if (exDate) suspendedLeft = 0;

    const limits = limitPrices(inst, base);
    const floor = limits?.down ?? 0;
    const ceiling = limits?.up ?? Infinity;
    const target = scale + drift * (i + 1) + noise[i] - logFactors;
    const close = clamp(roundToTick(inst, Math.exp(target)), floor, ceiling);
    const move = Math.log(close / base);
    let open = clamp(roundToTick(inst, base * Math.exp(move * gapShare * 0.4 + 0.3 * params.sigma * gapNoise)), floor, ceiling);
    let high = clamp(roundToTick(inst, Math.max(open, close) * Math.exp(params.sigma * (0.1 + 0.6 * highExt)), 'up'), floor, ceiling);
    let low = clamp(roundToTick(inst, Math.min(open, close) * Math.exp(-params.sigma * (0.1 + 0.6 * lowExt)), 'down'), floor, ceiling);
    let activity = 1 + Math.min(3, Math.abs(move) / (2 * params.sigma));
    if (close === ceiling && lockedRoll < 0.25) {
      // 一字涨停: sealed at the limit from the open, little volume changes hands.
      open = high = low = close;
      activity = 0.15;
    }

    const lots = Math.max(1, Math.round((params.turnover * activity * Math.exp(0.35 * volumeNoise) * shares) / inst.lotSize));
    const volume = lots * inst.lotSize;
    const typical = clamp(((open + high + low + close) / 4) * Math.exp(0.001 * priceNoise), low, high);

    history.dates.push(date);
    history.timestamp.push(midnight(date));
    history.open.push(open);
    history.high.push(high);
    history.low.push(low);
    history.close.push(close);
    history.volume.push(volume);
    history.amount.push(Math.round(volume * typical * 100) / 100);
    history.prevClose.push(base);
    lastClose = close;
  }
  return history;
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
