// The intraday model: one trading day's 1m bars, built from that day's daily bar so that they
// aggregate back to it exactly (first open, last close, max high, min low, summed volume and
// amount). The price path is a seeded Brownian bridge from open to close whose excursions beyond
// [min(open, close), max(open, close)] are remapped monotonically onto the day's high and low.
//
// A day's columns are views into one Float64Array (volumes and timestamps are integers far below
// 2^53, so they are exact): one allocation per day, and its byteLength is what a memo holds.
// Scratch arrays are module-level and reused: generation is synchronous, so no call interleaves.

import { minuteBarLabelFor } from '../../src/markets/calendar.ts';
import type { SimInstrument } from './instruments.ts';
import { createRng, hashString, mixSeed3, type Rng } from './random.ts';
import { roundToTick } from './ticks.ts';
import { dateKeyOf, type BarColumns } from './history.ts';

export interface DayBar {
  date: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  amount: number;
}

/** Columnar 1m bars of one day; the columns may share one buffer (read-only for consumers). */
export type MinuteBars = BarColumns;

const MINUTE_MS = 60_000;
const COLUMNS = 7;
const SALT_PATH = hashString('path');
const SALT_WIGGLE = hashString('wiggle');
const SALT_VOLUME = hashString('volume');

/** Seven column views over one buffer of 7·n doubles. */
export function allocMinuteBars(n: number): MinuteBars {
  const buffer = new Float64Array(COLUMNS * n);
  const column = (c: number) => buffer.subarray(c * n, (c + 1) * n);
  return { timestamp: column(0), open: column(1), high: column(2), low: column(3), close: column(4), volume: column(5), amount: column(6) };
}

/** Bytes a day's bars hold (the shared buffer once, however many views). */
export function minuteBarsBytes(bars: MinuteBars): number {
  return bars.timestamp.buffer.byteLength;
}

let scratchSize = 0;
let walkScratch = new Float64Array(0);
let pathScratch = new Float64Array(0);
let weightScratch = new Float64Array(0);
let remScratch = new Float64Array(0);
let sortScratch = new Float64Array(0);
let unitScratch = new Float64Array(0);

function ensureScratch(n: number): void {
  if (n + 1 <= scratchSize) return;
  scratchSize = Math.max(n + 1, 512);
  walkScratch = new Float64Array(scratchSize);
  pathScratch = new Float64Array(scratchSize);
  weightScratch = new Float64Array(scratchSize);
  remScratch = new Float64Array(scratchSize);
  sortScratch = new Float64Array(scratchSize);
  unitScratch = new Float64Array(scratchSize);
}

const rng = createRng(0);

function maxOf(x: Float64Array, n: number): number {
  let m = -Infinity;
  for (let k = 0; k < n; k++) if (x[k] > m) m = x[k];
  return m;
}

function minOf(x: Float64Array, n: number): number {
  let m = Infinity;
  for (let k = 0; k < n; k++) if (x[k] < m) m = x[k];
  return m;
}

/** Bridge path x[0..n] from open to close touching exactly high and low (before tick rounding), into pathScratch. */
function pricePath(bar: DayBar, n: number, r: Rng): Float64Array {
  const walk = walkScratch;
  walk[0] = 0;
  for (let k = 1; k <= n; k++) walk[k] = walk[k - 1] + r.normal();
  const x = pathScratch;
  let spanLow = Infinity;
  let spanHigh = -Infinity;
  for (let k = 0; k <= n; k++) {
    const bridge = walk[k] - (k / n) * walk[n];
    x[k] = bridge;
    if (bridge < spanLow) spanLow = bridge;
    if (bridge > spanHigh) spanHigh = bridge;
  }
  const range = bar.high - bar.low;
  const scale = spanHigh > spanLow ? range / (spanHigh - spanLow) : 0;
  for (let k = 0; k <= n; k++) x[k] = bar.open + ((bar.close - bar.open) * k) / n + scale * x[k];
  x[0] = bar.open;
  x[n] = bar.close;

  const top = Math.max(bar.open, bar.close);
  const bottom = Math.min(bar.open, bar.close);
  // The high and the low are each reached at least once: force an excursion (a tent) when the
  // bridge stays inside the band, the high in one third of the day and the low in another.
  const highFirst = r.next() < 0.5;
  const third = Math.max(1, Math.floor(n / 3));
  const early = r.int(1, third);
  const late = Math.min(n - 1, r.int(n - third, n - 1));
  const width = Math.max(1, Math.floor(n / 20));
  const tent = (at: number, height: number): void => {
    for (let k = Math.max(1, at - width); k <= Math.min(n - 1, at + width); k++) x[k] += height * (1 - Math.abs(k - at) / (width + 1));
  };
  let peak = maxOf(x, n + 1);
  if (bar.high > top && peak <= top) {
    const at = highFirst ? early : late;
    tent(at, top - x[at] + (bar.high - top));
    peak = maxOf(x, n + 1);
  }
  let trough = minOf(x, n + 1);
  if (bar.low < bottom && trough >= bottom) {
    const at = highFirst ? late : early;
    tent(at, bottom - x[at] - (bottom - bar.low));
    trough = minOf(x, n + 1);
  }
  peak = maxOf(x, n + 1);
  for (let k = 1; k < n; k++) {
    if (x[k] > top) x[k] = peak > top ? top + ((x[k] - top) * (bar.high - top)) / (peak - top) : top;
    else if (x[k] < bottom) x[k] = trough < bottom ? bottom - ((bottom - x[k]) * (bottom - bar.low)) / (bottom - trough) : bottom;
  }
  return x;
}

