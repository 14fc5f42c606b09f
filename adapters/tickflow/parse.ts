// Pure parsers of TickFlow `data` payloads (docs/vendors.md#tickflow-responses) into the canonical
// shapes. TickFlow already speaks our field names; what changes is the unit of CN volume, the
// stamping of bars, and the filling of optional fields our shapes require.

import type {
  Depth, ExFactor, ExFactorParts, Instrument, InstrumentType, Market, PoolDetail, PoolId, Quote, QuoteExt, Region, SymbolRef,
} from '../../src/domain.ts';
import { futuresContract } from '../common/futures.ts';
import { marketOf, parseSymbol } from '../../src/markets/symbols.ts';
import { isFuturesExchange } from '../../src/markets/futures.ts';
import {
  futuresInstrumentExt, normaliseFuturesDaily, normaliseFuturesMinutes, type TickflowBar,
} from './futures.ts';
import type { BySymbol } from '../types.ts';
import { localMidnight } from '../../src/markets/calendar.ts';
import { dailyLabel, normaliseDaily, normaliseMinutes } from '../common/bars.ts';
import { EXT_TYPE, asInstrumentType, asSession, checkedDepth, derivedExt, type DepthLevel } from '../common/shapes.ts';
import { DAY_MS } from '../../src/markets/time.ts';
import {
  checkBars, checkExFactorList, checkQuotes, instrumentProblem, reject, settleBatch, unequalColumns,
  type JsonRecord, type PayloadReader, type RowCheck,
} from '../common/validate.ts';

export interface TickflowUnits {
  /** Shares per vendor volume unit, per market (CN_FUTURES: contracts per unit). */
  volume: Record<Market, number>;
  /** Whether vendor minute stamps mark the end or the start of the bar. */
  minuteLabels: 'end' | 'start';
}

// [verify] chose: CN volume is in lots (手). Both real samples in TickFlow's docs (a websocket-page quote and a
// daily bar) give amount / (price × volume) ≈ 100; HK and US are taken as shares. A futures
// contract's volume is taken as contracts (a futures 手 is one contract; no published sample
// settles it). Overridable per market through the adapter options.
export const DEFAULT_UNITS: TickflowUnits = { volume: { CN: 100, HK: 1, US: 1, CN_FUTURES: 1 }, minuteLabels: 'end' };

/** Canonical symbol of a vendor symbol that we asked for, else undefined. */
function requested(refs: Map<string, SymbolRef>, vendorSymbol: unknown): SymbolRef | undefined {
  if (typeof vendorSymbol !== 'string') return undefined;
  const canonical = parseSymbol(vendorSymbol)?.symbol;
  return canonical === undefined ? undefined : refs.get(canonical);
}

/** The vendor's volume in the service's unit: shares, or contracts for a futures contract. */
function shares(units: TickflowUnits, ref: SymbolRef, volume: number): number {
  return Math.round(volume * units.volume[marketOf(ref)]);
}

/**
 * A symbol repeated in the batch keeps its newest quote; invalid quotes are dropped (checkQuotes).
 * A futures contract's quote is `ext.type: "cn_futures"` with the vendor's `open_interest`,
 * `settlement_price` and `prev_settlement_price` when its `ext` carries them (the published model
 * has no futures quote ext: the adapter completes them, futures.ts); `vendorChange` collects the
 * contracts whose ext carried their own change.
 */
