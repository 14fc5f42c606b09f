// China futures on Eastmoney (docs/vendors.md#eastmoney-futures): contracts under the exchanges'
// market numbers, K-lines from push2his kline/get with the open-interest column, quotes derived
// from the newest daily rows. Pure: the adapter (index.ts) makes the calls.
//
// What the wire says, and where that is known from (mocks/fixtures/README.md, "China futures"):
// - secid `<market>.<code>`, the code in the exchange's own case (`113.au2604`, `115.SR605`);
// - kline rows `date,open,close,high,low,volume,amount,amplitude%,change%,change,turnover%,
//   f62,open_interest,f64` with fields2 f51…f64; volume in contracts, amount in yuan;
// - the change column is against the PREVIOUS SETTLEMENT (not the previous close): close − change
//   is the previous trading day's settlement;
// - daily rows are dated by trading day (a Friday night's trading is in Monday's row); minute rows
//   carry the Beijing wall time of the bar's end (a night bar is dated by its evening).

import type { FuturesExchange, Instrument, Quote, SymbolRef } from '../../src/domain.ts';
import {
  addDays, isMarketOpen, isTradingDay, localDate, localMidnight, prevTradingDay, localTimeMs, minuteBarLabelFor, sessions, sessionState, tradingDayOf, type CalendarKey,
} from '../../src/markets/calendar.ts';
import { contractYear, futuresCalendarKey, isFuturesExchange, parseContract, type FuturesProduct } from '../../src/markets/futures.ts';
import { contractFor, mainContract } from '../../src/markets/futures-contracts.ts';
import { futuresMinuteLabel, type Bar } from '../common/bars.ts';
import { onTick, vwap, type FuturesContract } from '../common/futures.ts';

export { futuresContract, vwap, type FuturesContract } from '../common/futures.ts';
import { round } from '../common/shapes.ts';
import { checkBars, type JsonRecord, type PayloadReader, type RowCheck } from '../common/validate.ts';

/**
 * Eastmoney's market number per futures exchange: 113 SHFE, 114 DCE, 115 ZCE, 142 INE, 225 GFEX
 * (efinance's market table), 220 CFFEX (the number its contracts are asked under today; efinance's
 * older 8 carried numeric codes).
 */
export const FUTURES_MARKETS: Readonly<Record<FuturesExchange, number>> = {
  SHF: 113, DCE: 114, ZCE: 115, CFX: 220, INE: 142, GFE: 225,
};

/** fields2 of a futures kline request: the stock columns, then f62…f64 (f63 is open interest). */
export const FUTURES_KLINE_FIELDS2 = 'f51,f52,f53,f54,f55,f56,f57,f58,f59,f60,f61,f62,f63,f64';

/** Exchanges that settle a day on the whole day's volume-weighted average price (CFFEX settles on its last hour). */
const VWAP_SETTLED: ReadonlySet<FuturesExchange> = new Set(['SHF', 'DCE', 'ZCE', 'INE', 'GFE']);

const MINUTE_MS = 60_000;



export function futuresSecid(ref: SymbolRef): string | undefined {
  return isFuturesExchange(ref.exchange) ? `${FUTURES_MARKETS[ref.exchange]}.${ref.code}` : undefined;
}

/** A vendor row with the futures columns it carried. */
export interface FuturesBar extends Bar {
  openInterest?: number;
  /** close − change: the previous trading day's settlement, as the vendor computed the change. */
  prevSettlement?: number;
  settlement?: number;
}

const DATE = /^(\d{4}-\d{2}-\d{2})(?: (\d{2}:\d{2}))?$/;




/**
 * kline/get rows of a contract. Daily rows are stamped 00:00 of their date (the trading day);
 * minute rows at the instant of their Beijing wall time (the bar's end), labelled later.
 */
export function parseFuturesKlines(data: JsonRecord, c: FuturesContract, period: '1d' | '1m', r: PayloadReader, check: RowCheck): FuturesBar[] {
  const rows = data.klines === null || data.klines === undefined ? [] : r.array(data.klines, 'data.klines');
  const bars = rows.map((row, i): FuturesBar => {
    const path = `data.klines[${i}]`;
    const cols = r.string(row, path).split(',');
    if (cols.length < 7) r.fail(path);
    const m = DATE.exec(cols[0]);
    if (!m || (period === '1m') !== (m[2] !== undefined)) r.fail(`${path}[0]`);
    const [, date, hhmm] = m as RegExpExecArray;
    let t: number;
    try {
      t = hhmm === undefined ? localMidnight('CN', date) : minuteInstant(c, date, hhmm);
    } catch {
      r.fail(`${path}[0]`);
    }
    const num = (k: number) => r.cell(cols[k], `${path}[${k}]`) ?? r.fail(`${path}[${k}]`);
    const opt = (k: number) => (cols.length > k ? r.cell(cols[k], `${path}[${k}]`) : null);
    const close = num(2);
    const open = num(1);
    const bar: FuturesBar = { t: t!, open: open === 0 ? close : open, close, high: num(3), low: num(4), volume: Math.round(num(5)), amount: num(6) };
    const change = opt(9);
    if (change !== null && Number.isFinite(change)) bar.prevSettlement = round(close - change, 6);
    const oi = opt(12);
    if (oi !== null && Number.isFinite(oi) && oi >= 0) bar.openInterest = Math.round(oi);
    return bar;
  });
  const valid = checkBars(bars, check) as FuturesBar[];
  if (valid.length < bars.length) {
    // A row's close − change is the settlement of the vendor's row before it: when that row was
    // dropped, the value is not the settlement of the valid row before (settleDaily would give it).
    const kept = new Set(valid.map((b) => b.t));
    for (let i = 1; i < bars.length; i++) if (!kept.has(bars[i - 1].t)) delete bars[i].prevSettlement;
  }
  return valid;
}