/** The k-th smallest (0-based) of a[0..n), by quickselect; reorders a. */
function kthSmallest(a: Float64Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    // Median of three as the pivot keeps the already-ordered case linear.
    const mid = (lo + hi) >>> 1;
    const x = a[lo];
    const y = a[mid];
    const z = a[hi];
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

/**
 * Largest-remainder split of `total` over weights[0..n) into out[0..n): integers summing exactly
 * to total. The units left after flooring go to the largest remainders, ties to the lower index;
 * instead of sorting every index, the `left`-th largest remainder is found once as a threshold.
 */
function distribute(total: number, weights: ArrayLike<number>, n: number, out: { [k: number]: number }): void {
  let sum = 0;
  for (let k = 0; k < n; k++) sum += weights[k];
  if (sum <= 0 || total <= 0) {
    for (let k = 0; k < n; k++) out[k] = 0;
    return;
  }
  ensureScratch(n);
  const rem = remScratch;
  let floored = 0;
  for (let k = 0; k < n; k++) {
    const quota = (total * weights[k]) / sum;
    const whole = Math.floor(quota);
    out[k] = whole;
    rem[k] = quota - whole;
    floored += whole;
  }
  const left = total - floored;
  if (left <= 0) return;
  if (left >= n) {
    for (let k = 0; k < n; k++) out[k] += 1;
    return;
  }
  const order = sortScratch;
  order.set(rem.subarray(0, n));
  const threshold = kthSmallest(order, n, n - left);
  let given = 0;
  for (let k = 0; k < n; k++) {
    if (rem[k] > threshold) {
      out[k] += 1;
      given++;
    }
  }
  for (let k = 0; k < n && given < left; k++) {
    if (rem[k] === threshold) {
      out[k] += 1;
      given++;
    }
  }
}

/** Splits `total` units over `weights` with largest-remainder rounding: integers summing exactly to total. */
export function largestRemainder(total: number, weights: readonly number[]): number[] {
  const out = new Array<number>(weights.length).fill(0);
  distribute(total, weights, weights.length, out);
  return out;
}

/** The U shape of activity per day length: heavy at the open, light around lunch, rising into the close. */
const shapes = new Map<number, Float64Array>();

function volumeShape(n: number): Float64Array {
  let shape = shapes.get(n);
  if (shape === undefined) {
    shape = new Float64Array(n);
    for (let k = 0; k < n; k++) {
      const t = n === 1 ? 0 : k / (n - 1);
      shape[k] = 0.5 + 2.2 * Math.exp(-t / 0.05) + 1.2 * Math.exp(-(1 - t) / 0.07);
    }
    shapes.set(n, shape);
  }
  return shape;
}

/** Seeded activity weights (the auction folded into the first bar), into weightScratch. */
function volumeWeights(n: number, r: Rng): Float64Array {
  const shape = volumeShape(n);
  const weights = weightScratch;
  for (let k = 0; k < n; k++) weights[k] = shape[k] * Math.exp(0.35 * r.normal());
  weights[0] *= 3;
  weights[n - 1] *= 1.8;
  return weights;
}

/** The full day's 1m bars for `labels` (bar end times from the calendar). */
export function buildMinuteBars(inst: SimInstrument, bar: DayBar, labels: ArrayLike<number>): MinuteBars {
  const n = labels.length;
  ensureScratch(n);
  const symbolHash = hashString(inst.symbol);
  const day = dateKeyOf(bar.date);
  rng.reseed(mixSeed3(symbolHash, day, SALT_PATH));
  const path = pricePath(bar, n, rng);
  // Snap the inner path points onto the grid in place: path[k] is then the price after bar k.
  for (let k = 1; k < n; k++) path[k] = roundToTick(inst, path[k]);
  path[0] = bar.open;
  path[n] = bar.close;
  const out = allocMinuteBars(n);
  const { timestamp, open: opens, high: highs, low: lows, close: closes, volume, amount } = out;
  rng.reseed(mixSeed3(symbolHash, day, SALT_WIGGLE));
  const wiggleScale = (bar.high - bar.low) / Math.sqrt(n) / 3;
  for (let k = 1; k <= n; k++) {
    const open = path[k - 1];
    const close = path[k];
    const up = Math.abs(rng.normal()) * wiggleScale;
    const down = Math.abs(rng.normal()) * wiggleScale;
    const i = k - 1;
    timestamp[i] = labels[i];
    opens[i] = open;
    closes[i] = close;
    highs[i] = Math.min(bar.high, roundToTick(inst, Math.max(open, close) + up, 'up'));
    lows[i] = Math.max(bar.low, roundToTick(inst, Math.min(open, close) - down, 'down'));
  }
  rng.reseed(mixSeed3(symbolHash, day, SALT_VOLUME));
  const lots = unitScratch;
  distribute(Math.round(bar.volume / inst.lotSize), volumeWeights(n, rng), n, lots);
  for (let k = 0; k < n; k++) volume[k] = lots[k] * inst.lotSize;
  // Amount weights reuse the weight scratch: volume weights are consumed.
  const typical = weightScratch;
  for (let k = 0; k < n; k++) typical[k] = volume[k] * (opens[k] + highs[k] + lows[k] + closes[k]);
  distribute(Math.round(bar.amount * 100), typical, n, amount);
  for (let k = 0; k < n; k++) amount[k] = amount[k] / 100;
  return out;
}

/**
 * The bars visible at `now`: complete bars (label ≤ now), then the bar in progress, whose close
 * moves from its open toward the full minute's close and whose volume and amount grow with the
 * elapsed fraction of the minute.
 */
export function barsAt(inst: SimInstrument, full: MinuteBars, now: number): MinuteBars {
  const total = full.timestamp.length;
  let complete = 0;
  while (complete < total && full.timestamp[complete] <= now) complete++;
  const k = complete;
  // The calendar decides which bar holds `now`: (label − 1m, label], the first of a session from its start.
  const current = k < total ? minuteBarLabelFor(inst.region, now, 1) : undefined;
  const partial = k < total && current !== undefined && current > now && full.timestamp[k] === current;
  const out = allocMinuteBars(complete + (partial ? 1 : 0));
  out.timestamp.set(full.timestamp.subarray(0, complete));
  out.open.set(full.open.subarray(0, complete));
  out.high.set(full.high.subarray(0, complete));
  out.low.set(full.low.subarray(0, complete));
  out.close.set(full.close.subarray(0, complete));
  out.volume.set(full.volume.subarray(0, complete));
  out.amount.set(full.amount.subarray(0, complete));
  if (partial) {
    const fraction = (now - (full.timestamp[k] - MINUTE_MS)) / MINUTE_MS;
    const open = full.open[k];
    const close = roundToTick(inst, open + (full.close[k] - open) * fraction);
    const units = full.volume[k] / inst.lotSize;
    const partialUnits = Math.floor(units * fraction);
    out.timestamp[k] = full.timestamp[k];
    out.open[k] = open;
    out.high[k] = Math.max(open, close);
    out.low[k] = Math.min(open, close);
    out.close[k] = close;
    out.volume[k] = partialUnits * inst.lotSize;
    out.amount[k] = units > 0 ? Math.round((full.amount[k] * 100 * partialUnits) / units) / 100 : 0;
  }
  return out;
}

/** The daily bar the given 1m bars make up (undefined when there are none). */
export function aggregateDay(date: string, bars: MinuteBars): DayBar | undefined {
  const n = bars.timestamp.length;
  if (n === 0) return undefined;
  let high = -Infinity;
  let low = Infinity;
  let volume = 0;
  let cents = 0;
  for (let k = 0; k < n; k++) {
    if (bars.high[k] > high) high = bars.high[k];
    if (bars.low[k] < low) low = bars.low[k];
    volume += bars.volume[k];
    cents += Math.round(bars.amount[k] * 100);
  }
  return { date, open: bars.open[0], high, low, close: bars.close[n - 1], volume, amount: cents / 100 };
}
