// Pure parsers of Eastmoney payloads (docs/vendors.md#eastmoney). Percent fields are divided
// by 100; A-share volumes are lots; every time string is Beijing time (US minute rows included).
// [verify] chose: every request sends fltt=2, so prices arrive as decimal floats and neither the
// f59 nor the disputed f152 divisor is applied; f59 is used only for the A-share tick size.

import type { Depth, Instrument, InstrumentType, Quote, Region, SymbolRef } from '../../src/domain.ts';
import { localDate, localMidnight, localTimeMs, sessions } from '../../src/markets/calendar.ts';
import type { BySymbol } from '../types.ts';
import type { Bar } from '../common/bars.ts';
import { EXT_TYPE, checkedDepth, derivedExt, round, type DepthLevel } from '../common/shapes.ts';
import { checkBars, checkQuotes, instrumentProblem, type JsonRecord, type PayloadReader, type RowCheck } from '../common/validate.ts';
import type { UsMarket } from './requests.ts';
import { isIndexSymbol } from '../../src/markets/indices.ts';

export interface EastmoneyUnits {
  /** Shares per vendor volume unit, per market. */
  volume: Record<Region, number>;
}

// A-shares report lots of 100 (docs/vendors.md#eastmoney-quotes-depth-and-instruments; the trends sample checks out: 99 778 × 100 × 21.90 ≈
// amount). HK and US report shares per akshare's docs. [verify] chose: HK depth volumes are
// shares too (no public source says).
export const DEFAULT_UNITS: EastmoneyUnits = { volume: { CN: 100, HK: 1, US: 1 } };

const pct = (value: number | null): number | null => (value === null ? null : round(value / 100));

/** ulist rows with the secid `<f13>.<f12>` (market.code) each answers, in the vendor's order. */
function rowsBySecid(data: JsonRecord, r: PayloadReader): Array<[string, JsonRecord]> {
  const out: Array<[string, JsonRecord]> = [];
  if (data.diff === null || data.diff === undefined) return out;
  // np-less ulist answers a list; the screener form (np=2) an object keyed by row index.
  const diff = Array.isArray(data.diff) ? data.diff : Object.values(r.record(data.diff, 'data.diff'));
  diff.forEach((item, i) => {
    const row = r.record(item, `data.diff[${i}]`);
    const market = r.number(row.f13, `data.diff[${i}].f13`);
    out.push([`${market}.${r.string(row.f12, `data.diff[${i}].f12`)}`, row]);
  });
  return out;
}

export function parseUlistQuotes(
  data: JsonRecord, secids: Map<string, SymbolRef>, units: EastmoneyUnits, now: number, r: PayloadReader, check: RowCheck,
): BySymbol<Quote> {
  const out: Quote[] = [];
  for (const [secid, row] of rowsBySecid(data, r)) {
    const ref = secids.get(secid);
    if (ref === undefined) continue;
    const p = `diff.${secid}`;
    const n = (k: string) => r.optionalValue(row[k], `${p}.${k}`);
    const prevClose = n('f18');
    const traded = n('f2');
    const last = traded ?? prevClose;
    // '-' everywhere: a listing with no price at all (delisted, not yet listed); treat as unknown.
    if (last === null) continue;
    // No trade yet today (pre-open, suspension): Eastmoney sends '-' for the day's fields.
    const open = traded === null ? last : n('f17') ?? last;
    const high = traded === null ? last : n('f15') ?? last;
    const low = traded === null ? last : n('f16') ?? last;
    // A row without f18 still says its change (f4): the previous close is last − change.
    const change = n('f4');
    const prev = prevClose ?? (change !== null && traded !== null ? round(last - change) : last);
    const derived = derivedExt(ref, '', { last, prevClose: prev, high, low });
    const time = n('f124');
    const halted = traded === null && suspendedToday(ref.region, now);
    out.push({
      symbol: ref.symbol,
      region: ref.region,
      last_price: last,
      open,
      high,
      low,
      prev_close: prev,
      volume: Math.round((n('f5') ?? 0) * units.volume[ref.region]),
      amount: n('f6') ?? 0,
      timestamp: time === null ? now : Math.round(time * 1000),
      ...(halted ? { session: 'halted' as const } : {}),
      ext: {
        type: EXT_TYPE[ref.region],
        name: r.optionalString(row.f14, `${p}.f14`) ?? '',
        amplitude: pct(n('f7')) ?? derived.amplitude,
        change_amount: n('f4') ?? round(derived.change_amount),
        change_pct: pct(n('f3')) ?? derived.change_pct,
        turnover_rate: pct(n('f8')),
      },
    });
  }
  return checkQuotes(out, check);
}

