// Eastmoney adapter (keyless; CN, HK, US, China futures): push2 quotes/depth/instruments/trends,
// push2his raw klines, datacenter dividends → A-share ex-factors (docs/vendors.md#eastmoney).
// Futures contracts are served from push2his klines (futures.ts). Calls rotate across numbered
// mirrors when a host throttles (hosts.ts).

import type { Candles, Quote, SymbolRef } from '../../src/domain.ts';
import { addDays, localDate, tradingDayOf } from '../../src/markets/calendar.ts';
import type { Adapter, AdapterCapabilities, AdapterDeps, AdapterMethod, Serving, BySymbol, CallContext, CandleQuery, Resource, UpstreamHttp, UpstreamRequest } from '../types.ts';
import { newestTradingDay, normaliseDaily, normaliseMinutes, toCandles, toFuturesCandles, windowBars, type Bar } from '../common/bars.ts';
import { checkQuotes, mapLimit, payloadReader, reject, rowCheck, settleBatch } from '../common/validate.ts';
import { ADAPTER_ID, NOT_FOUND, readDatacenter, readPush } from './errors.ts';
import { deriveExFactors, earliestExDate, parseDividendRows, parseHkDividendRows, parseRightsRows, type CorporateAction } from './exfactors.ts';
import { HostRotation, isThrottle } from './hosts.ts';
import {
  buildCnStatementRequest, buildFinancialsRequest, deriveCnMetrics, EASTMONEY_REPORTS, financialsSeries, parseCnShares, parseCnStatement,
  type CnStatement, type DatacenterRequest,
} from './financials.ts';
import { FINANCIALS_RESOURCES, type Statement, type StatementRecord } from '../../src/financials/types.ts';
import {
  DEFAULT_UNITS, parseDepth, parseInstrument, parseKlines, parseTrends, parseUlistQuotes, parseUsMarkets,
  trendsPrevClose, type EastmoneyUnits,
} from './parse.ts';
import {
  DEFAULT_UT, DEPTH_FIELDS, INSTRUMENT_FIELDS, ULIST_MARKET_FIELDS, ULIST_QUOTE_FIELDS, buildDividendRequest, buildHkDividendRequest, buildRightsRequest,
  buildKlineRequest, buildStockGetRequest, buildTrendsRequest, buildUlistRequest, compactDate,
  type EastmoneyWire, type KlineParams,
} from './requests.ts';
import { UsMarketResolver } from './us-markets.ts';
import {
  FUTURES_KLINE_FIELDS2, futuresContract, futuresInstrument, futuresQuote, normaliseFuturesMinutes, parseFuturesKlines, settleDaily,
  type FuturesBar, type FuturesContract,
} from './futures.ts';
import { isFuturesExchange } from '../../src/markets/futures.ts';

import { EASTMONEY_DEFAULTS, type EastmoneyOptions } from './options.ts';

export type { EastmoneyOptions };

export const DEFAULT_QUOTE_HOSTS = [
  'https://push2.eastmoney.com', 'https://82.push2.eastmoney.com', 'https://72.push2.eastmoney.com', 'https://33.push2.eastmoney.com',
];
export const DEFAULT_HISTORY_HOSTS = [
  'https://push2his.eastmoney.com', 'https://82.push2his.eastmoney.com', 'https://72.push2his.eastmoney.com', 'https://33.push2his.eastmoney.com',
];
export const DEFAULT_DATACENTER_HOSTS = ['https://datacenter-web.eastmoney.com'];
/** The F10 data hosts (HK dividend table RPT_HKF10_MAIN_DIVBASIC; the HK and A-share statement tables). */
export const DEFAULT_F10_HOSTS = ['https://datacenter.eastmoney.com'];

