// The intraday model: one trading day's 1m bars, built from that day's daily bar so that they
// aggregate back to it exactly (first open, last close, max high, min low, summed volume and
// amount). The price path is a seeded Brownian bridge from open to close whose excursions beyond
// [min(open, close), max(open, close)] are remapped monotonically onto the day's high and low.

import { minuteBarLabelFor } from '../../src/markets/calendar.ts';
import type { SimInstrument } from './instruments.ts';
import { rngFor } from './random.ts';
import { roundToTick } from './ticks.ts';
import { dateKey } from './daily.ts';

export interface DayBar {
  date: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  amount: number;
}

/** Columnar 1m bars of one day. */
export interface MinuteBars {
  timestamp: number[];
  open: number[];
  high: number[];
  low: number[];
  close: number[];
  volume: number[];
  amount: number[];
}

const MINUTE_MS = 60_000;

/** Bridge path x[0..n] from open to close touching exactly high and low (before tick rounding). */
function pricePath(bar: DayBar, n: number, seed: (string | number)[]): number[] {
  const rng = rngFor(...seed, 'path');
  const walk = new Array<number>(n + 1);
  walk[0] = 0;
  for (let k = 1; k <= n; k++) walk[k] = walk[k - 1] + rng.normal();
  const x = new Array<number>(n + 1);
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
  const highFirst = rng.next() < 0.5;
  const third = Math.max(1, Math.floor(n / 3));
  const early = rng.int(1, third);
  const late = Math.min(n - 1, rng.int(n - third, n - 1));
  const width = Math.max(1, Math.floor(n / 20));
  const tent = (at: number, height: number): void => {
    for (let k = Math.max(1, at - width); k <= Math.min(n - 1, at + width); k++) x[k] += height * (1 - Math.abs(k - at) / (width + 1));
  };
  let peak = Math.max(...x);
  if (bar.high > top && peak <= top) {
    const at = highFirst ? early : late;
    tent(at, top - x[at] + (bar.high - top));
    peak = Math.max(...x);
  }
  let trough = Math.min(...x);
  if (bar.low < bottom && trough >= bottom) {
    const at = highFirst ? late : early;
    tent(at, bottom - x[at] - (bottom - bar.low));
    trough = Math.min(...x);
  }
  peak = Math.max(...x);
  for (let k = 1; k < n; k++) {
    if (x[k] > top) x[k] = peak > top ? top + ((x[k] - top) * (bar.high - top)) / (peak - top) : top;
    else if (x[k] < bottom) x[k] = trough < bottom ? bottom - ((bottom - x[k]) * (bottom - bar.low)) / (bottom - trough) : bottom;
  }
  return x;
}

/** Splits `total` units over `weights` with largest-remainder rounding: integers summing exactly to total. */
export function largestRemainder(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum <= 0 || total <= 0) return weights.map(() => 0);
  const quotas = weights.map((w) => (total * w) / sum);
  const out = quotas.map(Math.floor);
  let left = total - out.reduce((a, b) => a + b, 0);
  const order = quotas.map((q, i) => i).sort((a, b) => quotas[b] - out[b] - (quotas[a] - out[a]) || a - b);
  for (let j = 0; left > 0 && j < order.length; j++, left--) out[order[j]] += 1;
  return out;
}

/** U-shaped activity: heavy at the open (auction folded in), light around lunch, rising into the close. */
function volumeWeights(n: number, seed: (string | number)[]): number[] {
  const rng = rngFor(...seed, 'volume');
  const weights = new Array<number>(n);
  for (let k = 0; k < n; k++) {
    const t = n === 1 ? 0 : k / (n - 1);
    const shape = 0.5 + 2.2 * Math.exp(-t / 0.05) + 1.2 * Math.exp(-(1 - t) / 0.07);
    weights[k] = shape * Math.exp(0.35 * rng.normal());
  }
  weights[0] *= 3;
  weights[n - 1] *= 1.8;
  return weights;
}

/** The full day's 1m bars for `labels` (bar end times from the calendar). */
export function buildMinuteBars(inst: SimInstrument, bar: DayBar, labels: readonly number[]): MinuteBars {
  const n = labels.length;
  const seed = [inst.symbol, dateKey(bar.date)];
  const path = pricePath(bar, n, seed);
  const prices = path.map((p, k) => (k === 0 ? bar.open : k === n ? bar.close : roundToTick(inst, p)));
  const wiggleRng = rngFor(...seed, 'wiggle');
  const wiggleScale = (bar.high - bar.low) / Math.sqrt(n) / 3;
  const out: MinuteBars = { timestamp: [...labels], open: [], high: [], low: [], close: [], volume: [], amount: [] };
  for (let k = 1; k <= n; k++) {
    const open = prices[k - 1];
    const close = prices[k];
    const up = Math.abs(wiggleRng.normal()) * wiggleScale;
    const down = Math.abs(wiggleRng.normal()) * wiggleScale;
    out.open.push(open);
    out.close.push(close);
    out.high.push(Math.min(bar.high, roundToTick(inst, Math.max(open, close) + up, 'up')));
    out.low.push(Math.max(bar.low, roundToTick(inst, Math.min(open, close) - down, 'down')));
  }
  const lots = largestRemainder(Math.round(bar.volume / inst.lotSize), volumeWeights(n, seed));
  for (const l of lots) out.volume.push(l * inst.lotSize);
  const typical = out.volume.map((v, k) => v * (out.open[k] + out.high[k] + out.low[k] + out.close[k]));
  for (const cents of largestRemainder(Math.round(bar.amount * 100), typical)) out.amount.push(cents / 100);
  return out;
}

/**
 * The bars visible at `now`: complete bars (label ≤ now), then the bar in progress, whose close
 * moves from its open toward the full minute's close and whose volume and amount grow with the
 * elapsed fraction of the minute.
 */
export function barsAt(inst: SimInstrument, full: MinuteBars, now: number): MinuteBars {
  let complete = 0;
  while (complete < full.timestamp.length && full.timestamp[complete] <= now) complete++;
  const out: MinuteBars = {
    timestamp: full.timestamp.slice(0, complete), open: full.open.slice(0, complete), high: full.high.slice(0, complete),
    low: full.low.slice(0, complete), close: full.close.slice(0, complete), volume: full.volume.slice(0, complete),
    amount: full.amount.slice(0, complete),
  };
  const k = complete;
  // The calendar decides which bar holds `now`: (label − 1m, label], the first of a session from its start.
  const current = minuteBarLabelFor(inst.region, now, 1);
  if (k < full.timestamp.length && current !== undefined && current > now && full.timestamp[k] === current) {
    const fraction = (now - (full.timestamp[k] - MINUTE_MS)) / MINUTE_MS;
    const open = full.open[k];
    const close = roundToTick(inst, open + (full.close[k] - open) * fraction);
    const units = full.volume[k] / inst.lotSize;
    const partialUnits = Math.floor(units * fraction);
    out.timestamp.push(full.timestamp[k]);
    out.open.push(open);
    out.high.push(Math.max(open, close));
    out.low.push(Math.min(open, close));
    out.close.push(close);
    out.volume.push(partialUnits * inst.lotSize);
    out.amount.push(units > 0 ? Math.round((full.amount[k] * 100 * partialUnits) / units) / 100 : 0);
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