/**
 * An A-share with no trade today once today's continuous session has opened is suspended (停牌):
 * every listed A-share trades in the opening auction unless it is. Its quote is the previous close
 * with no volume, as terminals show it, marked `session: 'halted'` so it is never read as a live
 * price. HK and US listings can go minutes without a trade: not labelled from an empty day.
 */
function suspendedToday(region: Region, now: number): boolean {
  if (region !== 'CN') return false;
  const today = sessions(region, localDate(region, now));
  return today.length > 0 && now >= today[0].start;
}

/** ulist f12/f13 → US market number per Eastmoney ticker. */
export function parseUsMarkets(data: JsonRecord, r: PayloadReader): Map<string, UsMarket> {
  const out = new Map<string, UsMarket>();
  for (const [secid] of rowsBySecid(data, r)) {
    const dot = secid.indexOf('.');
    const market = Number(secid.slice(0, dot));
    if (market === 105 || market === 106 || market === 107) {
      const ticker = secid.slice(dot + 1);
      // A ticker listed under two numbers keeps the first (105 before 106 before 107).
      if (!out.has(ticker)) out.set(ticker, market);
    }
  }
  return out;
}

const BID_FIELDS = [['f19', 'f20'], ['f17', 'f18'], ['f15', 'f16'], ['f13', 'f14'], ['f11', 'f12']] as const;
const ASK_FIELDS = [['f39', 'f40'], ['f37', 'f38'], ['f35', 'f36'], ['f33', 'f34'], ['f31', 'f32']] as const;

/** undefined when the vendor's levels were all invalid (reported through `check`). */
export function parseDepth(
  data: JsonRecord, ref: SymbolRef, units: EastmoneyUnits, now: number, r: PayloadReader, check: RowCheck,
): Depth | undefined {
  const mult = units.volume[ref.region];
  const level = ([price, volume]: readonly [string, string]): DepthLevel => {
    const v = r.optionalValue(data[volume], `data.${volume}`);
    return { price: r.optionalValue(data[price], `data.${price}`), volume: v === null ? null : v * mult };
  };
  const time = r.optionalNumber(data.f86, 'data.f86');
  return checkedDepth(ref, time === null ? now : Math.round(time * 1000), BID_FIELDS.map(level), ASK_FIELDS.map(level), check);
}

// stock/get carries no security type (docs/vendors.md#eastmoney-quotes-depth-and-instruments). [verify] chose: CN code-range conventions of the
// exchanges; HK and US are reported as stocks.
function cnInstrumentType(ref: SymbolRef): InstrumentType {
  const c = ref.code;
  if (ref.exchange === 'SH') {
    if (c.startsWith('000')) return 'index';
    if (/^5[168]/.test(c)) return 'etf';
    if (c.startsWith('50')) return 'fund';
    if (/^1[01]/.test(c)) return 'bond';
  } else if (ref.exchange === 'SZ') {
    if (c.startsWith('399')) return 'index';
    if (c.startsWith('15')) return 'etf';
    if (c.startsWith('16')) return 'fund';
    if (c.startsWith('12')) return 'bond';
  }
  return 'stock';
}

