// The sim's China futures: a few products per exchange with their real sessions (night sessions
// belonging to the next trading day), contracts listing and expiring by their exchange's rules, and
// deterministic prices: the same contract, day and instant give the same answer on every run.
//
// A trading day's minute bars run from near the previous day's level towards the day's modelled
// level (a Brownian bridge inside the price limits, seeded by contract and date); the day's
// settlement is the volume-weighted average of its bars (SHFE/DCE/ZCE/INE/GFEX settle on the day's
// VWAP), and each minute bar carries the running VWAP as its provisional settlement. Open interest
// moves from the previous day's close to the day's modelled level. Volume is in contracts; amount
// is price × volume × multiplier.

import type { Candles, Instrument, Quote, SymbolRef } from '../../src/domain.ts';
import {
  latestStartedSessionDay, localMidnight, minuteBarLabels, prevTradingDay, sessionState, tradingDaysBetween, type CalendarKey,
} from '../../src/markets/calendar.ts';
import { contractYear, futuresCalendarKey, futuresProduct, isFuturesExchange, parseContract, type FuturesProduct } from '../../src/markets/futures.ts';
import { contractFor, liveContracts, mainContract, type Contract } from '../../src/markets/futures-contracts.ts';
import { onTick } from '../common/futures.ts';
import { createRng, seedOf } from './random.ts';

/** Products the sim lists, with a price level (yuan per quoted unit) and a typical open interest. */
const SIM_PRODUCTS: Readonly<Record<string, { level: number; openInterest: number }>> = {
  au: { level: 780, openInterest: 180_000 },
  cu: { level: 78_000, openInterest: 190_000 },
  rb: { level: 3_200, openInterest: 1_900_000 },
  sc: { level: 480, openInterest: 30_000 },
  i: { level: 780, openInterest: 700_000 },
  m: { level: 2_900, openInterest: 1_500_000 },
  jd: { level: 3_500, openInterest: 200_000 },
  sr: { level: 5_600, openInterest: 400_000 },
  ma: { level: 2_400, openInterest: 900_000 },
  if: { level: 3_900, openInterest: 130_000 },
  t: { level: 108, openInterest: 180_000 },
  si: { level: 8_800, openInterest: 250_000 },
};

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

export interface SimContract {
  ref: SymbolRef;
  product: FuturesProduct;
  contract: Contract;
  key: CalendarKey;
  level: number;
  openInterest: number;
}

/** A contract the sim lists on `today` or listed before (expired ones keep their history); undefined otherwise. */
export function simContract(ref: SymbolRef, today: string): SimContract | undefined {
  if (!isFuturesExchange(ref.exchange)) return undefined;
  const parsed = parseContract(ref.code, ref.exchange);
  if (parsed === undefined) return undefined;
  const sim = SIM_PRODUCTS[parsed.product.product.toLowerCase()];
  if (sim === undefined) return undefined;
  const contract = contractFor(parsed.product, contractYear(parsed, Number(today.slice(0, 4))), parsed.month);
  const months = parsed.product.months;
  if (months !== 'cffex_index' && !months.includes(parsed.month)) return undefined;
  if (contract.listingDate > today) return undefined;
  return { ref, product: parsed.product, contract, key: futuresCalendarKey(parsed.product), level: sim.level, openInterest: sim.openInterest };
}

/** Live contracts of every sim product on `today`, by exchange then product. */
export function simFuturesSymbols(today: string): string[] {
  const out: string[] = [];
  for (const code of Object.keys(SIM_PRODUCTS)) {
    const product = futuresProduct(code) as FuturesProduct;
    for (const c of liveContracts(product, today)) out.push(`${c.code}.${product.exchange}`);
  }
  return out;
}


/** The modelled level of a contract on a trading day (slow waves, a small term structure). */
function modelLevel(c: SimContract, date: string): number {
  const t = Date.parse(`${date}T00:00:00Z`) / DAY_MS;
  const phase = seedOf(c.product.product) / 2 ** 32;
  const term = 1 + 0.004 * ((c.contract.year * 12 + c.contract.month) % 5 - 2);
  return c.level * term * Math.exp(0.1 * Math.sin(t / 53 + phase * 6.28) + 0.04 * Math.sin(t / 17 + phase * 12.5) + 0.015 * Math.sin(t / 5.3 + phase * 3.1));
}

