// TickFlow adapter: a near pass-through to a TickFlow-compatible vendor (docs/vendors.md#tickflow). Candles are always fetched with adjust=none; CN volume is converted to
// shares; TickFlow universes serve our pools.

import type { Candles, PoolId, Quote, SymbolRef } from '../../src/domain.ts';
import { futuresContract } from '../common/futures.ts';
import { localDate } from '../../src/markets/calendar.ts';
import { isFuturesExchange } from '../../src/markets/futures.ts';
import { POOL_REGION } from '../../src/markets/pools.ts';
import type { Adapter, AdapterCapabilities, AdapterDeps, AdapterMethod, Serving, CallContext, CandleQuery, Resource, UpstreamHttp, UpstreamRequest } from '../types.ts';
import { newestTradingDay, toCandles, toFuturesCandles, windowBars } from '../common/bars.ts';
import { payloadReader, rowCheck } from '../common/validate.ts';
import { ADAPTER_ID, NOT_FOUND, readTickflow } from './errors.ts';
import {
  DEFAULT_UNITS, normaliseKlines, parseDepthBatch, parseExFactors, parseInstruments, parseKlineRows, parseQuotes,
  parseUniverse, type TickflowUnits,
} from './parse.ts';
import {
  KLINES_PAGE_MAX, buildDepthRequest, buildExFactorsRequest, buildInstrumentsRequest, buildIntradayRequest,
  buildKlinesRequest, buildQuotesRequest, buildUniverseRequest, type TickflowEndpoint,
} from './requests.ts';

import { buildFinancialsRequest, parseFinancials } from './financials.ts';
import { FINANCIALS_RESOURCES } from '../../src/financials/types.ts';
import { TICKFLOW_DEFAULTS, type TickflowOptions } from './options.ts';
import { TickflowPush } from './push.ts';
import { completeFuturesQuote, type TickflowBar } from './futures.ts';

// Options (adapters/tickflow/options.ts): `tier` says what the account serves. The keyless free
// tier serves daily and longer klines, ex-factors, instruments and universes, but no real-time
// data and no minute bars (docs/vendors.md#tickflow), and says so in its capabilities.
export type { TickflowOptions };

/** Our pool ids → TickFlow universe ids (docs/vendors.md#tickflow-requests). */
export const TICKFLOW_UNIVERSES: Partial<Record<PoolId, string>> = {
  CN_Stock: 'CN_Equity_A',
  US_Stock: 'US_Equity',
  HK_Stock: 'HK_Equity',
  CN_ETF: 'CN_ETF',
  // No TickFlow universe of HK or US indices is known.
  CN_Index: 'CN_Index',
};

export const TICKFLOW_FREE_HOST = 'free-api.tickflow.org';

export function tickflowCapabilities(maxBatch: number, tier: 'paid' | 'free' = 'paid'): AdapterCapabilities {
  const live = tier === 'paid';
  return {
    resources: {
      quotes: live, depth: live, candles: true, intraday: live, exFactors: true, instruments: true, pools: true,
      // Statements pass through in every market; the free tier serves none (financials.ts).
      financialsIncome: live, financialsBalanceSheet: live, financialsCashFlow: live, financialsMetrics: live, financialsShares: live,
    },
    // CN_FUTURES: contracts pass through as their symbols (au2604.SHF); their bars are labelled on
    // the product's sessions and carry open interest and settlement (futures.ts).
    markets: ['CN', 'HK', 'US', 'CN_FUTURES'],
    periods: { '1m': live, '1d': true },
    maxBatch,
    rawPrices: true,
    amount: true,
  };
}

function byCanonical(symbols: SymbolRef[]): Map<string, SymbolRef> {
  return new Map(symbols.map((s) => [s.symbol, s]));
}

/** Columnar candles: a futures contract's with its open interest and settlement columns (futures.ts). */
function columns(ref: SymbolRef, bars: TickflowBar[]): Candles {
  return isFuturesExchange(ref.exchange) ? toFuturesCandles(bars) : toCandles(bars);
}

