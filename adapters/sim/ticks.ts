// Tick sizes and the price grid. Prices are doubles, but every price the simulator emits is snapped
// to its market's grid and then re-parsed from a fixed number of decimals, so 10.1 is always the
// double nearest 10.1 and never 10.100000000000001.

import type { InstrumentType, Region } from '../../src/domain.ts';

export interface PriceRules {
  region: Region;
  type: InstrumentType;
}

/** HKEX spread table (Part A): a price p in (previous upper, upper] trades in steps of `tick`. */
const HK_SPREADS: readonly { upper: number; tick: number }[] = [
  { upper: 0.25, tick: 0.001 },
  { upper: 0.5, tick: 0.005 },
  { upper: 10, tick: 0.01 },
  { upper: 20, tick: 0.02 },
  { upper: 100, tick: 0.05 },
  { upper: 200, tick: 0.1 },
  { upper: 500, tick: 0.2 },
  { upper: 1000, tick: 0.5 },
  { upper: 2000, tick: 1 },
  { upper: 5000, tick: 2 },
  { upper: 9995, tick: 5 },
];

/** Decimals that every grid price of the market fits in. */
export function priceDecimals(rules: PriceRules): number {
  if (rules.type === 'index') return 2;
  if (rules.region === 'CN') return rules.type === 'etf' ? 3 : 2;
  if (rules.region === 'HK') return 3;
  return 4;
}

/** 10 ** d for the decimals markets use (exact), without a pow per price on hot loops. */
const POW10 = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000];

/** The double nearest to `value` written with `decimals` decimals. */
export function fixDecimals(value: number, decimals: number): number {
  const scale = decimals >= 0 && decimals < POW10.length ? POW10[decimals] : 10 ** decimals;
  return Math.round(value * scale) / scale;
}

function hkBandIndex(price: number, strictlyBelowUpper: boolean): number {
  const eps = 1e-9;
  for (let i = 0; i < HK_SPREADS.length; i++) {
    const upper = HK_SPREADS[i].upper;
    if (strictlyBelowUpper ? price < upper - eps : price <= upper + eps) return i;
  }
  return HK_SPREADS.length - 1;
}

/** The tick of the band a price sits in (what a quote screen shows as the tick size). */
export function tickSizeAt(rules: PriceRules, price: number): number {
  // Index levels are published to two decimals in every market (no HK spread table).
  if (rules.type === 'index') return 0.01;
  if (rules.region === 'CN') return rules.type === 'etf' ? 0.001 : 0.01;
  if (rules.region === 'HK') return HK_SPREADS[hkBandIndex(price, false)].tick;
  return price < 1 ? 0.0001 : 0.01;
}

export type RoundMode = 'nearest' | 'up' | 'down';

/** Snaps a price onto the market's grid (never below the smallest tick). */
export function roundToTick(rules: PriceRules, price: number, mode: RoundMode = 'nearest'): number {
  ONE[0] = price;
  snapAt(rules, ONE, 0, mode);
  return ONE[0];
}

const ONE = new Float64Array(1);

/**
 * roundToTick on `prices[at]`, in place: the doubles go through a Float64Array, so nothing is boxed
 * whether or not V8 inlines the call. The daily walk snaps four prices a bar; past V8's inlining
 * budget each call with a double argument and result allocated heap numbers, half the walk's
 * garbage (BENCHMARKS.md, issue 30 item 3, twelfth session).
 */
export function snapAt(rules: PriceRules, prices: Float64Array, at: number, mode: RoundMode): void {
  // priceDecimals and tickSizeAt inlined: this runs several times per simulated bar.
  const price = prices[at];
  let scale: number;
  let tick: number;
  if (rules.type === 'index') {
    scale = 100;
    tick = 0.01;
  } else if (rules.region === 'CN') {
    const etf = rules.type === 'etf';
    scale = etf ? 1000 : 100;
    tick = etf ? 0.001 : 0.01;
  } else if (rules.region === 'US') {
    scale = 10_000;
    tick = price < 1 ? 0.0001 : 0.01;
  } else {
    scale = 1000;
    tick = HK_SPREADS[hkBandIndex(price, false)].tick;
  }
  const steps = price / tick;
  // The epsilon keeps 1.005/0.01 = 100.49999… from rounding the wrong way.
  const n = mode === 'up' ? Math.ceil(steps - 1e-7) : mode === 'down' ? Math.floor(steps + 1e-7) : Math.floor(steps + 0.5 + 1e-9);
  prices[at] = Math.round(Math.max(1, n) * tick * scale) / scale;
  // Rounding can cross an HK band edge onto a price that is off the new band's grid.
  if (rules.region === 'HK' && rules.type !== 'index' && !onGrid(rules, prices[at])) snapAt(rules, prices, at, mode === 'up' ? 'up' : 'down');
}

/** snapAt, then clamped to [prices[low], prices[high]] (the day's limit prices), in place; `at` is a slot of its own. */
export function snapClampAt(rules: PriceRules, prices: Float64Array, at: number, mode: RoundMode, low: number, high: number): void {
  snapAt(rules, prices, at, mode);
  const snapped = prices[at];
  const floor = prices[low];
  const ceiling = prices[high];
  prices[at] = snapped < floor ? floor : snapped > ceiling ? ceiling : snapped;
}

/** Whether a price is a valid grid price of the market. */
export function onGrid(rules: PriceRules, price: number): boolean {
  const tick = tickSizeAt(rules, price);
  const steps = price / tick;
  return Math.abs(steps - Math.round(steps)) < 1e-6;
}

/** The next grid price above `price` (which is on the grid). */
export function stepUp(rules: PriceRules, price: number): number {
  const tick = rules.region === 'HK' && rules.type !== 'index' ? HK_SPREADS[hkBandIndex(price, true)].tick : tickSizeAt(rules, price);
  return fixDecimals(price + tick, priceDecimals(rules));
}

/** The next grid price below `price`, or undefined at the smallest tick. */
export function stepDown(rules: PriceRules, price: number): number | undefined {
  const decimals = priceDecimals(rules);
  let tick: number;
  if (rules.type === 'index') tick = 0.01;
  else if (rules.region === 'HK') tick = HK_SPREADS[hkBandIndex(price, false)].tick;
  else if (rules.region === 'US') tick = price <= 1 + 1e-9 ? 0.0001 : 0.01;
  else tick = tickSizeAt(rules, price);
  const lower = fixDecimals(price - tick, decimals);
  return lower > 0 ? lower : undefined;
}