function modelOpenInterest(c: SimContract, date: string): number {
  const t = Date.parse(`${date}T00:00:00Z`) / DAY_MS;
  const life = Math.max(0, Math.min(1, (t - Date.parse(`${c.contract.listingDate}T00:00:00Z`) / DAY_MS) / 120));
  const fade = Math.max(0.05, Math.min(1, (Date.parse(`${c.contract.lastTradeDate}T00:00:00Z`) / DAY_MS - t) / 30));
  return Math.round(c.openInterest * (0.05 + 0.95 * life) * fade * (1 + 0.1 * Math.sin(t / 7)));
}

/** One trading day's full minute bars. */
interface DayBars {
  date: string;
  timestamp: number[];
  open: number[];
  high: number[];
  low: number[];
  close: number[];
  volume: number[];
  amount: number[];
  openInterest: number[];
  /** Running VWAP through each bar (the last one is the day's settlement). */
  settlement: number[];
  prevClose: number;
}

const dayMemo = new Map<string, DayBars>();
const DAY_MEMO_MAX = 512;

/** A day's closing price: the modelled level with the day's own noise (each day's bars end on it). */
function closeOf(c: SimContract, date: string): number {
  const rng = createRng(seedOf(c.ref.symbol, date, 'futures-close'));
  return onTick(modelLevel(c, date) * (1 + 0.004 * rng.normal()), c.product.tickSize);
}

/**
 * The previous trading day's close and open interest (from the model, so a day's bars never need
 * the day before's) and its settlement (the VWAP of its bars; the modelled close before listing).
 */
function previousOf(c: SimContract, date: string): { settlement: number; close: number; openInterest: number } {
  const before = prevTradingDay('CN', date);
  const close = closeOf(c, before);
  if (before < c.contract.listingDate) return { settlement: close, close, openInterest: 0 };
  const bars = dayBars(c, before);
  return { settlement: bars.settlement[bars.settlement.length - 1], close, openInterest: modelOpenInterest(c, before) };
}

/** The anchor a day's bars start from: the previous close, and limits around it. */
function anchorOf(c: SimContract, date: string): { close: number; openInterest: number } {
  const before = prevTradingDay('CN', date);
  return { close: closeOf(c, before), openInterest: before < c.contract.listingDate ? 0 : modelOpenInterest(c, before) };
}

function dayBars(c: SimContract, date: string): DayBars {
  const memoKey = `${c.ref.symbol}|${date}`;
  const hit = dayMemo.get(memoKey);
  if (hit !== undefined) return hit;
  const labels = minuteBarLabels(c.key, date, 1);
  const n = labels.length;
  const prev = anchorOf(c, date);
  const tick = c.product.tickSize;
  const up = onTick(prev.close * (1 + c.product.limitRatio), tick);
  const down = onTick(prev.close * (1 - c.product.limitRatio), tick);
  const rng = createRng(seedOf(c.ref.symbol, date, 'futures-day'));
  const target = closeOf(c, date);
  const sigma = prev.close * 0.0009;
  const walk = new Array<number>(n + 1);
  walk[0] = 0;
  for (let i = 1; i <= n; i++) walk[i] = walk[i - 1] + rng.normal();
  const oiEnd = modelOpenInterest(c, date);
  const bars: DayBars = {
    date, timestamp: labels, open: [], high: [], low: [], close: [], volume: [], amount: [], openInterest: [], settlement: [],
    prevClose: prev.close,
  };
  const clamp = (p: number) => Math.min(up, Math.max(down, p));
  let last = clamp(onTick(prev.close * (1 + 0.002 * rng.normal()), tick));
  let turnover = 0;
  let contracts = 0;
  for (let i = 1; i <= n; i++) {
    const f = i / n;
    const close = clamp(onTick(prev.close + (target - prev.close) * f + sigma * (walk[i] - f * walk[n]), tick));
    const open = last;
    const high = clamp(onTick(Math.max(open, close) + tick * rng.int(0, 2), tick));
    const low = clamp(onTick(Math.min(open, close) - tick * rng.int(0, 2), tick));
    const volume = 20 + rng.int(0, Math.max(40, Math.round(c.openInterest / 4000)));
    const price = (open + high + low + close) / 4;
    turnover += price * volume;
    contracts += volume;
    bars.open.push(open);
    bars.high.push(high);
    bars.low.push(low);
    bars.close.push(close);
    bars.volume.push(volume);
    bars.amount.push(Math.round(price * volume * c.product.multiplier));
    bars.openInterest.push(Math.max(0, Math.round(prev.openInterest + (oiEnd - prev.openInterest) * f + 400 * Math.sin(i / 9) * (1 - f))));
    bars.settlement.push(onTick(turnover / contracts, tick));
    last = close;
  }
  if (dayMemo.size >= DAY_MEMO_MAX) dayMemo.clear();
  dayMemo.set(memoKey, bars);
  return bars;
}

