// China futures on TickFlow (docs/vendors.md#tickflow-futures): contracts pass through as their
// symbols (`au2604.SHF`), in TickFlow's own shapes. What the official client's model
// (tickflow-org/tickflow `tickflow/generated_model.py`) says the wire carries for them:
// - K-lines (`CompactKlineData`): the equity columns, then `open_interest` and `settlement_price`
//   (both optional lists of numbers), stamped in epoch ms;
// - instruments: `ext` of `type: "cn_futures"` (`CnFuturesInstrumentExt`: float_shares, limit_down,
//   limit_up, listing_date, name_en, tick_size, total_shares; no multiplier, no last trading day);
// - quotes: `QuoteExtension` has no futures variant, so nothing about open interest or settlement
//   is promised in a quote: the adapter completes those from the contract's daily K-lines.
// Bars are labelled on the product's own sessions (`calendarKeyOf`): a night bar keeps its instant
// and so belongs to the next trading day; a daily bar is dated 00:00 of its trading day. Pure:
// the adapter (index.ts) makes the calls.

import type { Instrument, Quote, SymbolRef } from '../../src/domain.ts';
import {
  localMidnight, sessions, tradingDayOf, type CalendarKey,
} from '../../src/markets/calendar.ts';
import { contractYear, futuresCalendarKey, isFuturesExchange, parseContract, type ContractCode, type FuturesProduct } from '../../src/markets/futures.ts';
import { contractFor, mainContract } from '../../src/markets/futures-contracts.ts';
import { futuresMinuteLabel, type Bar } from '../common/bars.ts';
import { onTick, vwap, type FuturesContract } from '../common/futures.ts';
import { round } from '../common/shapes.ts';

/** A TickFlow row of a contract: the futures columns when the vendor sent them (null: a cell it left empty). */
export interface TickflowBar extends Bar {
  openInterest?: number | null;
  settlement?: number | null;
}






function tidy(bar: TickflowBar): TickflowBar {
  const open = bar.open > 0 ? bar.open : bar.close;
  return {
    ...bar, open,
    high: Math.max(bar.high, open, bar.close),
    low: Math.min(bar.low > 0 ? bar.low : Math.min(open, bar.close), open, bar.close),
  };
}

/** `a` earlier than `b`, both on one label: the later row's close, open interest and settlement. */
function merge(a: TickflowBar, b: TickflowBar): TickflowBar {
  const out: TickflowBar = {
    ...b, open: a.open, high: Math.max(a.high, b.high), low: Math.min(a.low, b.low),
    volume: a.volume + b.volume, amount: a.amount + b.amount,
  };
  if (a.prevClose !== undefined) out.prevClose = a.prevClose;
  else delete out.prevClose;
  if (b.openInterest === null && a.openInterest !== undefined) out.openInterest = a.openInterest;
  if (b.settlement === null && a.settlement !== undefined) out.settlement = a.settlement;
  return out;
}

/**
 * Empty cells of a column the vendor sent: open interest carries the bar before's (the first bars
 * the first known value); a settlement the vendor left empty (or sent as 0: not yet settled) is
 * the provisional one the sim and Eastmoney give, the running VWAP of the bar's trading day in
 * the answer (`running`), or the bar's own VWAP (daily), else its close.
 */
function fillColumns(c: FuturesContract, bars: TickflowBar[], running: boolean): TickflowBar[] {
  if (bars.some((b) => b.openInterest !== undefined)) {
    let known = bars.find((b) => typeof b.openInterest === 'number')?.openInterest ?? undefined;
    for (const bar of bars) {
      if (typeof bar.openInterest === 'number') known = bar.openInterest;
      if (known === undefined) delete bar.openInterest;
      else bar.openInterest = known;
    }
  }
  if (bars.some((b) => b.settlement !== undefined)) {
    let day = '';
    let amount = 0;
    let volume = 0;
    for (const bar of bars) {
      if (running) {
        const d = tradingDayOf(c.key, bar.t);
        if (d !== day) {
          day = d;
          amount = 0;
          volume = 0;
        }
        amount += bar.amount;
        volume += bar.volume;
      } else {
        amount = bar.amount;
        volume = bar.volume;
      }
      if (typeof bar.settlement !== 'number') bar.settlement = vwap(c, amount, volume) ?? bar.close;
    }
  }
  return bars;
}