export function parseQuotes(
  data: unknown, refs: Map<string, SymbolRef>, units: TickflowUnits, r: PayloadReader, check: RowCheck, vendorChange?: Set<string>,
): BySymbol<Quote> {
  const out: Quote[] = [];
  r.array(data, 'data').forEach((item, i) => {
    const path = `data[${i}]`;
    const q = r.record(item, path);
    const ref = requested(refs, q.symbol);
    if (ref === undefined) return;
    const last = r.value(q.last_price, `${path}.last_price`);
    const prevClose = r.value(q.prev_close, `${path}.prev_close`);
    const high = r.value(q.high, `${path}.high`);
    const low = r.value(q.low, `${path}.low`);
    const ext = q.ext === null || q.ext === undefined ? undefined : r.record(q.ext, `${path}.ext`);
    const derived = derivedExt(ref, '', { last, prevClose, high, low });
    const futures = isFuturesExchange(ref.exchange);
    if (futures && ext?.change_amount !== undefined && ext.change_amount !== null) vendorChange?.add(ref.symbol);
    const quote: Quote = {
      symbol: ref.symbol,
      region: ref.region,
      last_price: last,
      open: r.value(q.open, `${path}.open`),
      high,
      low,
      prev_close: prevClose,
      volume: shares(units, ref, r.value(q.volume, `${path}.volume`)),
      amount: r.optionalValue(q.amount, `${path}.amount`) ?? 0,
      timestamp: Math.round(r.number(q.timestamp, `${path}.timestamp`)),
      ext: {
        type: futures ? 'cn_futures' : EXT_TYPE[ref.region],
        name: r.optionalString(ext?.name, `${path}.ext.name`) ?? '',
        // [verify] chose: ext ratios are fractions, as the D4 sample shows (docs/vendors.md#tickflow-responses).
        amplitude: r.optionalNumber(ext?.amplitude, `${path}.ext.amplitude`) ?? derived.amplitude,
        change_amount: r.optionalNumber(ext?.change_amount, `${path}.ext.change_amount`) ?? derived.change_amount,
        change_pct: r.optionalNumber(ext?.change_pct, `${path}.ext.change_pct`) ?? derived.change_pct,
        turnover_rate: r.optionalNumber(ext?.turnover_rate, `${path}.ext.turnover_rate`),
      },
    };
    if (futures && ext !== undefined) Object.assign(quote.ext, futuresQuoteExt(ext, r, `${path}.ext`));
    const session = asSession(q.session);
    if (session !== undefined) quote.session = session;
    out.push(quote);
  });
  return checkQuotes(out, check);
}

/** The futures fields a vendor quote's ext carries, in our names; an empty or non-positive price is left out. */
function futuresQuoteExt(ext: JsonRecord, r: PayloadReader, path: string): Partial<QuoteExt> {
  const out: Partial<QuoteExt> = {};
  const oi = r.optionalNumber(ext.open_interest, `${path}.open_interest`);
  if (oi !== null && oi >= 0) out.open_interest = Math.round(oi);
  const settlement = r.optionalNumber(ext.settlement_price, `${path}.settlement_price`);
  // Sent as null (or 0) before the day settles: the service's null.
  if ('settlement_price' in ext) out.settlement_price = settlement !== null && settlement > 0 ? settlement : null;
  const prev = r.optionalNumber(ext.prev_settlement_price, `${path}.prev_settlement_price`);
  if (prev !== null && prev > 0) out.prev_settlement_price = prev;
  return out;
}

function levels(r: PayloadReader, d: JsonRecord, side: 'bid' | 'ask', path: string, mult: number): DepthLevel[] {
  const prices = r.array(d[`${side}_prices`], `${path}.${side}_prices`);
  const volumes = r.array(d[`${side}_volumes`], `${path}.${side}_volumes`);
  if (prices.length !== volumes.length) r.fail(`${path}.${side}_volumes`);
  return prices.map((p, i) => {
    const volume = r.optionalValue(volumes[i], `${path}.${side}_volumes[${i}]`);
    return { price: r.optionalValue(p, `${path}.${side}_prices[${i}]`), volume: volume === null ? null : volume * mult };
  });
}

