// The shape of a simulated daily history and of the walk state it carries, with the column
// plumbing and date keys that daily.ts (which sets a walk up and extends a history) and walk.ts
// (one trading day's step) both use. Kept apart so those two import in one direction only:
// daily.ts → walk.ts → history.ts.

import type { PlannedAction } from './actions.ts';

export interface ExEvent {
  date: string;
  /** 00:00 exchange-local of the ex-date. */
  timestamp: number;
  /** Raw close of the last bar before the ex-date. */
  pPrev: number;
  cash: number;
  shareRatio: number;
  /** Ex-rights reference price, unrounded: ex_factor = pPrev / ref (to the last bit of a double). */
  ref: number;
  /** ref on the tick grid: the ex-date's prev_close and limit base, as an exchange publishes it. */
  base: number;
  factor: number;
}

/**
 * The OHLCV columns of a run of bars as typed arrays (daily histories and minute days alike). In a
 * DailyHistory each is exactly dates.length long: views over buffers that may hold spare capacity
 * for the days the walk will append (volumes and timestamps are exact integers).
 */
export type BarColumns = Record<'timestamp' | 'open' | 'high' | 'low' | 'close' | 'volume' | 'amount', Float64Array>;

export interface DailyHistory extends BarColumns {
  symbol: string;
  /** First trading day of the history (the listing day, or the first day from HISTORY_START). */
  firstDay: string;
  /** Last date the walk covers; bars stop earlier only when the instrument was suspended. */
  through: string;
  dates: string[];
  /** Previous raw close; on an ex-date the reference price; on the first day the issue price. */
  prevClose: Float64Array;
  events: ExEvent[];
  /** Planned actions through max(through, ANCHOR_DATE), for share counts at any date. */
  planned: PlannedAction[];
  /** Where the walk stands, so the history can be extended day by day (absent before listing). */
  walk?: WalkState;
}

/** 00:00 exchange-local of a date; `key` is dateKeyOf(date), for memos keyed by number. */
export type Midnight = (date: string, key: number) => number;

/** The numeric columns of a history, in one fixed order. */
export const NUMERIC_COLUMNS = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prevClose'] as const;
export type NumericColumn = (typeof NUMERIC_COLUMNS)[number];

/**
 * Makes room for `extra` more bars and returns full-capacity views to write into. Growth is
 * exact when `extra` is the last need, else by an eighth, so a daily extension rarely copies.
 */
export function reserveColumns(history: DailyHistory, extra: number): Record<NumericColumn, Float64Array> {
  const n = history.dates.length;
  const need = n + extra;
  const room = (view: Float64Array): Float64Array => {
    const capacity = view.buffer.byteLength / 8;
    if (need <= capacity && view.byteOffset === 0) return new Float64Array(view.buffer, 0, capacity);
    const grown = new Float64Array(Math.max(need, n + (n >> 3) + 16));
    grown.set(view.subarray(0, n));
    return grown;
  };
  return {
    timestamp: room(history.timestamp), open: room(history.open), high: room(history.high), low: room(history.low),
    close: room(history.close), volume: room(history.volume), amount: room(history.amount), prevClose: room(history.prevClose),
  };
}

/** Points the history's columns at the first `n` values of `full`. */
export function commitColumns(history: DailyHistory, full: Record<NumericColumn, Float64Array>, n: number): void {
  history.timestamp = full.timestamp.subarray(0, n);
  history.open = full.open.subarray(0, n);
  history.high = full.high.subarray(0, n);
  history.low = full.low.subarray(0, n);
  history.close = full.close.subarray(0, n);
  history.volume = full.volume.subarray(0, n);
  history.amount = full.amount.subarray(0, n);
  history.prevClose = full.prevClose.subarray(0, n);
}

export interface WalkParams {
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

/** Everything the walk carries from one day to the next. Plain data: a tail copies it to extend alone. */
export interface WalkState {
  params: WalkParams;
  symbolHash: number;
  /** log issue price and trend per day of the latent path scale + drift·(index + 1) + noise. */
  scale: number;
  drift: number;
  /** Trading days with their latent noise; days[cursor] is the next day to generate. */
  days: string[];
  noise: number[];
  cursor: number;
  /** Trading days generated since the first day (suspended days included). */
  index: number;
  /** Noise of the last entry of `days`, to continue the OU process past it. */
  lastNoise: number;
  lastClose: number;
  /** Sum of log ex-factors realised so far. */
  logFactors: number;
  /** Index into the history's plan of the next action. */
  nextAction: number;
  suspendedLeft: number;
  /** Float shares on the current day (grows with bonus issues and splits). */
  shares: number;
}

/** 'YYYY-MM-DD' → YYYYMMDD: a per-date seed part and memo key that needs no calendar. */
export function dateKeyOf(date: string): number {
  let key = 0;
  for (let i = 0; i < 10; i++) if (i !== 4 && i !== 7) key = key * 10 + (date.charCodeAt(i) - 48);
  return key;
}
