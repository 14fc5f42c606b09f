// Pure parsers of one Yahoo chart result (docs/vendors.md#yahoo-chart-response): `meta`, `timestamp[]`
// (Unix seconds), `indicators.quote[0]` columns (elements may be null), `events.dividends` and
// `events.splits`. Prices here are still Yahoo's (split-adjusted); raw.ts undoes the splits.

import type { Instrument, InstrumentType, Quote, SymbolRef } from '../../src/domain.ts';
import { localDate } from '../../src/markets/calendar.ts';
import type { Bar } from '../common/bars.ts';
import { EXT_TYPE, derivedExt, round } from '../common/shapes.ts';
import {
  checkBars, instrumentProblem, quoteProblem, unequalColumns, type JsonRecord, type PayloadReader, type RowCheck,
} from '../common/validate.ts';

export interface Dividend {
  /** Epoch ms of the ex-date (Yahoo stamps it at the session open). */
  t: number;
  /** Per share, split-adjusted like the prices. */
  amount: number;
}

export interface Split {
  t: number;
  /** New shares per old share (numerator / denominator): a 4-for-1 split is 4. */
  ratio: number;
}

export interface Chart {
  meta: JsonRecord;
  /**
   * The decimals Yahoo states for this instrument (meta.priceHint: 2 for most US and CN names, 3
   * for HK); every price below is already rounded to it. undefined when the answer has none.
   */
  decimals?: number;
  /** meta.chartPreviousClose, rounded: the close before the first bar of this answer. */
  previousClose?: number;
  /** meta.firstTradeDate in epoch ms: the start of the listing's first session, when stated. */
  firstTrade?: number;
  /** Vendor stamps (bar START for intraday, session open for daily), epoch ms. */
  rows: Bar[];
  dividends: Dividend[];
  splits: Split[];
}

/**
 * meta.priceHint as a decimal count (0..8), or undefined. Yahoo serves prices as float32 widened to
 * double (493.3999938964844 for an exchange print of 493.4); rounding to the stated decimals gives
 * the printed price back, and is not a snap to a tick grid (HK ticks vary by price band).
 */
export function priceDecimals(meta: JsonRecord, r: PayloadReader): number | undefined {
  const hint = r.optionalNumber(meta.priceHint, 'meta.priceHint');
  return hint !== null && Number.isInteger(hint) && hint >= 0 && hint <= 8 ? hint : undefined;
}

/** float32's spacing relative to a value is at most 2^-23: noise below that is the widening's. */
const FLOAT32_NOISE = 2 ** -23;

/** The shortest decimal that is this float32 (103.6052017211914 → 103.6052), else the value. */
function shortestFloat32(value: number): number {
  if (Math.fround(value) !== value) return value;
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === value) return candidate;
  }
  return value;
}

/**
 * A price as the vendor printed it: rounded to its stated decimals where it differs from them by
 * float32 noise only (493.3999938964844 → 493.4); a price with more digits than stated is a real
 * print (US minute bars carry sub-penny executions: AMZN 103.6052 and 103.605 under priceHint 2),
 * kept as the shortest decimal its float32 came from, never rounded to the cent (that would serve
 * a price nobody traded). Unchanged when no decimals are stated or it is not finite.
 */
export function toDecimals(value: number, decimals: number | undefined): number {
  if (decimals === undefined || !Number.isFinite(value)) return value;
  const rounded = round(value, decimals);
  if (Math.abs(value - rounded) <= Math.abs(value) * FLOAT32_NOISE) return rounded;
  return shortestFloat32(value);
}

/**
 * A figure Yahoo computes rather than prints (meta's previous closes, a split-adjusted
 * chartPreviousClose of 124.808 for 499.23 / 4), to the stated decimals.
 */
export function toStated(value: number, decimals: number | undefined): number {
  return decimals === undefined || !Number.isFinite(value) ? value : round(value, decimals);
}


