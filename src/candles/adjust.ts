// Price adjustment (复权) computed locally from raw candles and per-event ex-factors, so that
// `/v1/klines?adjust=…` always agrees with `/v1/klines/ex-factors` whatever the vendor
// (docs/contract.md#ex-factors-and-adjustment, docs/vendors.md#applying-ex-factors). Pure: inputs are never mutated.
//
// Events (t_i, f_i): an event applies to every bar stamped before t_i (00:00 exchange-local of
// the ex-date), so the ex-date bar itself trades at post-event prices and is left alone by
// `forward`. d_i = P_prev,i − P_prev,i / f_i is the cash-equivalent gap of the additive methods.
//
// The ex-rights extensions (`forward_exrights`, `backward_exrights`) apply each event's
// reference-price map P → (P − cash + rights_price·rights) / (1 + bonus + rights) (the exchange's
// 除权参考价 formula, per share), composed over events: an affine map a·P + b per bar, which is
// what Eastmoney's qfq/hfq and the A-share terminals show. An event whose parts are unknown
// (`parts_known: false`) contributes its ratio map P → P / f_i instead.

import type { AdjustType, Candles, ExFactorParts } from '../domain.ts';

export interface AdjustEvent extends ExFactorParts {
  /** 00:00 exchange-local of the ex-date, epoch ms. */
  timestamp: number;
  /** P_prev / ref, per event (not cumulative). */
  ex_factor: number;
  /** P_prev: raw close of the last trading day before the ex-date; only the additive methods use it. */
  prevClose: number;
}

/**
 * Adjusted prices are not tradable prices, so they are not rounded to ticks. Full double
 * precision is kept while computing and every adjusted output is rounded to 6 decimal places:
 * that removes float noise such as 5.000000000000001 (10.50 / 2.10) so equal inputs print
 * equal numbers, and still keeps ~4 significant digits for a price forward-adjusted down to 0.01
 * (vendors publish adjusted prices with 2–3 decimals).
 */
export const ADJUSTED_PRICE_DECIMALS = 6;
const SCALE = 10 ** ADJUSTED_PRICE_DECIMALS;

export function roundAdjusted(price: number): number {
  return Math.round(price * SCALE) / SCALE;
}

function isRatio(adjust: AdjustType): boolean {
  return adjust === 'forward' || adjust === 'backward';
}

export function isExRights(adjust: AdjustType): adjust is 'forward_exrights' | 'backward_exrights' {
  return adjust === 'forward_exrights' || adjust === 'backward_exrights';
}

/** An affine price map P → a·P + b. */
export interface Affine {
  a: number;
  b: number;
}

const finiteAtLeast = (v: number | undefined, min: number): v is number => v !== undefined && Number.isFinite(v) && v >= min;

/**
 * The event's parts when they are known and usable: cash ≥ 0, rights ≥ 0 at a price ≥ 0, and
 * 1 + bonus + rights > 0 (a consolidation has −1 < bonus < 0). undefined → the ratio method.
 */
export function usableParts(e: ExFactorParts): Required<Omit<ExFactorParts, 'parts_known'>> | undefined {
  if (e.parts_known !== true) return undefined;
  const cash = e.cash_dividend ?? 0;
  const bonus = e.bonus_ratio ?? 0;
  const rights = e.rights_ratio ?? 0;
  const price = e.rights_price ?? 0;
  if (!finiteAtLeast(cash, 0) || !finiteAtLeast(rights, 0) || !finiteAtLeast(price, 0) || !Number.isFinite(bonus)) return undefined;
  if (!(1 + bonus + rights > 0)) return undefined;
  return { cash_dividend: cash, bonus_ratio: bonus, rights_ratio: rights, rights_price: price };
}

/**
 * The event's forward map (pre-event price → post-event terms): the ex-rights reference price
 * formula when the parts are known, else P / f.
 */
export function eventMap(e: AdjustEvent): Affine {
  const parts = usableParts(e);
  if (parts === undefined) return { a: 1 / e.ex_factor, b: 0 };
  const shares = 1 + parts.bonus_ratio + parts.rights_ratio;
  return { a: 1 / shares, b: (parts.rights_price * parts.rights_ratio - parts.cash_dividend) / shares };
}

/** The inverse of eventMap (post-event price → pre-event terms), written without divisions by a. */
export function eventInverse(e: AdjustEvent): Affine {
  const parts = usableParts(e);
  if (parts === undefined) return { a: e.ex_factor, b: 0 };
  return { a: 1 + parts.bonus_ratio + parts.rights_ratio, b: parts.cash_dividend - parts.rights_price * parts.rights_ratio };
}

/** outer ∘ inner: P → outer(inner(P)). */
function compose(outer: Affine, inner: Affine): Affine {
  return { a: outer.a * inner.a, b: outer.a * inner.b + outer.b };
}