export function eastmoneyCapabilities(maxBatch: number): AdapterCapabilities {
  return {
    resources: {
      quotes: true, depth: true, candles: true, intraday: true, exFactors: true, instruments: true, pools: false,
      financialsIncome: true, financialsBalanceSheet: true, financialsCashFlow: true, financialsMetrics: true, financialsShares: true,
    },
    // CN_FUTURES: contracts under the exchanges' market numbers, from push2his klines (futures.ts);
    // no depth (their order book's wire format is not known: a contract's depth is absent, 404).
    markets: ['CN', 'HK', 'US', 'CN_FUTURES'],
    // A-shares from the dividend and rights tables, HK from the F10 dividend table; no US source
    // (docs/vendors.md#eastmoney-dividends): the router sends US ex-factors to the next adapter of the chain.
    // Statements (financials.ts): HK from the F10 main-indicator table; A-shares from the F10
    // income, balance-sheet, cash-flow and share-capital tables, metrics derived from those.
    resourceMarkets: {
      // A futures contract has no corporate actions: an empty list, no vendor call.
      exFactors: ['CN', 'HK', 'CN_FUTURES'],
      financialsIncome: ['CN', 'HK'], financialsBalanceSheet: ['CN', 'HK'], financialsCashFlow: ['CN', 'HK'],
      financialsMetrics: ['CN', 'HK'], financialsShares: ['CN', 'HK'],
    },
    periods: { '1m': true, '1d': true },
    maxBatch,
    rawPrices: true,
    amount: true,
    // Its 1m K-lines reach back about five trading days (docs/vendors.md).
    historyDays: { '1m': 5 },
  };
}

const EVERYTHING = { beg: '0', end: '20500101', lmt: 1_000_000 };