/**
 * Minute rows (end-stamped, after any start→end shift) → canonical bars on the product's sessions.
 * Rows repeated with one stamp keep the later copy; rows landing on one label merge in time order.
 */
export function normaliseFuturesMinutes(c: FuturesContract, rows: TickflowBar[]): TickflowBar[] {
  const unique = new Map<number, TickflowBar>();
  for (const row of rows) unique.set(row.t, row);
  const out: TickflowBar[] = [];
  for (const row of [...unique.values()].sort((a, b) => a.t - b.t)) {
    const bar = tidy({ ...row, t: futuresMinuteLabel(c.key, row.t) });
    const last = out[out.length - 1];
    if (last !== undefined && last.t === bar.t) out[out.length - 1] = merge(last, bar);
    else out.push(bar);
  }
  return fillColumns(c, out, true);
}

/**
 * Daily rows → bars at 00:00 Beijing of their trading day, whatever instant of it the vendor
 * stamped (its midnight, its close, or the evening its night session opened); a trading day sent
 * twice keeps the later row (the forming bar).
 */
export function normaliseFuturesDaily(c: FuturesContract, rows: TickflowBar[]): TickflowBar[] {
  const out: TickflowBar[] = [];
  for (const row of rows.slice().sort((a, b) => a.t - b.t)) {
    const bar = tidy({ ...row, t: localMidnight('CN', tradingDayOf(c.key, row.t)) });
    if (out.length > 0 && out[out.length - 1].t === bar.t) out[out.length - 1] = bar;
    else out.push(bar);
  }
  return fillColumns(c, out, false);
}

/**
 * A quote's futures fields the vendor's quote did not carry, from the contract's newest daily
 * bars (`daily`, canonical, ascending): open interest the newest bar's; the previous settlement
 * the settlement of the last bar before the quote's trading day; today's settlement that trading
 * day's bar's once all its sessions have ended (null before, as the sim gives it). Change,
 * change_pct and amplitude are against the previous settlement when the vendor sent none.
 */
export function completeFuturesQuote(c: FuturesContract, quote: Quote, daily: TickflowBar[], now: number, vendorChange: boolean): Quote {
  const day = tradingDayOf(c.key, quote.timestamp);
  const dayStart = localMidnight('CN', day);
  const today = daily.find((b) => b.t === dayStart);
  const before = daily.filter((b) => b.t < dayStart).at(-1);
  const ext = { ...quote.ext };
  const newest = daily.at(-1);
  if (ext.open_interest === undefined && typeof newest?.openInterest === 'number') ext.open_interest = newest.openInterest;
  if (ext.prev_settlement_price === undefined && typeof before?.settlement === 'number') ext.prev_settlement_price = before.settlement;
  if (ext.settlement_price === undefined) {
    const windows = sessions(c.key, day);
    const ended = windows.length > 0 && now >= windows[windows.length - 1].end;
    ext.settlement_price = ended && typeof today?.settlement === 'number' ? today.settlement : null;
  }
  const prev = ext.prev_settlement_price;
  if (!vendorChange && prev !== undefined && prev > 0) {
    const change = quote.last_price - prev;
    ext.change_amount = round(change);
    ext.change_pct = round(change / prev);
    ext.amplitude = round((quote.high - quote.low) / prev);
  }
  return { ...quote, ext };
}

/**
 * A contract's instrument `ext` from the vendor's (tick size, limits, listing date where it
 * gives them) and the product table for what `CnFuturesInstrumentExt` does not carry (multiplier,
 * last trading day, product, main contract; tick size and listing date when the vendor's are empty).
 */
export function futuresInstrumentExt(
  c: FuturesContract, vendor: Instrument['ext'], today: string, given: { tickSize: boolean; multiplier?: number; lastTradeDate?: string },
): Instrument['ext'] {
  // A ZCE code's one year digit is read as the nearest year not before last year.
  const contract = contractFor(c.product, contractYear(c.code, Number(today.slice(0, 4))), c.code.month);
  return {
    ...vendor,
    type: 'cn_futures',
    tick_size: given.tickSize ? vendor.tick_size : c.product.tickSize,
    listing_date: vendor.listing_date ?? contract.listingDate,
    multiplier: given.multiplier ?? c.product.multiplier,
    last_trade_date: given.lastTradeDate ?? contract.lastTradeDate,
    product: c.product.product,
    main_contract: mainContract(c.product, today)?.code === contract.code,
  };
}