/** Rows are checked (checkBars): invalid ones dropped and reported, one per stamp, ascending. */
export function parseChart(result: JsonRecord, r: PayloadReader, check: RowCheck): Chart {
  const meta = r.record(result.meta, 'meta');
  const decimals = priceDecimals(meta, r);
  const px = (v: number) => toDecimals(v, decimals);
  const stamps = result.timestamp === undefined || result.timestamp === null ? [] : r.array(result.timestamp, 'timestamp');
  let rows: Bar[] = [];
  if (stamps.length > 0) {
    const indicators = r.record(result.indicators, 'indicators');
    const quote = r.record(r.array(indicators.quote, 'indicators.quote')[0], 'indicators.quote[0]');
    const columns = ['open', 'high', 'low', 'close', 'volume'].map((k) => r.array(quote[k], `indicators.quote[0].${k}`));
    if (columns.some((c) => c.length !== stamps.length)) unequalColumns(check, Math.max(stamps.length, ...columns.map((c) => c.length)));
    const [open, high, low, close, volume] = columns;
    stamps.forEach((s, i) => {
      const t = r.number(s, `timestamp[${i}]`) * 1000;
      const rawClose = r.optionalValue(close[i], `close[${i}]`);
      // Yahoo pads sessions with all-null rows (no trade in that minute / day).
      if (rawClose === null) return;
      const c = px(rawClose);
      const o = px(r.optionalValue(open[i], `open[${i}]`) ?? c);
      const h = r.optionalValue(high[i], `high[${i}]`);
      const l = r.optionalValue(low[i], `low[${i}]`);
      rows.push({
        t,
        open: o,
        high: h === null ? Math.max(o, c) : px(h),
        low: l === null ? Math.min(o, c) : px(l),
        close: c,
        // [verify] chose: shares on every market, A-shares included.
        volume: Math.round(r.optionalValue(volume[i], `volume[${i}]`) ?? 0),
        // Yahoo reports no traded value (capabilities.amount = false).
        amount: 0,
      });
    });
    rows = checkBars(rows, check);
  }
  const events = result.events === undefined || result.events === null ? {} : r.record(result.events, 'events');
  const entries = (k: string) => (events[k] === undefined || events[k] === null ? [] : Object.values(r.record(events[k], `events.${k}`)));
  const dividends = entries('dividends').map((e, i): Dividend => {
    const d = r.record(e, `events.dividends[${i}]`);
    return { t: r.number(d.date, `events.dividends[${i}].date`) * 1000, amount: r.number(d.amount, `events.dividends[${i}].amount`) };
  });
  const splits = entries('splits').map((e, i): Split => {
    const s = r.record(e, `events.splits[${i}]`);
    const numerator = r.number(s.numerator, `events.splits[${i}].numerator`);
    const denominator = r.number(s.denominator, `events.splits[${i}].denominator`);
    if (!(numerator > 0) || !(denominator > 0)) r.fail(`events.splits[${i}]`);
    return { t: r.number(s.date, `events.splits[${i}].date`) * 1000, ratio: numerator / denominator };
  });
  const previous = r.optionalValue(meta.chartPreviousClose, 'meta.chartPreviousClose');
  const firstTrade = r.optionalNumber(meta.firstTradeDate, 'meta.firstTradeDate');
  const chart: Chart = { meta, rows, dividends, splits };
  if (decimals !== undefined) chart.decimals = decimals;
  if (previous !== null && Number.isFinite(previous) && previous > 0) chart.previousClose = toStated(previous, decimals);
  if (firstTrade !== null && Number.isFinite(firstTrade)) chart.firstTrade = firstTrade * 1000;
  return chart;
}

/** Intraday rows stamped at the bar START → stamped at its end (docs/contract.md#candle-time-semantics). */
export function toEndLabels(rows: Bar[]): Bar[] {
  return rows.map((b) => ({ ...b, t: Math.floor(b.t / 60_000) * 60_000 + 60_000 }));
}

/**
 * The previous session's close from `meta` (range=1d), for the first intraday bar's prev_close;
 * undefined when absent or not a positive price.
 */