export function createEastmoneyAdapter(options: EastmoneyOptions, deps: AdapterDeps): Serving<Exclude<AdapterMethod, 'listPool'>> {
  const http: UpstreamHttp | undefined = deps.http;
  if (!http) throw new Error('eastmoney adapter needs deps.http');
  const cooldown = options.hostCooldownMs ?? EASTMONEY_DEFAULTS.hostCooldownMs;
  const quoteHosts = new HostRotation(options.quoteHosts ?? DEFAULT_QUOTE_HOSTS, cooldown, deps.now);
  const historyHosts = new HostRotation(options.historyHosts ?? DEFAULT_HISTORY_HOSTS, cooldown, deps.now);
  const datacenterHosts = new HostRotation(options.datacenterHosts ?? DEFAULT_DATACENTER_HOSTS, cooldown, deps.now);
  const f10Hosts = new HostRotation(options.f10Hosts ?? DEFAULT_F10_HOSTS, cooldown, deps.now);
  const wire: EastmoneyWire = { ut: options.ut ?? DEFAULT_UT, userAgent: options.userAgent ?? EASTMONEY_DEFAULTS.userAgent };
  const units: EastmoneyUnits = { volume: { ...DEFAULT_UNITS.volume, ...options.volumeMultiplier } };
  const us = new UsMarketResolver(options.usMarkets, options.usMarketCacheSize ?? EASTMONEY_DEFAULTS.usMarketCacheSize);
  const concurrency = options.concurrency ?? EASTMONEY_DEFAULTS.concurrency;
  const r = payloadReader(ADAPTER_ID);
  const check = (resource: Resource, symbol?: string) => rowCheck(ADAPTER_ID, deps.onInvalidRows, resource, symbol);

  async function fetchText(hosts: HostRotation, build: (host: string) => UpstreamRequest, ctx?: CallContext): Promise<string> {
    const host = hosts.pick();
    try {
      const res = await http!.request({ ...build(host), signal: ctx?.signal, deadlineAt: ctx?.deadlineAt });
      return res.text;
    } catch (error) {
      if (isThrottle(error)) hosts.cool(host);
      throw error;
    }
  }

  async function resolveUs(refs: SymbolRef[], ctx?: CallContext): Promise<void> {
    const candidates = us.candidates(refs);
    if (candidates.length === 0) return;
    const data = readPush(await fetchText(quoteHosts, (h) => buildUlistRequest(h, candidates, ULIST_MARKET_FIELDS, 'quotes', wire), ctx), r);
    if (data !== NOT_FOUND) us.learn(parseUsMarkets(data, r));
  }

  /** secid → ref for the refs Eastmoney can be asked about (unresolvable US tickers drop out). */
  async function secids(refs: SymbolRef[], ctx?: CallContext): Promise<Map<string, SymbolRef>> {
    await resolveUs(refs, ctx);
    const out = new Map<string, SymbolRef>();
    for (const ref of refs) {
      const secid = us.secid(ref);
      if (secid !== undefined) out.set(secid, ref);
    }
    return out;
  }

  async function kline(
    secid: string, ref: SymbolRef, period: '1d' | '1m', p: Omit<KlineParams, 'klt'>, resource: 'candles' | 'exFactors' | 'intraday', ctx?: CallContext,
  ) {
    const text = await fetchText(historyHosts, (h) => buildKlineRequest(h, secid, { klt: period === '1d' ? 101 : 1, ...p }, resource, wire), ctx);
    const data = readPush(text, r);
    return data === NOT_FOUND ? undefined : parseKlines(data, ref, period, units, r, check(resource, ref.symbol));
  }

  /** A contract's kline rows with the futures columns; undefined for a contract the vendor does not know. */
  async function futuresKline(
    c: FuturesContract, period: '1d' | '1m', p: Omit<KlineParams, 'klt'>, resource: 'candles' | 'intraday' | 'quotes' | 'instruments', ctx?: CallContext,
  ) {
    const secid = us.secid(c.ref) as string;
    const text = await fetchText(historyHosts, (h) => buildKlineRequest(h, secid, { klt: period === '1d' ? 101 : 1, ...p }, resource, wire, FUTURES_KLINE_FIELDS2), ctx);
    const data = readPush(text, r);
    if (data === NOT_FOUND) return undefined;
    const preK = r.optionalValue(data.preKPrice, 'data.preKPrice');
    return { data, rows: parseFuturesKlines(data, c, period, r, check(resource, c.ref.symbol)), preK: preK !== null && preK > 0 ? preK : undefined };
  }

  /** The close of the trading day before the first minute row's (best effort: undefined when the lookup fails). */
  async function futuresCloseBefore(c: FuturesContract, rows: FuturesBar[], ctx?: CallContext): Promise<number | undefined> {
    if (rows.length === 0) return undefined;
    try {
      const end = compactDate(addDays(tradingDayOf(c.key, rows[0].t), -1));
      return (await futuresKline(c, '1d', { beg: '0', end, lmt: 1 }, 'candles', ctx))?.rows.at(-1)?.close;
    } catch {
      return undefined;
    }
  }

  /** A contract's minute bars as the vendor's klt=1 answer holds them (about five trading days). */
  async function futuresMinutes(c: FuturesContract, resource: 'candles' | 'intraday', ctx?: CallContext): Promise<FuturesBar[] | undefined> {
    const got = await futuresKline(c, '1m', EVERYTHING, resource, ctx);
    if (got === undefined) return undefined;
    return normaliseFuturesMinutes(c, got.rows, await futuresCloseBefore(c, got.rows, ctx));
  }

  async function futuresCandles(c: FuturesContract, query: CandleQuery, ctx?: CallContext): Promise<Candles | undefined> {
    if (query.period === '1m') {
      const bars = await futuresMinutes(c, 'candles', ctx);
      return bars === undefined ? undefined : toFuturesCandles(windowBars(bars, query.start, query.end, query.count) as FuturesBar[]);
    }
    // A day's settlement is stated by the next day's row: ask past `end`, then window locally.
    const got = await futuresKline(c, '1d', {
      beg: query.start === undefined ? '0' : compactDate(localDate('CN', query.start)),
      end: query.end === undefined ? '20500101' : compactDate(addDays(localDate('CN', query.end), 14)),
      lmt: query.count !== undefined && query.start === undefined ? query.count + 15 : EVERYTHING.lmt,
    }, 'candles', ctx);
    if (got === undefined) return undefined;
    return toFuturesCandles(windowBars(settleDaily(c, got.rows, got.preK), query.start, query.end, query.count) as FuturesBar[]);
  }

  async function futuresQuotes(contracts: FuturesContract[], ctx?: CallContext): Promise<BySymbol<Quote>> {
    const now = deps.now();
    const quotes = await mapLimit(contracts, concurrency, async (c) => {
      const got = await futuresKline(c, '1d', { beg: '0', end: '20500101', lmt: 2 }, 'quotes', ctx);
      return got === undefined ? undefined : futuresQuote(c, got.data, got.rows, got.preK, now, r);
    });
    return checkQuotes(quotes.filter((q): q is Quote => q !== undefined), check('quotes'));
  }

  /** One call per symbol. `one` answers NOT_FOUND for an unknown symbol, undefined for one whose data was all invalid. */
  async function perSymbol<T>(
    refs: SymbolRef[], resource: Resource, ctx: CallContext | undefined,
    one: (secid: string, ref: SymbolRef) => Promise<T | undefined | typeof NOT_FOUND>,
  ): Promise<BySymbol<T>> {
    const entries = [...(await secids(refs, ctx))];
    const results = await mapLimit(entries, concurrency, ([secid, ref]) => one(secid, ref));
    const out: BySymbol<T> = new Map<string, T>();
    let sent = 0;
    entries.forEach(([, ref], i) => {
      const value = results[i];
      if (value === NOT_FOUND) return;
      sent++;
      if (value !== undefined) out.set(ref.symbol, value);
      else reject(out, ref.symbol);
    });
    settleBatch(check(resource), sent, out.size);
    return out;
  }

  async function stockGet(secid: string, fields: string, resource: 'depth' | 'instruments', ctx?: CallContext) {
    return readPush(await fetchText(quoteHosts, (h) => buildStockGetRequest(h, secid, fields, resource, wire), ctx), r);
  }

  /**
   * The close of the last daily bar before the session of `firstBar`, for a trends2 answer that
   * lacks `preClose`. Best effort: a failed or empty lookup is undefined (the bars are kept and
   * the first one's prev_close is its open, as for vendors with no previous close).
   */
  async function previousClose(secid: string, ref: SymbolRef, firstBar: number, ctx?: CallContext): Promise<number | undefined> {
    try {
      const day = compactDate(addDays(localDate(ref.region, firstBar), -1));
      const rows = await kline(secid, ref, '1d', { beg: '0', end: day, lmt: 1 }, 'intraday', ctx);
      return rows?.at(-1)?.close;
    } catch {
      return undefined;
    }
  }

  /** The symbol's corporate actions: A-share dividends plus rights issues, or HK plans. */
  async function corporateActions(ref: SymbolRef, ctx?: CallContext): Promise<CorporateAction[]> {
    const rows = check('exFactors', ref.symbol);
    if (ref.region === 'HK') {
      const hk = readDatacenter(await fetchText(f10Hosts, (h) => buildHkDividendRequest(h, ref.code, wire), ctx), r);
      return parseHkDividendRows(hk, ref.code, r, rows);
    }
    const dividends = readDatacenter(await fetchText(datacenterHosts, (h) => buildDividendRequest(h, ref.code, wire), ctx), r);
    const rights = readDatacenter(await fetchText(datacenterHosts, (h) => buildRightsRequest(h, ref.code, wire), ctx), r);
    return [...parseDividendRows(dividends, ref.symbol, r, rows), ...parseRightsRows(rights, ref.symbol, r, check('exFactors', ref.symbol))];
  }

  async function candles(query: CandleQuery, ctx?: CallContext): Promise<Candles | undefined> {
    const ref = query.symbol;
    const secid = (await secids([ref], ctx)).keys().next().value;
    if (secid === undefined) return undefined;
    let range = EVERYTHING;
    if (query.period === '1d') {
      range = {
        beg: query.start === undefined ? '0' : compactDate(localDate(ref.region, query.start)),
        end: query.end === undefined ? '20500101' : compactDate(localDate(ref.region, query.end)),
        // Without a start, lmt with end returns the newest `lmt` bars up to end.
        lmt: query.count !== undefined && query.start === undefined ? query.count : EVERYTHING.lmt,
      };
    } // klt=1 only reaches back five trading days: fetch them all and window locally.
    const rows = await kline(secid, ref, query.period, range, 'candles', ctx);
    if (rows === undefined) return undefined;
    const bars = query.period === '1d' ? normaliseDaily(ref.region, rows) : normaliseMinutes(ref.region, rows);
    return toCandles(windowBars(bars, query.start, query.end, query.count));
  }

  async function equityQuotes(symbols: SymbolRef[], ctx?: CallContext): Promise<BySymbol<Quote>> {
    const bySecid = await secids(symbols, ctx);
    if (bySecid.size === 0) return new Map();
    const text = await fetchText(quoteHosts, (h) => buildUlistRequest(h, [...bySecid.keys()], ULIST_QUOTE_FIELDS, 'quotes', wire), ctx);
    const data = readPush(text, r);
    return data === NOT_FOUND ? new Map() : parseUlistQuotes(data, bySecid, units, deps.now(), r, check('quotes'));
  }

  async function equityIntraday(symbol: SymbolRef, ctx?: CallContext): Promise<Candles | undefined> {
    const secid = (await secids([symbol], ctx)).keys().next().value;
    if (secid === undefined) return undefined;
    const data = readPush(await fetchText(quoteHosts, (h) => buildTrendsRequest(h, secid, wire), ctx), r);
    if (data === NOT_FOUND) return undefined;
    const bars = normaliseMinutes(symbol.region, parseTrends(data, symbol, units, r, check('intraday', symbol.symbol)));
    if (bars.length === 0) return toCandles(bars);
    const prev = trendsPrevClose(data, r) ?? await previousClose(secid, symbol, bars[0].t, ctx);
    return toCandles(withPrevCloses(bars, prev));
  }

  /** An A-share symbol's records of `statement`: one table, or all four for the derived metrics. */
  async function cnStatement(
    ref: SymbolRef, statement: Statement, report: (build: (host: string) => DatacenterRequest) => Promise<string>,
  ): Promise<StatementRecord<Statement>[]> {
    const table = (s: CnStatement) => report((h) => buildCnStatementRequest(s, ref, undefined, h)).then((text) => parseCnStatement(text, s, r));
    const shares = () => report((h) => buildFinancialsRequest(EASTMONEY_REPORTS.cnShares, ref, 500, h)).then((text) => parseCnShares(text, r));
    if (statement === 'shares') return shares();
    if (statement !== 'metrics') return table(statement);
    const [income, balance, cashFlow, capital] = await Promise.all([table('income'), table('balance_sheet'), table('cash_flow'), shares()]);
    return deriveCnMetrics({ income, balance_sheet: balance, cash_flow: cashFlow, shares: capital });
  }

  return {
    id: ADAPTER_ID,
    label: options.label ?? 'eastmoney',

    async getFinancials(symbols, statement, ctx) {
      // capabilities.resourceMarkets: CN and HK; other symbols are left out, never an error. A
      // symbol with no rows (9201) is left out too: an answer, not a failure.
      const resource = FINANCIALS_RESOURCES[statement];
      const refs = symbols.filter((s) => (s.region === 'HK' || s.region === 'CN') && !isFuturesExchange(s.exchange));
      const report = (build: (host: string) => DatacenterRequest) => fetchText(f10Hosts, (h) => ({ ...build(h), resource }), ctx);
      const series = await mapLimit(refs, concurrency, async (ref): Promise<StatementRecord<Statement>[] | undefined> => {
        if (ref.region === 'HK') return financialsSeries(await report((h) => buildFinancialsRequest(EASTMONEY_REPORTS.hkIndicators, ref, 200, h)), statement, r);
        const list = await cnStatement(ref, statement, report);
        return list.length === 0 ? undefined : list;
      });
      const out: BySymbol<StatementRecord<typeof statement>[]> = new Map();
      refs.forEach((ref, i) => {
        const list = series[i];
        if (list !== undefined) out.set(ref.symbol, list as StatementRecord<typeof statement>[]);
      });
      return out;
    },
    capabilities: eastmoneyCapabilities(options.maxBatch ?? EASTMONEY_DEFAULTS.maxBatch),

    async getQuotes(symbols, ctx) {
      const contracts = symbols.map(futuresContract).filter((c): c is FuturesContract => c !== undefined);
      const equities = symbols.filter((s) => !isFuturesExchange(s.exchange));
      if (contracts.length === 0) return equityQuotes(equities, ctx);
      if (equities.length === 0) return futuresQuotes(contracts, ctx);
      const [a, b] = await Promise.all([equityQuotes(equities, ctx), futuresQuotes(contracts, ctx)]);
      return new Map([...a, ...b]);
    },

    getDepth(symbols, ctx) {
      // A futures contract's order book: its wire format is not known, so a contract has no depth here.
      return perSymbol(symbols.filter((s) => !isFuturesExchange(s.exchange)), 'depth', ctx, async (secid, ref) => {
        const data = await stockGet(secid, DEPTH_FIELDS, 'depth', ctx);
        if (data === NOT_FOUND) return NOT_FOUND;
        const c = check('depth', ref.symbol);
        const depth = parseDepth(data, ref, units, deps.now(), r, c);
        c.flush();
        return depth;
      });
    },

    getInstruments(symbols, ctx) {
      return perSymbol(symbols, 'instruments', ctx, async (secid, ref) => {
        const contract = futuresContract(ref);
        if (contract !== undefined) {
          // A contract: the vendor's name and previous settlement from its newest daily rows.
          const got = await futuresKline(contract, '1d', { beg: '0', end: '20500101', lmt: 2 }, 'instruments', ctx);
          return got === undefined ? NOT_FOUND : futuresInstrument(contract, got.data, got.rows, r);
        }
        const data = await stockGet(secid, INSTRUMENT_FIELDS, 'instruments', ctx);
        return data === NOT_FOUND ? NOT_FOUND : parseInstrument(data, ref, r, check('instruments', ref.symbol));
      });
    },

    getCandles(query, ctx) {
      const contract = futuresContract(query.symbol);
      return contract === undefined ? candles(query, ctx) : futuresCandles(contract, query, ctx);
    },

    async getIntraday(symbol, ctx) {
      const contract = futuresContract(symbol);
      if (contract !== undefined) {
        const bars = await futuresMinutes(contract, 'intraday', ctx);
        return bars === undefined ? undefined : toFuturesCandles(newestTradingDay(contract.key, bars));
      }
      return equityIntraday(symbol, ctx);
    },

    async getExFactors(symbols, ctx) {
      // capabilities.resourceMarkets: CN and HK. Should a caller still ask for US, those symbols
      // are left out (no source here), never an error that would count against the breaker.
      const contracts = symbols.filter((s) => isFuturesExchange(s.exchange));
      const out = await perSymbol(symbols.filter((s) => s.region !== 'US' && !isFuturesExchange(s.exchange)), 'exFactors', ctx, async (secid, ref) => {
        const actions = await corporateActions(ref, ctx);
        const earliest = earliestExDate(actions);
        // The raw closes give P_prev; with no events one bar still tells a known symbol from an unknown one.
        const closes = await kline(secid, ref, '1d', earliest === undefined
          ? { ...EVERYTHING, lmt: 1 }
          : { beg: compactDate(addDays(earliest, -40)), end: '20500101', lmt: EVERYTHING.lmt }, 'exFactors', ctx);
        if (closes === undefined) return NOT_FOUND;
        return deriveExFactors(ref.region, actions, normaliseDaily(ref.region, closes), deps.now());
      });
      for (const c of contracts) out.set(c.symbol, []);
      return out;
    },
  };
}

/** prev_close[k] = close[k−1]; prev_close[0] = the previous session's close, else the first open. */
function withPrevCloses(bars: Bar[], first: number | undefined): Bar[] {
  return bars.map((b, k) => ({ ...b, prevClose: k === 0 ? first ?? b.open : bars[k - 1].close }));
}