export function parseDepthBatch(
  data: unknown, refs: Map<string, SymbolRef>, units: TickflowUnits, r: PayloadReader, check: (symbol?: string) => RowCheck,
): BySymbol<Depth> {
  const out: BySymbol<Depth> = new Map();
  let sent = 0;
  for (const [key, value] of Object.entries(r.record(data, 'data'))) {
    const ref = requested(refs, key);
    if (ref === undefined || value === null) continue;
    sent++;
    const path = `data.${key}`;
    const d = r.record(value, path);
    const mult = units.volume[marketOf(ref)];
    const c = check(ref.symbol);
    const depth = checkedDepth(
      ref, Math.round(r.number(d.timestamp, `${path}.timestamp`)),
      levels(r, d, 'bid', path, mult), levels(r, d, 'ask', path, mult), c,
    );
    c.flush();
    if (depth !== undefined) out.set(ref.symbol, depth);
    else reject(out, ref.symbol);
  }
  settleBatch(check(), sent, out.size);
  return out;
}

/**
 * Rows as the vendor stamped them, checked (checkBars: invalid rows dropped, one per stamp,
 * ascending); undefined for a payload that names no bars at all (`{}` or null). A futures
 * contract's rows carry the `open_interest` and `settlement_price` columns when the vendor sends
 * them (a cell empty, non-finite, negative, or a settlement of 0, is null: filled by futures.ts).
 */
export function parseKlineRows(data: unknown, ref: SymbolRef, units: TickflowUnits, r: PayloadReader, check: RowCheck): TickflowBar[] | undefined {
  if (data === null || data === undefined) return undefined;
  const k = r.record(data, 'data');
  if (!('timestamp' in k)) return undefined;
  const col = (name: string) => r.array(k[name], `data.${name}`);
  const ts = col('timestamp');
  const columns = ['open', 'high', 'low', 'close', 'volume'].map(col);
  const amount = k.amount === undefined || k.amount === null ? undefined : col('amount');
  const prevClose = k.prev_close === undefined || k.prev_close === null ? undefined : col('prev_close');
  const futures = isFuturesExchange(ref.exchange);
  const optional = (name: string) => (!futures || k[name] === undefined || k[name] === null ? undefined : col(name));
  const openInterest = optional('open_interest');
  const settlement = optional('settlement_price');
  const all = [ts, ...columns, amount, prevClose, openInterest, settlement];
  if (all.some((c) => c !== undefined && c.length !== ts.length)) unequalColumns(check, Math.max(...all.map((c) => c?.length ?? 0)));
  const [open, high, low, close, volume] = columns;
  return checkBars(ts.map((t, i) => {
    const bar: TickflowBar = {
      t: r.number(t, `data.timestamp[${i}]`),
      open: r.value(open[i], `data.open[${i}]`),
      high: r.value(high[i], `data.high[${i}]`),
      low: r.value(low[i], `data.low[${i}]`),
      close: r.value(close[i], `data.close[${i}]`),
      volume: shares(units, ref, r.value(volume[i], `data.volume[${i}]`)),
      amount: amount === undefined ? 0 : r.optionalValue(amount[i], `data.amount[${i}]`) ?? 0,
    };
    if (prevClose !== undefined) {
      const pc = r.optionalValue(prevClose[i], `data.prev_close[${i}]`);
      if (pc !== null) bar.prevClose = pc;
    }
    if (openInterest !== undefined) {
      const oi = r.optionalValue(openInterest[i], `data.open_interest[${i}]`);
      bar.openInterest = oi !== null && Number.isFinite(oi) && oi >= 0 ? Math.round(oi) : null;
    }
    if (settlement !== undefined) {
      const s = r.optionalValue(settlement[i], `data.settlement_price[${i}]`);
      bar.settlement = s !== null && Number.isFinite(s) && s > 0 ? s : null;
    }
    return bar;
  }), check) as TickflowBar[];
}


// [verify] chose: a daily stamp (bar or ex-factor) names the trade date it falls on in the
// exchange's zone (CN samples are Beijing midnight, so this is the identity there), except a stamp
// at exactly 00:00 UTC, which is read as that UTC date: a vendor stamping UTC midnight would
// otherwise shift every US bar to the previous day.
export function tickflowDayLabel(region: Region, ms: number): number {
  if (ms % DAY_MS === 0) return localMidnight(region, new Date(ms).toISOString().slice(0, 10));
  return dailyLabel(region, ms);
}

