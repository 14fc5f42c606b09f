// GET /v1/klines/market: one day of a whole universe (or a list of symbols) as one columnar table
// with a symbol column, in every table format (JSON, CSV, Arrow, Parquet). Each symbol's day is a
// candle window like any other (memory → store → vendor, at the vendor's pace), adjusted as on
// /v1/klines. Symbols without a bar that day are named in X-Missing-Symbols. The answer is bounded
// by the plan's max_bars (its base bars), not by max_symbols: a larger one pages, `cursor` being
// the offset of the next page's first symbol (Link rel="next").
import type { FastifyInstance, FastifyRequest } from 'fastify';
import pLimit from 'p-limit';
import { Type } from 'typebox';
import type { AdjustType, BasePeriod, Candles, Region, SymbolRef } from '../domain.ts';
import { emptyStatus, mergeStatus } from '../data/status.ts';
import { AppError, isAppError } from '../errors.ts';
import { firstStoredAdapter, storedDay } from '../service/market-day.ts';
import type { Produced } from '../http/respond.ts';
import { tableResponse } from '../http/formats/openapi.ts';
import { addDays, holidayName, isTradingDay, localDate, localMidnight, minuteBarLabelCount } from '../markets/calendar.ts';
import { POOL_REGION, resolvePoolId } from '../markets/pools.ts';
import { parseSymbol } from '../markets/symbols.ts';
import { Adjust, FormatParam, dataOf } from '../schemas.ts';
import { access, keyOf, pageUrl, periodFeature, requireAccess, symbolList } from './common.ts';
import type { StoreRouteContext } from './coverage.ts';
import { ERROR_RESPONSES } from './errors-doc.ts';

export const MarketDayQuery = Type.Object({
  universe: Type.Optional(Type.String({ minLength: 1, description: 'A universe id: CN_Stock, CN_ETF, HK_Stock, US_Stock, or an alias (CN_Equity_A, HK_Equity, US_Equity). Exactly one of universe and symbols' })),
  symbols: Type.Optional(Type.String({ minLength: 1, description: 'Comma-separated symbols, e.g. 600519.SH,000001.SZ' })),
  period: Type.Optional(Type.Union([Type.Literal('1d'), Type.Literal('1m')], { description: 'Default 1d: one bar per symbol; 1m: the day\'s minute bars' })),
  date: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'The session, YYYY-MM-DD (exchange-local)' }),
  adjust: Type.Optional(Adjust),
  cursor: Type.Optional(Type.Integer({ minimum: 0, description: 'The next page\'s first symbol (offset into the universe or list), from the Link header of the page before' })),
  format: FormatParam,
});

interface MarketDayInput {
  universe?: string;
  symbols?: string;
  period?: BasePeriod;
  date: string;
  adjust?: AdjustType;
  cursor?: number;
}

const MarketDayColumns = Type.Object({
  symbol: Type.Array(Type.String()),
  timestamp: Type.Array(Type.Integer()),
  open: Type.Array(Type.Number()),
  high: Type.Array(Type.Number()),
  low: Type.Array(Type.Number()),
  close: Type.Array(Type.Number()),
  volume: Type.Array(Type.Number()),
  amount: Type.Array(Type.Number()),
  prev_close: Type.Optional(Type.Array(Type.Union([Type.Number(), Type.Null()]))),
}, { description: 'One columnar table: a row per symbol and bar, symbols in universe (or request) order' });

const LINK_HEADER = {
  Link: { type: 'string', description: 'When more symbols follow: `<url of the next page>; rel="next"` (RFC 8288), the same request with `cursor` set to the next page\'s first symbol.' },
};

function inputOf(request: FastifyRequest): MarketDayInput {
  return request.query as MarketDayInput;
}

function oneOf(query: MarketDayInput): 'universe' | 'symbols' {
  const hasUniverse = query.universe !== undefined && query.universe !== '';
  const hasSymbols = query.symbols !== undefined && query.symbols !== '';
  if (hasUniverse === hasSymbols) throw new AppError('INVALID_PARAMETER', 'give exactly one of universe and symbols');
  return hasUniverse ? 'universe' : 'symbols';
}

function poolOf(universe: string) {
  const id = resolvePoolId(universe);
  if (id === undefined) {
    throw new AppError('INVALID_UNIVERSE', `unknown universe '${universe.slice(0, 40)}': use CN_Stock, CN_ETF, HK_Stock, US_Stock (or CN_Equity_A, HK_Equity, US_Equity)`, {
      details: { universe: universe.slice(0, 40) },
    });
  }
  return id;
}