/**
 * The instant of a minute row: its Beijing wall time. [verify] chose: a row after midnight is taken
 * as dated by the calendar (the capture found ends its nights at 23:00); should the vendor date it
 * by its trading day instead (Monday 00:30 for Saturday 00:30, outside every session), the instant
 * of that time on the morning after the trading day's night open is taken when it is in a session.
 */
function minuteInstant(c: FuturesContract, date: string, hhmm: string): number {
  const t = localTimeMs('CN', date, hhmm);
  if (hhmm >= '03:00' || minuteBarLabelFor(c.key, Math.ceil(t / MINUTE_MS) * MINUTE_MS, 1) !== undefined || !isTradingDay('CN', date)) return t;
  const alt = localTimeMs('CN', addDays(prevTradingDay('CN', date), 1), hhmm);
  return minuteBarLabelFor(c.key, alt, 1) !== undefined && tradingDayOf(c.key, alt) === date ? alt : t;
}

function tidy(bar: FuturesBar): FuturesBar {
  return { ...bar, high: Math.max(bar.high, bar.open, bar.close), low: Math.min(bar.low > 0 ? bar.low : bar.open, bar.open, bar.close) };
}

/**
 * Minute rows → canonical bars: labelled by the product's sessions (a night bar keeps its instant
 * and so belongs to the next trading day), rows on one label merged, each bar's open interest the
 * last row's; each bar then carries its trading day's previous close (the close of the trading
 * day before, `prevDayClose` for the first day of the answer) and its running VWAP as the
 * provisional settlement, as the sim's minute bars do.
 */
export function normaliseFuturesMinutes(c: FuturesContract, rows: FuturesBar[], prevDayClose: number | undefined): FuturesBar[] {
  const merged: FuturesBar[] = [];
  for (const row of rows) {
    const bar = tidy({ ...row, t: futuresMinuteLabel(c.key, row.t) });
    const last = merged[merged.length - 1];
    if (last !== undefined && last.t === bar.t) {
      merged[merged.length - 1] = {
        ...bar, open: last.open, high: Math.max(last.high, bar.high), low: Math.min(last.low, bar.low),
        volume: last.volume + bar.volume, amount: last.amount + bar.amount,
      };
    } else merged.push(bar);
  }
  let day = '';
  let before = prevDayClose;
  let dayPrev: number | undefined;
  let amount = 0;
  let volume = 0;
  let lastClose: number | undefined;
  for (const bar of merged) {
    const d = tradingDayOf(c.key, bar.t);
    if (d !== day) {
      day = d;
      dayPrev = lastClose ?? before;
      before = undefined;
      amount = 0;
      volume = 0;
    }
    amount += bar.amount;
    volume += bar.volume;
    bar.prevClose = dayPrev ?? bar.open;
    bar.settlement = vwap(c, amount, volume) ?? bar.close;
    delete bar.prevSettlement;
    lastClose = bar.close;
  }
  return merged;
}

/**
 * Daily rows (already at 00:00 of their trading day, ascending): previous close from the row
 * before (`preKPrice` for the first), and the settlement: a row's is the next row's close − change
 * (the vendor's previous settlement of the next day); the newest row's, which no later row
 * states, is its day's VWAP (provisional until the day closes).
 */
export function settleDaily(c: FuturesContract, bars: FuturesBar[], preK: number | undefined): FuturesBar[] {
  return bars.map((bar, k) => {
    const next = bars[k + 1];
    const out: FuturesBar = { ...tidy(bar), prevClose: k === 0 ? preK ?? bar.open : bars[k - 1].close };
    out.settlement = next?.prevSettlement ?? vwap(c, bar.amount, bar.volume) ?? bar.close;
    return out;
  });
}

const pct = (cols: string[], k: number): number | null => {
  const v = cols.length > k ? Number(cols[k]) : NaN;
  return Number.isFinite(v) ? round(v / 100) : null;
};