function listingDate(value: number | null): string | null {
  if (value === null || value < 19000101) return null;
  const s = String(Math.trunc(value));
  return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}`;
}

/** undefined when the instrument breaks an invariant (reported through `check`). */
export function parseInstrument(data: JsonRecord, ref: SymbolRef, r: PayloadReader, check: RowCheck): Instrument | undefined {
  const n = (k: string) => r.optionalNumber(data[k], `data.${k}`);
  const index = isIndexSymbol(ref);
  const type = index ? 'index' : ref.region === 'CN' ? cnInstrumentType(ref) : 'stock';
  const decimals = n('f59');
  const cn = ref.region === 'CN';
  // [verify] chose: HK spreads are banded (no single tick), so HK reports its smallest, 0.001.
  const tick = index ? 0.01 : ref.region === 'HK' ? 0.001 : decimals === null ? 0.01 : round(10 ** -decimals);
  const instrument: Instrument = {
    code: ref.code,
    exchange: ref.exchange,
    name: r.optionalString(data.f58, 'data.f58') ?? '',
    region: ref.region,
    symbol: ref.symbol,
    type,
    ext: {
      type: EXT_TYPE[ref.region],
      // An index has no shares and no price limits, whatever the row carries.
      float_shares: index ? null : n('f85'),
      limit_down: cn && !index ? n('f52') : null,
      limit_up: cn && !index ? n('f51') : null,
      listing_date: listingDate(n('f189')),
      tick_size: tick,
      total_shares: index ? null : n('f84'),
    },
  };
  const problem = instrumentProblem(instrument);
  if (problem === undefined) return instrument;
  check.drop(problem);
  check.flush();
  return undefined;
}

/**
 * kline/get rows: `date,open,close,high,low,volume,amount,amplitude%,change%,change,turnover%`
 * (note open, CLOSE, high, low). Daily rows carry a date (stamped 00:00 exchange-local); minute
 * rows `YYYY-MM-DD HH:MM` in Beijing time, the END of the bar.
 *
 * The vendor's previous close, on every market (US included): close − change (f60) where the row
 * has the change column; else, for the answer's first row, `data.preKPrice` (the close before the
 * first row: 80.0, the IPO price, for APP's first week; 31.75, the issue price, for 688147's
 * listing day), and for a later row the close of the row before it. A first row with neither has
 * no previous close (docs/contract.md#details: the open stands in for it).
 */
export function parseKlines(
  data: JsonRecord, ref: SymbolRef, period: '1d' | '1m', units: EastmoneyUnits, r: PayloadReader, check: RowCheck,
): Bar[] {
  const decimals = r.optionalNumber(data.decimal, 'data.decimal') ?? 2;
  const rows = data.klines === null || data.klines === undefined ? [] : r.array(data.klines, 'data.klines');
  const preK = r.optionalValue(data.preKPrice, 'data.preKPrice');
  const first = preK !== null && Number.isFinite(preK) && preK > 0 ? preK : undefined;
  let before: number | undefined = first;
  return checkBars(rows.map((row, i) => {
    const cols = r.string(row, `data.klines[${i}]`).split(',');
    if (cols.length < 7) r.fail(`data.klines[${i}]`);
    const bar = rowBar(cols, ref, period, units, r, `data.klines[${i}]`);
    const change = cols.length > 9 ? r.cell(cols[9], `data.klines[${i}][9]`) : null;
    if (period === '1d') {
      const prev = change !== null && Number.isFinite(change) ? round(bar.close - change, decimals) : before;
      if (prev !== undefined) bar.prevClose = prev;
    }
    before = bar.close;
    return bar;
  }), check);
}

/** trends2 rows: `YYYY-MM-DD HH:MM,open,close,high,low,volume,amount,avg` (Beijing time, bar end). */
export function parseTrends(data: JsonRecord, ref: SymbolRef, units: EastmoneyUnits, r: PayloadReader, check: RowCheck): Bar[] {
  const rows = data.trends === null || data.trends === undefined ? [] : r.array(data.trends, 'data.trends');
  return checkBars(rows.map((row, i) => {
    const cols = r.string(row, `data.trends[${i}]`).split(',');
    if (cols.length < 7) r.fail(`data.trends[${i}]`);
    return rowBar(cols, ref, '1m', units, r, `data.trends[${i}]`);
  }), check);
}

/**
 * trends2's previous close (`preClose`, also sent as `prePrice`), or undefined when it is missing
 * or not a positive price.
 */
export function trendsPrevClose(data: JsonRecord, r: PayloadReader): number | undefined {
  const value = r.optionalValue(data.preClose, 'data.preClose') ?? r.optionalValue(data.prePrice, 'data.prePrice');
  return value !== null && Number.isFinite(value) && value > 0 ? value : undefined;
}

const DATE = /^(\d{4}-\d{2}-\d{2})(?: (\d{2}:\d{2}))?$/;

function rowBar(cols: string[], ref: SymbolRef, period: '1d' | '1m', units: EastmoneyUnits, r: PayloadReader, path: string): Bar {
  const m = DATE.exec(cols[0]);
  if (!m || (period === '1m') !== (m[2] !== undefined)) r.fail(`${path}[0]`);
  const [, date, hhmm] = m as RegExpExecArray;
  let t: number;
  try {
    // Minute rows are Beijing wall time for every market, so the CN zone converts them.
    t = hhmm === undefined ? localMidnight(ref.region, date) : localTimeMs('CN', date, hhmm);
  } catch {
    r.fail(`${path}[0]`);
  }
  const num = (i: number) => r.cell(cols[i], `${path}[${i}]`) ?? r.fail(`${path}[${i}]`);
  const close = num(2);
  const open = num(1);
  return {
    t: t!,
    // The first trend row of a day can carry open 0 (docs/vendors.md#eastmoney-klines-and-trends): a known quirk, not a bad row.
    open: open === 0 ? close : open,
    close,
    high: num(3),
    low: num(4),
    volume: Math.round(num(5) * units.volume[ref.region]),
    amount: num(6),
  };
}