/** Bars of `date` that have started by `now`: the forming one counts with the volume traded so far. */
function barsUpTo(c: SimContract, date: string, now: number): { bars: DayBars; count: number; partial: number } {
  const bars = dayBars(c, date);
  let count = 0;
  while (count < bars.timestamp.length && bars.timestamp[count] - MINUTE_MS < now) count++;
  const partial = count > 0 && bars.timestamp[count - 1] > now ? (now - (bars.timestamp[count - 1] - MINUTE_MS)) / MINUTE_MS : 1;
  return { bars, count, partial };
}

/** The trading day the contract's newest data belongs to at `now` (its last trading day once expired). */
function currentDay(c: SimContract, now: number): string | undefined {
  let day = latestStartedSessionDay(c.key, now);
  if (day > c.contract.lastTradeDate) day = c.contract.lastTradeDate;
  return day < c.contract.listingDate ? undefined : day;
}

function emptyCandles(): Candles {
  return { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [], prev_close: [], open_interest: [], settlement_price: [] };
}

function pushMinutes(out: Candles, bars: DayBars, from: number, to: number, partial: number, count: number): void {
  for (let i = from; i < to; i++) {
    const scale = i === count - 1 ? partial : 1;
    out.timestamp.push(bars.timestamp[i]);
    out.open.push(bars.open[i]);
    out.high.push(bars.high[i]);
    out.low.push(bars.low[i]);
    out.close.push(bars.close[i]);
    out.volume.push(Math.round(bars.volume[i] * scale));
    out.amount.push(Math.round(bars.amount[i] * scale));
    out.prev_close!.push(bars.prevClose);
    out.open_interest!.push(bars.openInterest[i]);
    out.settlement_price!.push(bars.settlement[i]);
  }
}

/** Minute bars in [start, end], the newest `count`, labelled by their end and grouped under their trading day. */
export function futuresMinuteCandles(c: SimContract, window: { start?: number; end?: number; count?: number }, now: number): Candles {
  const last = currentDay(c, now);
  const out = emptyCandles();
  if (last === undefined) return out;
  const end = Math.min(window.end ?? now, now);
  const wanted = window.count ?? Infinity;
  const days: { bars: DayBars; from: number; to: number; partial: number; count: number }[] = [];
  let taken = 0;
  for (let day = last; day >= c.contract.listingDate && taken < wanted; day = prevTradingDay('CN', day)) {
    const { bars, count, partial } = barsUpTo(c, day, now);
    if (window.start !== undefined && count > 0 && bars.timestamp[count - 1] < window.start) break;
    let to = count;
    while (to > 0 && bars.timestamp[to - 1] > end && bars.timestamp[to - 1] - MINUTE_MS >= end) to--;
    let from = 0;
    while (from < to && window.start !== undefined && bars.timestamp[from] < window.start) from++;
    from = Math.max(from, to - (wanted - taken));
    if (to > from) {
      days.push({ bars, from, to, partial, count });
      taken += to - from;
    }
  }
  for (let i = days.length - 1; i >= 0; i--) pushMinutes(out, days[i].bars, days[i].from, days[i].to, days[i].partial, days[i].count);
  return out;
}