export function createTickflowAdapter(options: TickflowOptions, deps: AdapterDeps): Serving<AdapterMethod> {
  const http: UpstreamHttp | undefined = deps.http;
  if (!http) throw new Error('tickflow adapter needs deps.http');
  const ep: TickflowEndpoint = { baseUrl: options.baseUrl ?? TICKFLOW_DEFAULTS.baseUrl, apiKey: options.apiKey };
  const units: TickflowUnits = {
    volume: { ...DEFAULT_UNITS.volume, ...options.volumeMultiplier },
    minuteLabels: options.minuteLabels ?? DEFAULT_UNITS.minuteLabels,
  };
  const maxPages = options.maxKlinePages ?? TICKFLOW_DEFAULTS.maxKlinePages;
  const r = payloadReader(ADAPTER_ID);
  const check = (resource: Resource) => (symbol?: string) => rowCheck(ADAPTER_ID, deps.onInvalidRows, resource, symbol);

  /**
   * The `data` of an answer, or NOT_FOUND. Batch routes answer unknown symbols by leaving them
   * out; `data: null` is read the same way (the official client treats a falsy `data` as empty).
   */
  async function call(req: UpstreamRequest, ctx?: CallContext, notFoundOn404 = false): Promise<unknown> {
    const res = await http!.request({ ...req, signal: ctx?.signal, deadlineAt: ctx?.deadlineAt });
    return readTickflow(res, r, { notFoundOn404 });
  }

  /** Pages backwards from `end` with `end_time = oldest − 1` until the window or `count` is covered. */
  async function candles(query: CandleQuery, ctx?: CallContext): Promise<Candles | undefined> {
    const period = query.period;
    let wanted = query.count ?? Number.POSITIVE_INFINITY;
    let end = query.end;
    let bars: TickflowBar[] = [];
    for (let page = 0; page < maxPages && wanted > 0; page++) {
      const count = Math.min(wanted, KLINES_PAGE_MAX);
      const data = await call(buildKlinesRequest(ep, {
        symbol: query.symbol.symbol, period, count, startTime: query.start, endTime: end,
      }), ctx);
      const rows = data === NOT_FOUND ? undefined : parseKlineRows(data, query.symbol, units, r, check('candles')(query.symbol.symbol));
      if (rows === undefined) {
        if (page === 0) return undefined;
        break;
      }
      const pageBars = normaliseKlines(query.symbol, period, rows, units);
      const oldest = bars.length > 0 ? bars[0].t : Number.POSITIVE_INFINITY;
      bars = [...pageBars.filter((b) => b.t < oldest), ...bars];
      wanted -= pageBars.length;
      if (rows.length < count || pageBars.length === 0) break;
      end = pageBars[0].t - 1;
      if (query.start !== undefined && end < query.start) break;
    }
    return columns(query.symbol, windowBars(bars, query.start, query.end, query.count) as TickflowBar[]);
  }

  /**
   * A futures quote's open interest and settlements the vendor's quote did not carry, from the
   * contract's newest daily bars (futures.ts); should that call fail or find nothing, the quote
   * stands without them.
   */
  async function completeQuote(quote: Quote, ref: SymbolRef, vendorChange: boolean, ctx?: CallContext): Promise<Quote> {
    const contract = futuresContract(ref);
    const e = quote.ext;
    if (contract === undefined || (e.open_interest !== undefined && e.settlement_price !== undefined && e.prev_settlement_price !== undefined)) return quote;
    let daily: TickflowBar[] = [];
    try {
      const data = await call(buildKlinesRequest(ep, { symbol: ref.symbol, period: '1d', count: 3 }), ctx);
      const rows = data === NOT_FOUND ? undefined : parseKlineRows(data, ref, units, r, check('quotes')(ref.symbol));
      if (rows !== undefined) daily = normaliseKlines(ref, '1d', rows, units);
    } catch (error) {
      if (ctx?.signal?.aborted) throw error;
    }
    return completeFuturesQuote(contract, quote, daily, deps.now(), vendorChange);
  }

  // The push feed (push.ts): real-time data, so the paid tier only.
  const pushes = (options.push ?? true) && (options.tier ?? (new URL(ep.baseUrl).host === TICKFLOW_FREE_HOST ? 'free' : 'paid')) === 'paid';
  const openPush: Adapter['openPush'] = (listener) => new TickflowPush({
    baseUrl: ep.baseUrl, apiKey: ep.apiKey, units, reconnectMs: options.pushReconnectMs ?? TICKFLOW_DEFAULTS.pushReconnectMs, deps,
  }, listener);

  return {
    ...(pushes ? { openPush } : {}),
    id: ADAPTER_ID,
    label: options.label ?? 'tickflow',
    capabilities: tickflowCapabilities(options.maxBatch ?? TICKFLOW_DEFAULTS.maxBatch, options.tier ?? (new URL(ep.baseUrl).host === TICKFLOW_FREE_HOST ? 'free' : 'paid')),

    async getQuotes(symbols, ctx) {
      if (symbols.length === 0) return new Map();
      const data = await call(buildQuotesRequest(ep, symbols.map((s) => s.symbol)), ctx);
      const refs = byCanonical(symbols);
      const vendorChange = new Set<string>();
      const quotes = data === NOT_FOUND || data === null ? new Map() : parseQuotes(data, refs, units, r, check('quotes')(), vendorChange);
      // Futures contracts' quotes are completed from their daily bars, concurrently.
      await Promise.all([...quotes].map(async ([symbol, quote]) => {
        const ref = refs.get(symbol);
        if (quote !== undefined && ref !== undefined && isFuturesExchange(ref.exchange)) {
          quotes.set(symbol, await completeQuote(quote, ref, vendorChange.has(symbol), ctx));
        }
      }));
      return quotes;
    },

    async getDepth(symbols, ctx) {
      if (symbols.length === 0) return new Map();
      const data = await call(buildDepthRequest(ep, symbols.map((s) => s.symbol)), ctx);
      return data === NOT_FOUND || data === null ? new Map() : parseDepthBatch(data, byCanonical(symbols), units, r, check('depth'));
    },

    getCandles: candles,

    async getIntraday(symbol, ctx) {
      const data = await call(buildIntradayRequest(ep, symbol.symbol), ctx);
      // Like /v1/klines, a miss is a 404 SYMBOL_NOT_FOUND or a payload naming no columns.
      const rows = data === NOT_FOUND ? undefined : parseKlineRows(data, symbol, units, r, check('intraday')(symbol.symbol));
      // prev_close passes through when the vendor sends it; otherwise the service looks it up.
      if (rows === undefined) return undefined;
      const bars = normaliseKlines(symbol, '1m', rows, units);
      // A contract's intraday is its newest trading day (a night and the day after it), whatever
      // calendar day the vendor's answer spans.
      const contract = isFuturesExchange(symbol.exchange) ? futuresContract(symbol) : undefined;
      return columns(symbol, contract === undefined ? bars : newestTradingDay(contract.key, bars));
    },

    async getExFactors(symbols, ctx) {
      // A futures contract has no corporate actions: an empty list, no vendor call.
      const contracts = symbols.filter((s) => isFuturesExchange(s.exchange));
      const equities = symbols.filter((s) => !isFuturesExchange(s.exchange));
      const out = new Map(contracts.map((s) => [s.symbol, []]));
      if (equities.length === 0) return out;
      const data = await call(buildExFactorsRequest(ep, equities.map((s) => s.symbol)), ctx);
      const found = data === NOT_FOUND || data === null ? new Map() : parseExFactors(data, byCanonical(equities), r, check('exFactors'));
      if (contracts.length === 0) return found;
      for (const [symbol, list] of found) out.set(symbol, list);
      return out;
    },

    async getInstruments(symbols, ctx) {
      if (symbols.length === 0) return new Map();
      const data = await call(buildInstrumentsRequest(ep, symbols.map((s) => s.symbol)), ctx);
      return data === NOT_FOUND || data === null ? new Map() : parseInstruments(data, byCanonical(symbols), r, check('instruments')(), localDate('CN', deps.now()));
    },

    async getFinancials(symbols, statement, ctx) {
      if (symbols.length === 0) return new Map();
      const data = await call(buildFinancialsRequest(ep, statement, symbols.map((s) => s.symbol)), ctx);
      return data === NOT_FOUND || data === null ? new Map() : parseFinancials(statement, data, byCanonical(symbols), r, check(FINANCIALS_RESOURCES[statement]));
    },

    async listPool(pool, ctx) {
      const universe = TICKFLOW_UNIVERSES[pool];
      if (universe === undefined) return undefined;
      const data = await call(buildUniverseRequest(ep, universe), ctx, true);
      return data === NOT_FOUND || data === null ? undefined : parseUniverse(data, pool, POOL_REGION[pool], r);
    },
  };
}
