// `sim`: the embedded, deterministic simulated market (docs/vendors.md#the-simulated-market). Real instruments,
// simulated prices; no network. Same request at the same `deps.now()` gives the same answer.

import type { Candles, Depth, ExFactor, Instrument, PoolDetail, PoolId, Quote, SymbolRef } from '../../src/domain.ts';
import type { Adapter, AdapterCapabilities, AdapterDeps, AdapterMethod, Serving, BySymbol, CallContext, CandleQuery, Resource } from '../types.ts';
import { rowCheck } from '../common/validate.ts';
import {
  checkBatch, checkCandles, checkDepthAnswer, checkExFactorList, checkQuotes, corruptCandles, corruptDepth, corruptExFactors,
  corruptInstrument, corruptQuotes, instrumentProblem,
} from './boundary.ts';
import { createFaultInjector } from './faults.ts';
import { SIM_POOLS, simPoolMembers, type SimInstrument } from './instruments.ts';
import { chunksToCandles, createSimMarket, MAX_MINUTE_BARS, minuteBarsToCandles, type MinuteChunk } from './market.ts';
import type { DailyHistory } from './daily.ts';
import { DEFAULT_MEMO_MAX_BYTES, MIN_MEMO_MAX_BYTES, memoBudget } from './memo.ts';
import { allocMinuteBars, type MinuteBars } from './minute.ts';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { buildDepth, buildInstrument, buildQuote } from './snapshot.ts';
import { syntheticSymbols } from './synthetic.ts';
import { actionParts } from './actions.ts';
import { createSimFinancials } from './financials.ts';
import { localDate } from '../../src/markets/calendar.ts';
import { isFuturesExchange } from '../../src/markets/futures.ts';
import { futuresDailyCandles, futuresInstrument, futuresIntraday, futuresMinuteCandles, futuresQuote, simContract, simFuturesSymbols } from './futures.ts';

import type { SimOptions } from './options.ts';

export type { SimOptions };

export const SIM_CAPABILITIES: AdapterCapabilities = Object.freeze({
  resources: Object.freeze({
    quotes: true, depth: true, candles: true, intraday: true, exFactors: true, instruments: true, pools: true,
    // Every statement in every market (adapters/sim/financials.ts).
    financialsIncome: true, financialsBalanceSheet: true, financialsCashFlow: true, financialsMetrics: true, financialsShares: true,
  }),
  markets: Object.freeze(['CN', 'HK', 'US', 'CN_FUTURES']) as AdapterCapabilities['markets'],
  periods: Object.freeze({ '1m': true, '1d': true }),
  maxBatch: 500,
  rawPrices: true,
  amount: true,
}) as AdapterCapabilities;

const MINUTE_SLICE = 5_000;

const NO_MINUTES: MinuteBars = allocMinuteBars(0);