/**
 * A quote from the newest daily rows of a kline answer (`rows` as parsed, ascending; `raw` the
 * vendor's row strings for the percent columns). The day's settlement is known once all its
 * sessions have ended, on the exchanges that settle on the day's VWAP; null before (and on CFFEX).
 * None when the vendor's newest row was invalid (dropped): an older day's row is not a quote.
 */
export function futuresQuote(
  c: FuturesContract, data: JsonRecord, rows: FuturesBar[], preK: number | undefined, now: number, r: PayloadReader,
): Quote | undefined {
  const bar = rows[rows.length - 1];
  if (bar === undefined) return undefined;
  const before = rows[rows.length - 2];
  const raw = r.array(data.klines, 'data.klines');
  const cols = String(raw[raw.length - 1]).split(',');
  const day = localDate('CN', bar.t);
  // The vendor's newest row was dropped (invalid): the row before is another day's, not a quote of now.
  if (cols[0] !== day) return undefined;
  const windows = sessions(c.key, day);
  const lastEnd = windows.length === 0 ? undefined : windows[windows.length - 1].end;
  const ended = lastEnd !== undefined && now >= lastEnd;
  const open = isMarketOpen(c.key, now);
  let timestamp = now;
  if (!open) {
    const done = windows.filter((w) => w.end <= now);
    if (done.length > 0) timestamp = done[done.length - 1].end;
  }
  const prevSettlement = bar.prevSettlement ?? before?.settlement ?? vwap(c, before?.amount ?? 0, before?.volume ?? 0);
  const change = prevSettlement === undefined ? 0 : round(bar.close - prevSettlement);
  const changePct = pct(cols, 8) ?? (prevSettlement ? round(change / prevSettlement) : 0);
  const amplitude = pct(cols, 7) ?? (prevSettlement ? round((bar.high - bar.low) / prevSettlement) : 0);
  const settlement = ended && VWAP_SETTLED.has(c.product.exchange) ? vwap(c, bar.amount, bar.volume) ?? null : null;
  return {
    symbol: c.ref.symbol,
    region: 'CN',
    last_price: bar.close,
    open: bar.open,
    high: Math.max(bar.high, bar.open, bar.close),
    low: Math.min(bar.low, bar.open, bar.close),
    prev_close: before?.close ?? preK ?? bar.open,
    volume: bar.volume,
    amount: bar.amount,
    timestamp,
    session: sessionState(c.key, now),
    ext: {
      type: 'cn_futures',
      name: r.optionalString(data.name, 'data.name') ?? c.ref.code,
      amplitude,
      change_amount: change,
      change_pct: changePct,
      turnover_rate: null,
      ...(bar.openInterest === undefined ? {} : { open_interest: bar.openInterest }),
      settlement_price: settlement,
      ...(prevSettlement === undefined ? {} : { prev_settlement_price: prevSettlement }),
    },
  };
}

/**
 * A contract's instrument: the vendor's name and previous settlement (the newest daily row's
 * close − change, else the row before's VWAP), the contract terms from the product table
 * (src/markets/holidays/cn-futures.json: tick, multiplier, listing and last trading day by the
 * exchange's rules, the main-contract rule), the limits the previous settlement ± the product's
 * base limit on the tick, as the sim gives them.
 */
export function futuresInstrument(c: FuturesContract, data: JsonRecord, rows: FuturesBar[], r: PayloadReader): Instrument | undefined {
  const bar = rows[rows.length - 1];
  if (bar === undefined) return undefined;
  const parsed = parseContract(c.ref.code, c.ref.exchange as FuturesExchange);
  if (parsed === undefined) return undefined;
  const day = localDate('CN', bar.t);
  const contract = contractFor(c.product, contractYear(parsed, Number(day.slice(0, 4))), parsed.month);
  const before = rows[rows.length - 2];
  const prevSettlement = bar.prevSettlement ?? (before === undefined ? undefined : vwap(c, before.amount, before.volume));
  const tick = c.product.tickSize;
  const limit = (sign: 1 | -1) => (prevSettlement === undefined ? null : onTick(prevSettlement * (1 + sign * c.product.limitRatio), tick));
  return {
    code: c.ref.code,
    exchange: c.ref.exchange,
    name: r.optionalString(data.name, 'data.name') ?? c.ref.code,
    region: 'CN',
    symbol: c.ref.symbol,
    type: 'futures',
    ext: {
      type: 'cn_futures',
      float_shares: null,
      total_shares: null,
      tick_size: tick,
      limit_up: limit(1),
      limit_down: limit(-1),
      listing_date: contract.listingDate,
      last_trade_date: contract.lastTradeDate,
      multiplier: c.product.multiplier,
      product: c.product.product,
      main_contract: mainContract(c.product, day)?.code === contract.code,
    },
  };
}