/**
 * Per-key cumulative affine map of the ex-rights methods, `keys` ascending, `events` normalised.
 * forward_exrights: g_k ∘ … ∘ g_1 over the events after the key (the earliest applies first);
 * backward_exrights: h_1⁻¹ ∘ … ∘ h_j⁻¹ over the events up to the key (the latest undone first).
 */
export function cumulativeMaps(keys: ArrayLike<number>, events: readonly AdjustEvent[], adjust: 'forward_exrights' | 'backward_exrights'): { a: Float64Array; b: Float64Array } {
  const n = keys.length;
  const a = new Float64Array(n);
  const b = new Float64Array(n);
  const m = events.length;
  let acc: Affine = { a: 1, b: 0 };
  if (adjust === 'forward_exrights') {
    let j = m - 1;
    for (let k = n - 1; k >= 0; k--) {
      while (j >= 0 && events[j].timestamp > keys[k]) acc = compose(acc, eventMap(events[j--]));
      a[k] = acc.a;
      b[k] = acc.b;
    }
  } else {
    let j = 0;
    for (let k = 0; k < n; k++) {
      while (j < m && events[j].timestamp <= keys[k]) acc = compose(acc, eventInverse(events[j++]));
      a[k] = acc.a;
      b[k] = acc.b;
    }
  }
  return { a, b };
}

/**
 * Sorted copy of the usable events. A factor that is not finite and positive would poison every
 * earlier (or later) bar, so such events are dropped; the additive methods also need a usable
 * P_prev to compute d_i.
 */
export function normaliseEvents(events: readonly AdjustEvent[], adjust: AdjustType): AdjustEvent[] {
  const needsPrevClose = adjust === 'forward_additive' || adjust === 'backward_additive';
  // The ex-rights methods read an event's parts when it has usable ones, its ratio otherwise.
  const partsSuffice = isExRights(adjust);
  const kept: AdjustEvent[] = [];
  for (const e of events) {
    if (!Number.isFinite(e.timestamp)) continue;
    const ratioUsable = Number.isFinite(e.ex_factor) && e.ex_factor > 0;
    if (!ratioUsable && !(partsSuffice && usableParts(e) !== undefined)) continue;
    if (needsPrevClose && !(Number.isFinite(e.prevClose) && e.prevClose > 0)) continue;
    kept.push(e);
  }
  kept.sort((a, b) => a.timestamp - b.timestamp);
  return kept;
}

/** d_i written as P_prev − ref: same value as P_prev·(1 − 1/f_i) with one rounding fewer (10.50 − 10.00 is exactly 0.5). */
function eventDifference(e: AdjustEvent): number {
  return e.prevClose - e.prevClose / e.ex_factor;
}

/**
 * Per-key cumulative factor for `adjust`, `keys` ascending (bar timestamps, or their trade-date
 * starts). The meaning depends on the method:
 * - forward: divisor Π_{t_i > key} f_i;  backward: multiplier Π_{t_i ≤ key} f_i;
 * - forward_additive: subtrahend Σ_{t_i > key} d_i;  backward_additive: addend Σ_{t_i ≤ key} d_i;
 * - none: 1 everywhere.
 * `events` must already be normalised (sorted, usable). One sweep over bars and events.
 */
export function cumulativeFactors(keys: ArrayLike<number>, events: readonly AdjustEvent[], adjust: AdjustType): Float64Array {
  const n = keys.length;
  const out = new Float64Array(n);
  const m = events.length;
  if (adjust === 'none') {
    out.fill(1);
    return out;
  }
  const ratio = isRatio(adjust);
  let acc = ratio ? 1 : 0;
  if (adjust === 'forward' || adjust === 'forward_additive') {
    // Walking bars newest → oldest, more and more events lie after the bar.
    let j = m - 1;
    for (let k = n - 1; k >= 0; k--) {
      const key = keys[k];
      while (j >= 0 && events[j].timestamp > key) {
        acc = ratio ? acc * events[j].ex_factor : acc + eventDifference(events[j]);
        j--;
      }
      out[k] = acc;
    }
  } else {
    let j = 0;
    for (let k = 0; k < n; k++) {
      const key = keys[k];
      while (j < m && events[j].timestamp <= key) {
        acc = ratio ? acc * events[j].ex_factor : acc + eventDifference(events[j]);
        j++;
      }
      out[k] = acc;
    }
  }
  return out;
}

function applyOne(price: number, factor: number, adjust: AdjustType): number {
  switch (adjust) {
    case 'forward':
      return roundAdjusted(price / factor);
    case 'backward':
      return roundAdjusted(price * factor);
    case 'forward_additive':
      return roundAdjusted(price - factor);
    case 'backward_additive':
      return roundAdjusted(price + factor);
    default:
      return price;
  }
}

function applyColumn(prices: readonly number[], factors: Float64Array, adjust: AdjustType): number[] {
  const n = prices.length;
  const out = new Array<number>(n);
  for (let k = 0; k < n; k++) out[k] = applyOne(prices[k], factors[k], adjust);
  return out;
}