// [verify] chose: minute stamps are taken as bar ends unless `minuteLabels: 'start'` is configured.
// A futures contract's bars are labelled on its product's sessions (futures.ts); everything else
// on its region's.
export function normaliseKlines(ref: SymbolRef, period: '1d' | '1m', rows: TickflowBar[], units: TickflowUnits): TickflowBar[] {
  const contract = futuresContract(ref);
  if (period === '1d') {
    if (contract !== undefined) return normaliseFuturesDaily(contract, rows);
    return normaliseDaily(ref.region, rows.map((b) => ({ ...b, t: tickflowDayLabel(ref.region, b.t) })));
  }
  const shift = units.minuteLabels === 'start' ? 60_000 : 0;
  const ends = shift === 0 ? rows : rows.map((b) => ({ ...b, t: b.t + shift }));
  return contract !== undefined ? normaliseFuturesMinutes(contract, ends) : normaliseMinutes(ref.region, ends);
}

const PART_FIELDS = ['cash_dividend', 'bonus_ratio', 'rights_ratio', 'rights_price'] as const;

/**
 * The event's parts (docs/contract.md#ex-factors-and-adjustment) when the vendor sends them, passed through; TickFlow's
 * published records carry only {timestamp, ex_factor}, so without them the record says
 * parts_known: false and the ex-rights methods use the ratio for that event.
 */
export function exFactorParts(e: JsonRecord, r: PayloadReader, path: string): ExFactorParts {
  const parts: ExFactorParts = {};
  let any = false;
  for (const k of PART_FIELDS) {
    const v = r.optionalNumber(e[k], `${path}.${k}`);
    if (v !== null) {
      parts[k] = v;
      any = true;
    }
  }
  const known = e.parts_known === undefined || e.parts_known === null ? any : e.parts_known === true;
  if (!known) return { parts_known: false };
  return { cash_dividend: 0, bonus_ratio: 0, rights_ratio: 0, rights_price: 0, ...parts, parts_known: true };
}

// [verify] chose: TickFlow's ex_factor is per event, P_prev / ref (RiceQuant's convention, > 1 for
// dividends and bonus shares), which is exactly our definition; it passes through unchanged.
// A row repeated for one date is applied once; a symbol whose list carries an invalid or a
// conflicting factor is left out (checkExFactorList), and an answer left with none is refused.
export function parseExFactors(
  data: unknown, refs: Map<string, SymbolRef>, r: PayloadReader, check: (symbol?: string) => RowCheck,
): BySymbol<ExFactor[]> {
  const out: BySymbol<ExFactor[]> = new Map();
  let sent = 0;
  let kept = 0;
  for (const [key, value] of Object.entries(r.record(data, 'data'))) {
    const ref = requested(refs, key);
    if (ref === undefined || value === null) continue;
    const items = r.array(value, `data.${key}`);
    const events = items.map((item, i): ExFactor => {
      const e = r.record(item, `data.${key}[${i}]`);
      const factor = r.value(e.ex_factor, `data.${key}[${i}].ex_factor`);
      return { timestamp: tickflowDayLabel(ref.region, r.number(e.timestamp, `data.${key}[${i}].timestamp`)), ex_factor: factor, ...exFactorParts(e, r, `data.${key}[${i}]`) };
    });
    const c = check(ref.symbol);
    const checked = checkExFactorList(events, c);
    c.flush();
    if (items.length > 0) sent++;
    if (checked === undefined) {
      reject(out, ref.symbol);
      continue;
    }
    if (items.length > 0) kept++;
    out.set(ref.symbol, checked);
  }
  settleBatch(check(), sent, kept);
  return out;
}

// [verify] chose: TickFlow sends no tick size for HK/US; HK uses its smallest spread (0.001),
// CN funds/ETFs/bonds 0.001, everything else 0.01.
function defaultTickSize(region: Region, type: InstrumentType): number {
  if (region === 'HK') return 0.001;
  if (region === 'CN' && (type === 'etf' || type === 'fund' || type === 'bond')) return 0.001;
  return 0.01;
}