/** One daily bar per trading day, stamped 00:00 of the trading day (a night's trading is in the next day's bar). */
export function futuresDailyCandles(c: SimContract, window: { start?: number; end?: number; count?: number }, now: number): Candles {
  const last = currentDay(c, now);
  const out = emptyCandles();
  if (last === undefined) return out;
  const dates = tradingDaysBetween('CN', c.contract.listingDate, last);
  const inWindow = dates.filter((d) => {
    const t = localMidnight('CN', d);
    return (window.start === undefined || t >= window.start) && (window.end === undefined || t <= window.end);
  });
  const chosen = window.count === undefined ? inWindow : inWindow.slice(Math.max(0, inWindow.length - window.count));
  for (const date of chosen) {
    const { bars, count, partial } = barsUpTo(c, date, now);
    if (count === 0) continue;
    let high = -Infinity;
    let low = Infinity;
    let volume = 0;
    let amount = 0;
    for (let i = 0; i < count; i++) {
      high = Math.max(high, bars.high[i]);
      low = Math.min(low, bars.low[i]);
      const scale = i === count - 1 ? partial : 1;
      volume += Math.round(bars.volume[i] * scale);
      amount += Math.round(bars.amount[i] * scale);
    }
    out.timestamp.push(localMidnight('CN', date));
    out.open.push(bars.open[0]);
    out.high.push(high);
    out.low.push(low);
    out.close.push(bars.close[count - 1]);
    out.volume.push(volume);
    out.amount.push(amount);
    out.prev_close!.push(bars.prevClose);
    out.open_interest!.push(bars.openInterest[count - 1]);
    out.settlement_price!.push(bars.settlement[count - 1]);
  }
  return out;
}

/** The current trading day's bars so far (`/v1/klines/intraday`). */
export function futuresIntraday(c: SimContract, now: number): Candles {
  const day = currentDay(c, now);
  const out = emptyCandles();
  if (day === undefined) return out;
  const { bars, count, partial } = barsUpTo(c, day, now);
  pushMinutes(out, bars, 0, count, partial, count);
  return out;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

export function futuresQuote(c: SimContract, now: number): Quote | undefined {
  const day = currentDay(c, now);
  if (day === undefined) return undefined;
  const { bars, count, partial } = barsUpTo(c, day, now);
  if (count === 0) return undefined;
  let high = -Infinity;
  let low = Infinity;
  let volume = 0;
  let amount = 0;
  for (let i = 0; i < count; i++) {
    high = Math.max(high, bars.high[i]);
    low = Math.min(low, bars.low[i]);
    const scale = i === count - 1 ? partial : 1;
    volume += Math.round(bars.volume[i] * scale);
    amount += Math.round(bars.amount[i] * scale);
  }
  const last = bars.close[count - 1];
  const settled = count === bars.timestamp.length && now >= bars.timestamp[count - 1];
  const prevSettlement = previousOf(c, day).settlement;
  const change = last - prevSettlement;
  return {
    symbol: c.ref.symbol,
    region: 'CN',
    last_price: last,
    open: bars.open[0],
    high,
    low,
    prev_close: bars.prevClose,
    volume,
    amount,
    timestamp: Math.min(now, bars.timestamp[count - 1]),
    session: sessionState(c.key, now),
    ext: {
      type: 'cn_futures',
      name: `${c.product.name}${c.contract.code.replace(/^[A-Za-z]+/, '')}`,
      amplitude: round6((high - low) / prevSettlement),
      change_amount: Number(change.toFixed(6)),
      change_pct: round6(change / prevSettlement),
      turnover_rate: null,
      open_interest: bars.openInterest[count - 1],
      settlement_price: settled ? bars.settlement[count - 1] : null,
      prev_settlement_price: prevSettlement,
    },
  };
}

export function futuresInstrument(c: SimContract, now: number): Instrument {
  const day = currentDay(c, now) ?? c.contract.listingDate;
  const prev = previousOf(c, day);
  const tick = c.product.tickSize;
  const main = mainContract(c.product, day);
  return {
    code: c.ref.code,
    exchange: c.ref.exchange,
    name: `${c.product.name}${c.contract.code.replace(/^[A-Za-z]+/, '')}`,
    region: 'CN',
    symbol: c.ref.symbol,
    type: 'futures',
    ext: {
      type: 'cn_futures',
      float_shares: null,
      total_shares: null,
      tick_size: tick,
      limit_up: onTick(prev.settlement * (1 + c.product.limitRatio), tick),
      limit_down: onTick(prev.settlement * (1 - c.product.limitRatio), tick),
      listing_date: c.contract.listingDate,
      last_trade_date: c.contract.lastTradeDate,
      multiplier: c.product.multiplier,
      product: c.product.product,
      main_contract: main?.code === c.contract.code,
    },
  };
}

/** 00:00 of a date in Shanghai; exported for tests. */
export const shanghaiMidnight = (date: string): number => localMidnight('CN', date);