/**
 * Adjust raw candles. open/high/low/close (and prev_close when present) change; timestamp,
 * volume and amount are shared with the input unchanged. `none` returns `raw` itself.
 *
 * Events may lie outside the bars' range: forward needs every later event, backward every
 * earlier one, so pass the symbol's full event list.
 *
 * `tradeDateStart` maps a bar timestamp to 00:00 local of its trade date. Without it the bar's own
 * timestamp is compared with t_i, which is already right for daily bars (stamped 00:00 of their
 * date) and minute bars labelled inside their trade date (09:31 on the ex-date is after 00:00);
 * with it, a bar labelled before midnight but belonging to the next trade date also gets that
 * date's factor.
 *
 * prev_close: the raw prev_close of bar k is the raw close of the bar before it, so for k ≥ 1 it is
 * adjusted with bar k−1's factor (making it equal to adjusted close[k−1]); prev_close[0] is taken
 * as the close of the previous trade date (every event from bar 0's trade date on applies to it).
 * That is exact for daily bars and for a first minute bar that opens its day; the pipeline
 * (pipeline.ts) never relies on it beyond one extra leading bar and rebuilds the column with
 * withPrevClose, which is the authoritative rule "prev_close = previous bar's close in the same
 * adjustment".
 */
export function adjustCandles(
  raw: Candles,
  events: readonly AdjustEvent[],
  adjust: AdjustType,
  tradeDateStart?: (ts: number) => number,
): Candles {
  if (adjust === 'none') return raw;
  const n = raw.timestamp.length;
  let keys: ArrayLike<number> = raw.timestamp;
  if (tradeDateStart !== undefined) {
    const dayKeys = new Float64Array(n);
    for (let k = 0; k < n; k++) dayKeys[k] = tradeDateStart(raw.timestamp[k]);
    keys = dayKeys;
  }
  const usable = normaliseEvents(events, adjust);
  if (isExRights(adjust)) return adjustAffine(raw, keys, usable, adjust, tradeDateStart !== undefined);
  const factors = cumulativeFactors(keys, usable, adjust);
  const out: Candles = {
    timestamp: raw.timestamp,
    open: applyColumn(raw.open, factors, adjust),
    high: applyColumn(raw.high, factors, adjust),
    low: applyColumn(raw.low, factors, adjust),
    close: applyColumn(raw.close, factors, adjust),
    volume: raw.volume,
    amount: raw.amount,
  };
  // Futures columns ride along unchanged: a futures contract has no ex-rights events.
  if (raw.open_interest !== undefined) out.open_interest = raw.open_interest;
  if (raw.settlement_price !== undefined) out.settlement_price = raw.settlement_price;
  if (raw.prev_close !== undefined) {
    const prev = new Array<number>(n);
    if (n > 0) {
      // One ms before the first bar's trade date: an event dated on that trade date counts.
      const firstDay = tradeDateStart !== undefined ? keys[0] : raw.timestamp[0];
      const before = cumulativeFactors([firstDay - 1], usable, adjust)[0];
      prev[0] = applyOne(raw.prev_close[0], before, adjust);
    }
    for (let k = 1; k < n; k++) prev[k] = applyOne(raw.prev_close[k], factors[k - 1], adjust);
    out.prev_close = prev;
  }
  return out;
}

function affineColumn(prices: readonly number[], maps: { a: Float64Array; b: Float64Array }): number[] {
  const n = prices.length;
  const out = new Array<number>(n);
  for (let k = 0; k < n; k++) out[k] = roundAdjusted(maps.a[k] * prices[k] + maps.b[k]);
  return out;
}

/** adjustCandles for the ex-rights methods: the same contract, with per-bar affine maps. */
function adjustAffine(
  raw: Candles, keys: ArrayLike<number>, usable: AdjustEvent[], adjust: 'forward_exrights' | 'backward_exrights', byTradeDate: boolean,
): Candles {
  const n = raw.timestamp.length;
  const maps = cumulativeMaps(keys, usable, adjust);
  const out: Candles = {
    timestamp: raw.timestamp,
    open: affineColumn(raw.open, maps),
    high: affineColumn(raw.high, maps),
    low: affineColumn(raw.low, maps),
    close: affineColumn(raw.close, maps),
    volume: raw.volume,
    amount: raw.amount,
  };
  // Futures columns ride along unchanged: a futures contract has no ex-rights events.
  if (raw.open_interest !== undefined) out.open_interest = raw.open_interest;
  if (raw.settlement_price !== undefined) out.settlement_price = raw.settlement_price;
  if (raw.prev_close !== undefined) {
    const prev = new Array<number>(n);
    if (n > 0) {
      const firstDay = byTradeDate ? keys[0] : raw.timestamp[0];
      const before = cumulativeMaps([firstDay - 1], usable, adjust);
      prev[0] = roundAdjusted(before.a[0] * raw.prev_close[0] + before.b[0]);
    }
    for (let k = 1; k < n; k++) prev[k] = roundAdjusted(maps.a[k - 1] * raw.prev_close[k] + maps.b[k - 1]);
    out.prev_close = prev;
  }
  return out;
}
