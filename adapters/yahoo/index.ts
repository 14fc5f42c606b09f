// Yahoo Finance adapter over the crumb-free v8 chart API (docs/vendors.md#yahoo-finance): candles (raw,
// by undoing splits), intraday 1m, dividends and splits → ex-factors, quotes and instrument
// metadata from chart `meta`. No depth, no traded amount, no pools.

import type { Candles, Region, SymbolRef } from '../../src/domain.ts';
import { AppError } from '../../src/errors.ts';
import type { ExFactor } from '../../src/domain.ts';
import { localDate } from '../../src/markets/calendar.ts';
import type { Adapter, AdapterCapabilities, AdapterDeps, AdapterMethod, Serving, BySymbol, CallContext, CandleQuery, Resource, UpstreamHttp } from '../types.ts';
import { emptyCandles } from '../../src/candles/window.ts';
import { isListingFirstBar, normaliseDaily, normaliseMinutes, toCandles, windowBars, type Bar } from '../common/bars.ts';
import { checkExFactorList, mapLimit, payloadReader, reject, rowCheck, settleBatch } from '../common/validate.ts';
import { ADAPTER_ID, NOT_FOUND, NO_DATA, readChart } from './errors.ts';
import { chartPrevClose, parseChart, parseInstrument, parseQuote, toEndLabels, type Chart, type Split } from './parse.ts';
import { unsplit, yahooExFactors } from './raw.ts';
import { buildChartRequest, yahooSymbol, type ChartParams, type YahooWire } from './requests.ts';
import { DAY_MS } from '../../src/markets/time.ts';

import { buildTimeseriesRequests, readTimeseries, sourcesOf, statementRecords, uniqueShareDates, type TimeseriesPeriod } from './financials.ts';
import { deriveMetricsSeries } from '../../src/financials/derive.ts';
import { compareRecords } from '../../src/financials/select.ts';
import type { Statement, StatementRecord, StatementSet } from '../../src/financials/types.ts';
import { YAHOO_DEFAULTS, type YahooOptions } from './options.ts';

export type { YahooOptions };

const FINANCIALS_MARKETS: Region[] = ['US', 'HK'];

export function yahooCapabilities(maxBatch: number): AdapterCapabilities {
  return {
    resources: {
      quotes: true, depth: false, candles: true, intraday: true, exFactors: true, instruments: true, pools: false,
      // The four statements from fundamentals-timeseries and the metrics derived from them, US and
      // HK (financials.ts); Yahoo has no A-share statements.
      financialsIncome: true, financialsBalanceSheet: true, financialsCashFlow: true, financialsMetrics: true, financialsShares: true,
    },
    // No CN_FUTURES: Yahoo lists no China futures contracts.
    markets: ['CN', 'HK', 'US'],
    resourceMarkets: {
      financialsIncome: FINANCIALS_MARKETS, financialsBalanceSheet: FINANCIALS_MARKETS, financialsCashFlow: FINANCIALS_MARKETS,
      financialsMetrics: FINANCIALS_MARKETS, financialsShares: FINANCIALS_MARKETS,
    },
    periods: { '1m': true, '1d': true },
    maxBatch,
    rawPrices: true,
    amount: false,
    // Its 1m chart reaches back 30 calendar days: about 20 trading days (docs/vendors.md).
    historyDays: { '1m': 20 },
  };
}

const DAY_S = 86_400;