export function chartPrevClose(chart: Chart, r: PayloadReader): number | undefined {
  const value = r.optionalValue(chart.meta.previousClose, 'meta.previousClose') ?? r.optionalValue(chart.meta.chartPreviousClose, 'meta.chartPreviousClose');
  return value !== null && Number.isFinite(value) && value > 0 ? toStated(value, chart.decimals) : undefined;
}

/**
 * A quote from `meta` (range=1d, interval=1d); amount is 0, which capabilities.amount declares.
 * undefined when it breaks an invariant (reported through `check`).
 */
export function parseQuote(chart: Chart, ref: SymbolRef, now: number, r: PayloadReader, check: RowCheck): Quote | undefined {
  const m = chart.meta;
  // Every meta price to the stated decimals, as the bars are (parseChart).
  const n = (k: string) => {
    const v = r.optionalValue(m[k], `meta.${k}`);
    return v === null || k === 'regularMarketTime' || k === 'regularMarketVolume' ? v : toStated(v, chart.decimals);
  };
  const last = toStated(r.value(m.regularMarketPrice, 'meta.regularMarketPrice'), chart.decimals);
  const row = chart.rows[chart.rows.length - 1];
  // [verify] chose: `previousClose` when present, else `chartPreviousClose` (with range=1d both
  // are the previous session's close).
  const prevClose = n('previousClose') ?? n('chartPreviousClose') ?? last;
  const high = n('regularMarketDayHigh') ?? row?.high ?? last;
  const low = n('regularMarketDayLow') ?? row?.low ?? last;
  const time = n('regularMarketTime');
  const name = r.optionalString(m.shortName, 'meta.shortName') ?? r.optionalString(m.longName, 'meta.longName') ?? '';
  const ext = derivedExt(ref, name, { last, prevClose, high, low });
  const quote: Quote = {
    symbol: ref.symbol,
    region: ref.region,
    last_price: last,
    open: row?.open ?? last,
    high: Math.max(high, last),
    low: Math.min(low, last),
    prev_close: prevClose,
    volume: Math.round(n('regularMarketVolume') ?? row?.volume ?? 0),
    amount: 0,
    timestamp: time === null ? now : time * 1000,
    ext,
  };
  const problem = quoteProblem(quote);
  if (problem === undefined) return quote;
  check.drop(problem);
  check.flush();
  return undefined;
}

const INSTRUMENT_TYPES: Record<string, InstrumentType> = {
  EQUITY: 'stock', ETF: 'etf', INDEX: 'index', MUTUALFUND: 'fund', FUTURE: 'futures', OPTION: 'options', BOND: 'bond',
};

/** undefined when the instrument breaks an invariant (reported through `check`). */
export function parseInstrument(chart: Chart, ref: SymbolRef, r: PayloadReader, check: RowCheck): Instrument | undefined {
  const m = chart.meta;
  const kind = r.optionalString(m.instrumentType, 'meta.instrumentType');
  const first = r.optionalNumber(m.firstTradeDate, 'meta.firstTradeDate');
  const hint = r.optionalNumber(m.priceHint, 'meta.priceHint');
  const instrument: Instrument = {
    code: ref.code,
    exchange: ref.exchange,
    name: r.optionalString(m.longName, 'meta.longName') ?? r.optionalString(m.shortName, 'meta.shortName') ?? '',
    region: ref.region,
    symbol: ref.symbol,
    type: (kind !== null && INSTRUMENT_TYPES[kind]) || 'other',
    ext: {
      type: EXT_TYPE[ref.region],
      float_shares: null,
      limit_down: null,
      limit_up: null,
      listing_date: first === null ? null : localDate(ref.region, first * 1000),
      // priceHint is the number of decimals Yahoo shows: 2 → 0.01.
      tick_size: hint === null ? 0.01 : round(10 ** -hint),
      total_shares: null,
    },
  };
  const problem = instrumentProblem(instrument);
  if (problem === undefined) return instrument;
  check.drop(problem);
  check.flush();
  return undefined;
}