/** By symbols: the period's feature and those symbols' markets; by universe: also `pools`, and its market. */
function marketDayAccess(request: FastifyRequest) {
  const query = inputOf(request);
  const feature = periodFeature(query.period ?? '1d');
  if (oneOf(query) === 'symbols') return { features: [feature], symbols: symbolList(query.symbols) };
  return { features: [feature, 'pools' as const], regions: [POOL_REGION[poolOf(query.universe!)]] };
}

/** Base bars one symbol's day holds at most. */
function barsPerSymbol(region: Region, period: BasePeriod, date: string): number {
  return period === '1d' ? 1 : minuteBarLabelCount(region, date, 1);
}

/** The window of `date`'s session in `region`. */
function dayWindow(region: Region, date: string): { start: number; end: number } {
  return { start: localMidnight(region, date), end: localMidnight(region, addDays(date, 1)) - 1 };
}

export default async function marketDayRoutes(app: FastifyInstance, ctx: StoreRouteContext): Promise<void> {
  app.get<{ Querystring: MarketDayInput }>('/v1/klines/market', {
    config: access(marketDayAccess),
    schema: {
      operationId: 'getKlinesMarket',
      summary: 'One day of a whole universe (or a list of symbols)',
      description: 'One columnar table with a symbol column: each symbol\'s bar (1d) or minute bars (1m) of `date`, adjusted as on /v1/klines (default forward). Served from the candle store; what it lacks is fetched like any window. Symbols with no bar that day (unknown, suspended, not yet listed) are named in X-Missing-Symbols, those whose upstream failed in X-Failed-Symbols. Needs klines_daily (1d) or klines_minute (1m), and pools for a universe. Bounded by the plan\'s max_bars (symbols × bars a session holds), not by max_symbols: a larger answer pages by symbol, with the next page in the Link header. A date that is a trading day in none of the symbols\' markets (naming the holiday), or that has not begun in any of them, is 400 INVALID_PARAMETER.',
      tags: ['klines'],
      querystring: MarketDayQuery,
      response: { 200: tableResponse(dataOf(MarketDayColumns), 'market-day', LINK_HEADER), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const query = request.query;
    const by = oneOf(query);
    const period = query.period ?? '1d';
    const adjust = query.adjust ?? 'forward';
    const date = query.date;
    if (!Number.isFinite(Date.parse(`${date}T00:00:00Z`))) throw new AppError('INVALID_PARAMETER', `date is not a date: ${date}`, { details: { parameter: 'date' } });
    requireAccess(request);
    let refs: SymbolRef[];
    let listKey: string;
    if (by === 'symbols') {
      refs = symbolList(query.symbols);
      listKey = `s|${refs.map((r) => r.symbol).join(',')}`;
    } else {
      const id = poolOf(query.universe!);
      const pool = await ctx.service.pool(id, POOL_REGION[id]);
      refs = (pool.value?.symbols ?? []).flatMap((symbol) => {
        const ref = parseSymbol(symbol);
        return ref === undefined ? [] : [ref];
      });
      listKey = `u|${id}`;
    }
    const regions = [...new Set(refs.map((r) => r.region))];
    if (regions.length > 0 && regions.every((region) => date > localDate(region, ctx.now()))) {
      throw new AppError('INVALID_PARAMETER', `${date} has not begun in any of the symbols' markets`, { details: { parameter: 'date', date } });
    }
    if (regions.length > 0 && !regions.some((region) => isTradingDay(region, date))) {
      const reasons = regions.map((region) => `${region}: ${holidayName(region, date) ?? 'closed'}`).join('; ');
      throw new AppError('INVALID_PARAMETER', `${date} is not a trading day (${reasons})`, { details: { parameter: 'date', date } });
    }
    // The page: symbols from `cursor` while their bars fit the plan's max_bars.
    const maxBars = keyOf(request).plan.maxBars;
    const from = query.cursor ?? 0;
    if (from > refs.length) throw new AppError('INVALID_PARAMETER', `cursor ${from} is past the last symbol (${refs.length})`, { details: { parameter: 'cursor' } });
    let to = from;
    let bars = 0;
    while (to < refs.length) {
      const each = barsPerSymbol(refs[to].region, period, date);
      if (bars + each > maxBars) break;
      bars += each;
      to += 1;
    }
    if (to === from && from < refs.length) {
      const each = barsPerSymbol(refs[from].region, period, date);
      throw new AppError('REQUEST_TOO_LARGE', `one symbol's ${period} day holds ${each} base bars; the plan allows ${maxBars} per request`, {
        details: { bars: each, max_bars: maxBars },
      });
    }
    const page = refs.slice(from, to);
    // The page's bounds are part of the key: plans with another max_bars page differently.
    const key = `klines-market|${listKey}|${period}|${date}|${adjust}|${from}-${to}`;
    return ctx.responder.respond(request, reply, { key, resource: 'candles', table: 'market-day' }, async (format) => {
      // At the vendor's pace: what the store lacks is fetched a few symbols at a time, leaving
      // half of each adapter's concurrent calls to other requests (a whole universe at once would
      // queue past the deadline).
      const limit = pLimit(Math.max(1, Math.floor(ctx.config.upstream.concurrency / 2)));
      const count = (ref: SymbolRef) => barsPerSymbol(ref.region, period, date);
      // What the store covers whole is read in one statement; the rest goes symbol by symbol.
      const stored = ctx.history.store === undefined
        ? { items: new Map<string, Candles>(), rest: page, status: emptyStatus() }
        : await storedDay({
          store: ctx.history.store, service: ctx.service, now: ctx.now, freshMs: ctx.config.cache.ttl.closedBarsMs, simulated: ctx.simulated,
          adapterFor: (region) => firstStoredAdapter(ctx.candleChain(region), ctx.history.offFor, ctx.simulated),
        }, page, period, date, adjust, count);
      let result = { items: new Map<string, Candles>(), failed: [] as string[], status: emptyStatus() };
      if (stored.rest.length > 0) {
        try {
          result = await ctx.service.perSymbol(stored.rest, (ref) => limit(() => ctx.service.candles(ref, { period, adjust, count: count(ref), ...dayWindow(ref.region, date) }, page.length)));
        } catch (error) {
          // Every symbol left for the vendor failed: with stored ones answered, that is a partial answer.
          if (stored.items.size === 0 || !isAppError(error) || error.status < 500) throw error;
          result.failed = stored.rest.map((r) => r.symbol);
          result.status.miss = true;
        }
      }
      for (const [symbol, candles] of stored.items) result.items.set(symbol, candles);
      const status = mergeStatus(stored.status, result.status);
      const produced: Produced = { ...columnsOf(page, result.items, new Set(result.failed)), failed: result.failed, status };
      if (to < refs.length) {
        produced.link = pageUrl('/v1/klines/market', { universe: query.universe, symbols: by === 'symbols' ? listKey.slice(2) : undefined, period, date, adjust, cursor: to }, format);
      }
      return produced;
    });
  });
}

/** The page's bars as one columnar table, symbols in page order; those without a bar are missing. */
function columnsOf(page: readonly SymbolRef[], items: ReadonlyMap<string, Candles>, failed: ReadonlySet<string>): Pick<Produced, 'body' | 'missing'> {
  const symbol: string[] = [];
  const columns = { timestamp: [] as number[], open: [] as number[], high: [] as number[], low: [] as number[], close: [] as number[], volume: [] as number[], amount: [] as number[] };
  const prev: (number | null)[] = [];
  let anyPrev = false;
  const missing: string[] = [];
  for (const ref of page) {
    const candles = items.get(ref.symbol);
    const n = candles?.timestamp.length ?? 0;
    if (candles === undefined || n === 0) {
      if (!failed.has(ref.symbol)) missing.push(ref.symbol);
      continue;
    }
    for (let i = 0; i < n; i++) {
      symbol.push(ref.symbol);
      columns.timestamp.push(candles.timestamp[i]);
      columns.open.push(candles.open[i]);
      columns.high.push(candles.high[i]);
      columns.low.push(candles.low[i]);
      columns.close.push(candles.close[i]);
      columns.volume.push(candles.volume[i]);
      columns.amount.push(candles.amount[i]);
      const p = candles.prev_close?.[i];
      if (p !== undefined && Number.isFinite(p)) anyPrev = true;
      prev.push(p !== undefined && Number.isFinite(p) ? p : null);
    }
  }
  const data = anyPrev ? { symbol, ...columns, prev_close: prev } : { symbol, ...columns };
  return { body: { data }, missing };
}