export function createYahooAdapter(options: YahooOptions, deps: AdapterDeps): Serving<Exclude<AdapterMethod, 'listPool' | 'getDepth'>> {
  const http: UpstreamHttp | undefined = deps.http;
  if (!http) throw new Error('yahoo adapter needs deps.http');
  const wire: YahooWire = {
    baseUrl: options.baseUrl ?? YAHOO_DEFAULTS.baseUrl,
    userAgent: options.userAgent ?? YAHOO_DEFAULTS.userAgent,
  };
  const concurrency = options.concurrency ?? YAHOO_DEFAULTS.concurrency;
  const spanS = Math.min(7, options.minuteDaysPerRequest ?? YAHOO_DEFAULTS.minuteDaysPerRequest) * DAY_S;
  // [verify] chose 29 days rather than 30, so a request at the edge is not refused.
  const lookbackMs = (options.minuteLookbackDays ?? YAHOO_DEFAULTS.minuteLookbackDays) * DAY_MS;
  const r = payloadReader(ADAPTER_ID);
  const check = (resource: Resource, symbol?: string) => rowCheck(ADAPTER_ID, deps.onInvalidRows, resource, symbol);
  const EMPTY: Chart = { meta: {}, rows: [], dividends: [], splits: [] };

  /** undefined: unknown ticker; an empty chart: a known ticker with nothing in the window. */
  async function chart(ref: SymbolRef, p: ChartParams, resource: Resource, ctx?: CallContext): Promise<Chart | undefined> {
    const res = await http!.request({ ...buildChartRequest(wire, yahooSymbol(ref), p, resource), signal: ctx?.signal, deadlineAt: ctx?.deadlineAt });
    const result = readChart(res, r);
    if (result === NOT_FOUND) return undefined;
    return result === NO_DATA ? EMPTY : parseChart(result, r, check(resource, ref.symbol));
  }

  /** `one` answers NOT_FOUND for an unknown ticker, undefined for one whose data was all invalid. */
  async function perSymbol<T>(
    symbols: SymbolRef[], resource: Resource, one: (ref: SymbolRef) => Promise<T | undefined | typeof NOT_FOUND>,
  ): Promise<BySymbol<T>> {
    const values = await mapLimit(symbols, concurrency, one);
    const out: BySymbol<T> = new Map<string, T>();
    let sent = 0;
    symbols.forEach((s, i) => {
      const v = values[i];
      if (v === NOT_FOUND) return;
      sent++;
      if (v !== undefined) out.set(s.symbol, v);
      else reject(out, s.symbol);
    });
    settleBatch(check(resource), sent, out.size);
    return out;
  }

  /** Daily: one request reaching up to now, so every split after the window is seen. */
  async function daily(query: CandleQuery, ctx?: CallContext): Promise<Candles | undefined> {
    const ref = query.symbol;
    const now = deps.now();
    const endS = Math.floor((query.end ?? now) / 1000);
    const period1 = query.start !== undefined
      ? Math.floor(query.start / 1000)
      // Two calendar days per wanted bar covers weekends and the longest holiday runs.
      : query.count !== undefined ? Math.max(0, endS - (query.count * 2 + 30) * DAY_S) : 0;
    const c = await chart(ref, { interval: '1d', period1, period2: Math.floor(now / 1000) + DAY_S, events: true }, 'candles', ctx);
    if (c === undefined) return undefined;
    const daily = normaliseDaily(ref.region, c.rows);
    // A listing's first session has no previous close, whatever meta says: its open stands in.
    const first = isListingFirstBar(ref.region, daily[0], c.firstTrade) ? daily[0].open : c.previousClose;
    const bars = unsplit(ref.region, answerPrevCloses(daily, first), c.splits, c.decimals);
    return toCandles(windowBars(bars, query.start, query.end, query.count));
  }

  /** 1m: newest chunk first, ≤ 7 days each, never older than the lookback; stops once `count` is covered. */
  async function minutes(query: CandleQuery, ctx?: CallContext): Promise<Candles | undefined> {
    const ref = query.symbol;
    const now = deps.now();
    const endMs = Math.min(query.end ?? now, now);
    // A trading day has at most 390 one-minute bars (US); 240 (CN) is the conservative divisor.
    const guess = query.count === undefined ? undefined : endMs - (Math.ceil((query.count / 240) * 1.5) + 4) * DAY_MS;
    const startMs = Math.max(query.start ?? guess ?? 0, now - lookbackMs);
    if (startMs > endMs) return emptyCandles();
    // Yahoo stamps bar starts: labels in [start, end] are starts in [start − 60 s, end − 60 s],
    // plus a closing print stamped at the close itself, which folds into the last bar (≤ end).
    const firstS = Math.floor(startMs / 1000) - 60;
    let chunkEndS = Math.ceil(endMs / 1000) + 60;
    const rows: Bar[] = [];
    const splits: Split[] = [];
    let seen = false;
    let decimals: number | undefined;
    while (chunkEndS > firstS) {
      const chunkStartS = Math.max(firstS, chunkEndS - spanS);
      const c = await chart(ref, { interval: '1m', period1: chunkStartS, period2: chunkEndS, events: true }, 'candles', ctx);
      if (c === undefined) {
        if (!seen) return undefined;
        break;
      }
      seen = true;
      decimals ??= c.decimals;
      rows.push(...c.rows);
      splits.push(...c.splits);
      chunkEndS = chunkStartS;
      if (query.count !== undefined && rows.length >= query.count + 2) break;
    }
    if (localDate(ref.region, endMs) < localDate(ref.region, now)) {
      // Splits after the window move its prices too: ask for events up to now (daily rows are few).
      const later = await chart(ref, { interval: '1d', period1: Math.floor(endMs / 1000), period2: Math.floor(now / 1000) + DAY_S, events: true }, 'candles', ctx);
      if (later !== undefined) splits.push(...later.splits);
    }
    const unique = [...new Map(splits.map((s) => [s.t, s])).values()];
    const bars = unsplit(ref.region, normaliseMinutes(ref.region, toEndLabels(rows)), unique, decimals);
    return toCandles(windowBars(bars, query.start, query.end, query.count));
  }

  /** The latest session's chart; NOT_FOUND for an unknown ticker or one with no session at all. */
  const latest = async (ref: SymbolRef, resource: Resource, ctx?: CallContext): Promise<Chart | typeof NOT_FOUND> => {
    const c = await chart(ref, { interval: '1d', range: '1d' }, resource, ctx);
    return c === undefined || c === EMPTY ? NOT_FOUND : c;
  };

  /**
   * One symbol's series of `statement`, annual then quarterly, ascending (empty: no data). Only the
   * statement's types are asked; metrics ask for the four statements' types at once and derive
   * the record from them (src/financials/derive.ts). Each frequency may take several requests
   * (the type list is chunked to keep URLs short); a 404 on any means no data for the symbol.
   */
  async function timeseries(ref: SymbolRef, statement: Statement, period2: number, ctx?: CallContext): Promise<StatementRecord<Statement>[]> {
    const sets: Partial<StatementSet> = {};
    for (const frequency of ['annual', 'quarterly'] as const) {
      const periods = new Map<string, TimeseriesPeriod>();
      for (const request of buildTimeseriesRequests(wire, yahooSymbol(ref), statement, frequency, 0, period2)) {
        const res = await http!.request({ ...request, signal: ctx?.signal, deadlineAt: ctx?.deadlineAt });
        if (res.status === 404) return [];
        if (res.status !== 200) throw new AppError('UPSTREAM_ERROR', 'The upstream data source answered with an error', { details: { adapter: ADAPTER_ID, status: res.status } });
        readTimeseries(res.text, frequency, r, periods);
      }
      for (const source of sourcesOf(statement)) {
        (sets[source] as StatementRecord<Statement>[] | undefined) ??= [];
        (sets[source] as StatementRecord<Statement>[]).push(...statementRecords(source, periods.values()));
      }
    }
    const statementSet = {
      income: [], balance_sheet: [], cash_flow: [], ...sets,
      shares: uniqueShareDates(sets.shares ?? []),
    } as Omit<StatementSet, 'metrics'>;
    for (const list of Object.values(statementSet)) list.sort(compareRecords);
    const records = statement === 'metrics' ? deriveMetricsSeries(statementSet) : statementSet[statement];
    return [...records].sort(compareRecords);
  }

  return {
    id: ADAPTER_ID,
    label: options.label ?? 'yahoo',
    capabilities: yahooCapabilities(options.maxBatch ?? YAHOO_DEFAULTS.maxBatch),

    async getFinancials(symbols, statement, ctx) {
      const out: BySymbol<StatementRecord<typeof statement>[]> = new Map();
      // capabilities: US and HK; a CN symbol is never asked (left out, never an error).
      const refs = symbols.filter((s) => s.region !== 'CN');
      const period2 = Math.floor(deps.now() / 1000);
      const series = await mapLimit(refs, concurrency, (ref) => timeseries(ref, statement, period2, ctx));
      refs.forEach((ref, i) => {
        if (series[i].length > 0) out.set(ref.symbol, series[i] as StatementRecord<typeof statement>[]);
      });
      return out;
    },

    getQuotes(symbols, ctx) {
      return perSymbol(symbols, 'quotes', async (ref) => {
        const c = await latest(ref, 'quotes', ctx);
        return c === NOT_FOUND ? NOT_FOUND : parseQuote(c, ref, deps.now(), r, check('quotes', ref.symbol));
      });
    },

    getCandles(query, ctx) {
      return query.period === '1d' ? daily(query, ctx) : minutes(query, ctx);
    },

    async getIntraday(symbol, ctx) {
      // Today's session only, so no split can come after it.
      const c = await chart(symbol, { interval: '1m', range: '1d' }, 'intraday', ctx);
      if (c === undefined) return undefined;
      const bars = normaliseMinutes(symbol.region, toEndLabels(c.rows));
      // The previous session's close comes in the same answer (meta), so no second lookup; on the
      // listing's first session there is none, whatever meta says (the open stands in).
      const first = isListingFirstBar(symbol.region, bars[0], c.firstTrade) ? undefined : chartPrevClose(c, r);
      return toCandles(bars.map((b, k) => ({ ...b, prevClose: k === 0 ? first ?? b.open : bars[k - 1].close })));
    },

    getExFactors(symbols, ctx) {
      return perSymbol(symbols, 'exFactors', async (ref): Promise<ExFactor[] | undefined | typeof NOT_FOUND> => {
        const c = await chart(ref, { interval: '1d', period1: 0, period2: Math.floor(deps.now() / 1000) + DAY_S, events: true }, 'exFactors', ctx);
        if (c === undefined) return NOT_FOUND;
        const events = check('exFactors', ref.symbol);
        const list = checkExFactorList(yahooExFactors(ref.region, normaliseDaily(ref.region, c.rows), c.dividends, c.splits, events), events);
        events.flush();
        return list;
      });
    },

    getInstruments(symbols, ctx) {
      return perSymbol(symbols, 'instruments', async (ref) => {
        const c = await latest(ref, 'instruments', ctx);
        return c === NOT_FOUND ? NOT_FOUND : parseInstrument(c, ref, r, check('instruments', ref.symbol));
      });
    },
  };
}

/**
 * The vendor's previous close on every bar of one answer: the first bar gets meta.chartPreviousClose
 * (the close before the answer's first bar; its own open on the listing's first session), each
 * later one the close before it in the answer, so a window that starts inside the answer keeps the
 * vendor's own value. Without chartPreviousClose the first bar has none and the column is left out
 * (docs/contract.md#details: the open stands in for it).
 */
function answerPrevCloses(bars: Bar[], first: number | undefined): Bar[] {
  return bars.map((b, k) => {
    const prevClose = k === 0 ? first : bars[k - 1].close;
    return prevClose === undefined ? b : { ...b, prevClose };
  });
}