export function createSimAdapter(options: SimOptions, deps: AdapterDeps): Serving<AdapterMethod> {
  const memoMaxBytes = Number(options.memoMaxBytes ?? DEFAULT_MEMO_MAX_BYTES);
  if (!Number.isFinite(memoMaxBytes) || memoMaxBytes < MIN_MEMO_MAX_BYTES) {
    throw new Error(`adapters.sim.memoMaxBytes must be a number of bytes ≥ ${MIN_MEMO_MAX_BYTES}, got ${String(options.memoMaxBytes)}`);
  }
  const market = createSimMarket({ syntheticUniverse: options.syntheticUniverse, memoMaxBytes });
  const injector = createFaultInjector(options.latency, options.faults);
  const synthetic = syntheticSymbols(Math.max(0, Math.floor(options.syntheticUniverse ?? 0)));
  const financials = createSimFinancials(memoBudget(memoMaxBytes).statements);

  const check = (resource: Resource, symbol?: string) => rowCheck('sim', deps.onInvalidRows, resource, symbol);
  /** Candles through the boundary checks (with the injected malformed row, if this call drew one). */
  const checked = (c: Candles | undefined, resource: Resource, symbol: string): Candles | undefined => {
    if (c === undefined) return undefined;
    const rows = check(resource, symbol);
    const out = checkCandles(corruptCandles(c, injector.corruption()), rows);
    rows.flush();
    return out;
  };

  const gate = async (ctx: CallContext | undefined): Promise<void> => {
    const wait = injector.before(ctx?.signal);
    if (wait !== undefined) await wait;
  };

  /** A futures contract the sim lists at `now` (futures live in ./futures.ts, apart from the equity model). */
  const contractOf = (ref: SymbolRef, now: number) => simContract(ref, localDate('CN', now));

  /** Runs `build` for each known symbol at one instant; unknown symbols stay absent. */
  const bySymbol = <T>(
    symbols: SymbolRef[], build: (inst: SimInstrument, now: number) => T | undefined,
    futures?: (contract: NonNullable<ReturnType<typeof simContract>>, now: number) => T | undefined,
  ): BySymbol<T> => {
    const now = deps.now();
    const out: BySymbol<T> = new Map();
    for (const ref of symbols) {
      if (isFuturesExchange(ref.exchange)) {
        const contract = futures === undefined ? undefined : contractOf(ref, now);
        const value = contract === undefined ? undefined : futures!(contract, now);
        if (value !== undefined) out.set(ref.symbol, value);
        continue;
      }
      const inst = market.instrument(ref.symbol);
      if (inst === undefined || out.has(inst.symbol)) continue;
      const value = build(inst, now);
      if (value !== undefined) out.set(inst.symbol, value);
    }
    return out;
  };

  /**
   * Long minute windows are generated newest-first in slices of MINUTE_SLICE bars with a turn of
   * the event loop between them: the sim runs in the service's process, and 120,000 bars in one
   * go would hold every other request (a real vendor's bars arrive over a socket instead).
   */
  const minutesInSlices = async (inst: SimInstrument, held: DailyHistory, window: { start?: number; end?: number; count?: number }, now: number): Promise<Candles> => {
    const wanted = window.count ?? MAX_MINUTE_BARS;
    if (wanted <= MINUTE_SLICE) return market.minuteCandles(inst, window, now, held);
    // Slices are kept as ranges of days' bars and copied once at the end.
    const chunks: MinuteChunk[] = [];
    let end = window.end;
    let left = wanted;
    while (left > 0) {
      const slice = market.minuteChunks(inst, { start: window.start, end, count: Math.min(MINUTE_SLICE, left) }, now, held);
      let n = 0;
      for (const chunk of slice) n += chunk.to - chunk.from + 1;
      if (n === 0) break;
      for (const chunk of slice) chunks.push(chunk);
      left -= n;
      const oldest = slice[slice.length - 1];
      end = oldest.minutes.timestamp[oldest.from] - 1;
      if (n < Math.min(MINUTE_SLICE, left + n)) break;
      await yieldToLoop();
    }
    if (chunks.length > 0) return chunksToCandles(chunks);
    // No bars at all: the shape slices joined to before (no prev_close column).
    return { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] };
  };

  return {
    id: 'sim',
    label: 'sim',
    capabilities: SIM_CAPABILITIES,

    async getQuotes(symbols, ctx): Promise<BySymbol<Quote>> {
      await gate(ctx);
      const quotes = bySymbol(symbols, (inst, now) => {
        const day = market.sessionDay(inst, now);
        return day === undefined ? undefined : buildQuote(inst, day, now);
      }, futuresQuote);
      return checkQuotes(corruptQuotes([...quotes.values()], injector.corruption()), check('quotes'));
    },

    async getDepth(symbols, ctx): Promise<BySymbol<Depth>> {
      await gate(ctx);
      const kind = injector.corruption();
      let first = true;
      const books = bySymbol(symbols, (inst, now) => {
        // An index has no order book.
        if (inst.type === 'index') return undefined;
        const day = market.sessionDay(inst, now);
        if (day === undefined) return undefined;
        const book = buildDepth(inst, day, now);
        const spoiled = first ? corruptDepth(book, kind) : book;
        first = false;
        return spoiled;
      });
      return checkBatch(books, (symbol, d) => checkDepthAnswer(d, check('depth', symbol)), check('depth'));
    },

    async getCandles(query: CandleQuery, ctx): Promise<Candles | undefined> {
      await gate(ctx);
      if (isFuturesExchange(query.symbol.exchange)) {
        const now = deps.now();
        const contract = contractOf(query.symbol, now);
        if (contract === undefined) return undefined;
        const window = { start: query.start, end: query.end, count: query.count };
        return checked(query.period === '1m' ? futuresMinuteCandles(contract, window, now) : futuresDailyCandles(contract, window, now), 'candles', query.symbol.symbol);
      }
      const inst = market.instrument(query.symbol.symbol);
      if (inst === undefined) return undefined;
      const now = deps.now();
      // The history is held for the whole request (its slices yield to the loop in between).
      const held = await market.prepare(inst, now);
      const window = { start: query.start, end: query.end, count: query.count };
      const c = query.period === '1m' ? await minutesInSlices(inst, held, window, now) : market.dailyCandles(inst, window, now, held);
      return checked(c, 'candles', inst.symbol);
    },

    async getIntraday(symbol, ctx): Promise<Candles | undefined> {
      await gate(ctx);
      if (isFuturesExchange(symbol.exchange)) {
        const now = deps.now();
        const contract = contractOf(symbol, now);
        return contract === undefined ? undefined : checked(futuresIntraday(contract, now), 'intraday', symbol.symbol);
      }
      const inst = market.instrument(symbol.symbol);
      if (inst === undefined) return undefined;
      const now = deps.now();
      const day = market.sessionDay(inst, now);
      // A not-yet-listed or suspended instrument has an empty day, not an unknown symbol.
      return checked(minuteBarsToCandles(day?.minutes() ?? NO_MINUTES, day?.prevClose ?? 0), 'intraday', inst.symbol);
    },

    async getExFactors(symbols, ctx): Promise<BySymbol<ExFactor[]>> {
      await gate(ctx);
      const kind = injector.corruption();
      let first = true;
      const lists = bySymbol(symbols, (inst, now) => {
        const history = market.recent(inst, now);
        const out: ExFactor[] = [];
        for (const event of history.events) {
          if (event.timestamp > now) break;
          out.push({ timestamp: event.timestamp, ex_factor: event.factor, ...actionParts(event.cash, event.shareRatio) });
        }
        const spoiled = first ? corruptExFactors(out, kind) : out;
        first = false;
        return spoiled;
      }, () => []);
      return checkBatch(lists, (symbol, events) => {
        const rows = check('exFactors', symbol);
        const out = checkExFactorList(events, rows);
        rows.flush();
        return out;
      }, check('exFactors'));
    },

    async getInstruments(symbols, ctx): Promise<BySymbol<Instrument>> {
      await gate(ctx);
      const kind = injector.corruption();
      let first = true;
      const found = bySymbol(symbols, (inst, now) => {
        const i = buildInstrument(inst, market.sessionDay(inst, now));
        const spoiled = first ? corruptInstrument(i, kind) : i;
        first = false;
        return spoiled;
      }, futuresInstrument);
      return checkBatch(found, (symbol, i) => {
        const problem = instrumentProblem(i);
        if (problem === undefined) return i;
        const rows = check('instruments', symbol);
        rows.drop(problem);
        rows.flush();
        return undefined;
      }, check('instruments'));
    },

    async getFinancials(symbols, statement, ctx) {
      await gate(ctx);
      // The statements published by the session date, from the history's plan and paid events.
      // An index publishes no statements.
      return bySymbol(symbols, (inst, now) => inst.type === 'index' ? undefined : financials.series(inst, () => market.recent(inst, now), localDate(inst.region, now), statement));
    },

    async listPool(pool: PoolId, ctx): Promise<PoolDetail | undefined> {
      await gate(ctx);
      const summary = SIM_POOLS.find((p) => p.id === pool);
      if (summary === undefined) return undefined;
      const symbols = simPoolMembers(pool).map((inst) => inst.symbol);
      if (pool === 'US_Stock') symbols.push(...synthetic);
      return { id: summary.id, name: summary.name, region: summary.region, category: summary.category, symbol_count: symbols.length, symbols };
    },

    async ready(): Promise<boolean> {
      return true;
    },
  };
}