/** 'YYYY-MM-DD', 'YYYYMMDD' or an ISO timestamp → 'YYYY-MM-DD'; anything else → null. */
function isoDate(value: string | null): string | null {
  if (value === null) return null;
  const m = /^(\d{4})-?(\d{2})-?(\d{2})/.exec(value);
  return m ? `${m[1]}-${m[2]}-${m[3]}` : null;
}

/**
 * Instruments. A futures contract's (`ext.type: "cn_futures"`, `CnFuturesInstrumentExt`) keeps the
 * vendor's tick size, limits and listing date, and takes what that ext does not carry (multiplier,
 * last trading day, product, main contract on `today`) from the product table (futures.ts).
 */
export function parseInstruments(
  data: unknown, refs: Map<string, SymbolRef>, r: PayloadReader, check: RowCheck, today = new Date().toISOString().slice(0, 10),
): BySymbol<Instrument> {
  const out: BySymbol<Instrument> = new Map();
  let sent = 0;
  r.array(data, 'data').forEach((item, i) => {
    const path = `data[${i}]`;
    const d = r.record(item, path);
    const ref = requested(refs, d.symbol);
    if (ref === undefined) return;
    sent++;
    const contract = futuresContract(ref);
    const type = asInstrumentType(d.type) ?? (contract !== undefined ? 'futures' : 'other');
    const ext = d.ext === null || d.ext === undefined ? {} : r.record(d.ext, `${path}.ext`);
    const num = (k: string) => r.optionalNumber(ext[k], `${path}.ext.${k}`);
    // tick and lot sizes may overflow to ±Infinity: a bad row for instrumentProblem, not a broken payload.
    const size = (k: string) => r.optionalValue(ext[k], `${path}.ext.${k}`);
    const instrument: Instrument = {
      code: ref.code,
      exchange: ref.exchange,
      name: r.optionalString(d.name, `${path}.name`) ?? '',
      region: ref.region,
      symbol: ref.symbol,
      type,
      ext: {
        type: EXT_TYPE[ref.region],
        float_shares: num('float_shares'),
        limit_down: num('limit_down'),
        limit_up: num('limit_up'),
        listing_date: isoDate(r.optionalString(ext.listing_date, `${path}.ext.listing_date`)),
        tick_size: size('tick_size') ?? defaultTickSize(ref.region, type),
        total_shares: num('total_shares'),
      },
    };
    const lot = size('lot_size');
    if (lot !== null) instrument.ext.lot_size = Number.isFinite(lot) ? Math.round(lot) : lot;
    if (contract !== undefined) {
      const multiplier = num('multiplier');
      const lastTrade = isoDate(r.optionalString(ext.last_trade_date, `${path}.ext.last_trade_date`));
      instrument.ext = futuresInstrumentExt(contract, instrument.ext, today, {
        tickSize: size('tick_size') !== null,
        ...(multiplier !== null && multiplier > 0 ? { multiplier } : {}),
        ...(lastTrade !== null ? { lastTradeDate: lastTrade } : {}),
      });
    }
    const problem = instrumentProblem(instrument);
    if (problem !== undefined) {
      check.drop(problem);
      reject(out, ref.symbol);
    } else out.set(ref.symbol, instrument);
  });
  settleBatch(check, sent, out.size);
  return out;
}

export function parseUniverse(data: unknown, pool: PoolId, region: Region, r: PayloadReader): PoolDetail {
  const u = r.record(data, 'data');
  const symbols: string[] = [];
  const seen = new Set<string>();
  r.array(u.symbols, 'data.symbols').forEach((s, i) => {
    const canonical = parseSymbol(r.string(s, `data.symbols[${i}]`))?.symbol;
    if (canonical !== undefined && !seen.has(canonical)) {
      seen.add(canonical);
      symbols.push(canonical);
    }
  });
  return {
    id: pool,
    name: r.optionalString(u.name, 'data.name') ?? pool,
    region,
    category: r.optionalString(u.category, 'data.category') ?? 'equity',
    symbol_count: symbols.length,
    symbols,
  };
}
