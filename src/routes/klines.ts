// GET /v1/klines and /v1/klines/batch: historical candles, columnar, any period and adjustment,
// in JSON, CSV, Arrow or Parquet (http/formats). An answer cut by `count` says so: the next page's
// cursor (X-Next-End-Time, Link) on /v1/klines, X-Truncated-Symbols on the batch; one cut short
// by a limit rather than by count names it (X-Limited-By).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AdjustType, Candles, Period, SymbolRef } from '../domain.ts';
import { AppError } from '../errors.ts';
import { KlinesBatchQuery, KlinesQuery, dataOf, refs } from '../schemas.ts';
import type { BatchResult, CandleParams } from '../service/market-data.ts';
import { MAX_BASE_BARS } from '../service/candle-plan.ts';
import type { Produced } from '../http/respond.ts';
import { NEXT_PAGE_HEADERS, TRUNCATED_HEADERS, tableResponse } from '../http/formats/openapi.ts';
import { access, barsFor, oneSymbol, pageUrl, periodFeature, requireAccess, requireBarBudget, symbolList, timeRange, type RouteAccess } from './common.ts';
import type { RouteContext } from './context.ts';
import { ERROR_RESPONSES } from './errors-doc.ts';

interface KlinesInput {
  period?: Period;
  count?: number;
  start_time?: number;
  end_time?: number;
  adjust?: AdjustType;
}

function candleParams(query: KlinesInput): CandleParams {
  timeRange(query.start_time, query.end_time);
  return {
    period: query.period ?? '1d',
    count: query.count ?? 100,
    start: query.start_time,
    end: query.end_time,
    adjust: query.adjust ?? 'forward',
  };
}

/** A candle route's needs: the period's feature, the symbols, and the base bars it makes us build. */
function klinesAccess(batch: boolean): RouteAccess {
  return (request) => {
    const query = request.query as KlinesInput & { symbol?: string; symbols?: string };
    const params = candleParams(query);
    const feature = periodFeature(params.period);
    if (!batch) return { features: [feature], symbols: [oneSymbol(query.symbol ?? '')], bars: barsFor(1, params.period, params) };
    const symbols = symbolList(query.symbols);
    return { features: [feature, 'batch'], symbols, explicitCount: symbols.length, bars: barsFor(symbols.length, params.period, params) };
  };
}

/** The header that names a limit shortening the answer (docs/contract.md#limits). */
const LIMITED_BY_HEADER = {
  'X-Limited-By': {
    type: 'string',
    description: `The limits that made this answer shorter than count, comma-separated, each \`<name>; limit=<n>\`: \`base-bars\`, at most ${MAX_BASE_BARS['1m']} one-minute bars (minute periods) or ${MAX_BASE_BARS['1d']} daily bars (1d and longer) are read per symbol and request. The rest of the range is on the next pages (X-Next-End-Time and Link; on the batch route, the symbols in X-Truncated-Symbols). Absent when count alone cut the answer, or nothing did.`,
  },
};

function paramsKey(p: CandleParams): string {
  return `${p.period}|${p.count}|${p.start ?? ''}|${p.end ?? ''}|${p.adjust}`;
}

export default async function klinesRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get<{ Querystring: KlinesInput & { symbol: string } }>('/v1/klines', {
    config: access(klinesAccess(false)),
    schema: {
      operationId: 'getKlines',
      summary: 'Historical candles for one symbol',
      description: 'The newest `count` bars inside [start_time, end_time] (inclusive), or up to now without a range. Minute periods (1m…60m) need klines_minute, daily and longer need klines_daily. When older bars exist inside the range (without start_time: anywhere in the history), X-Next-End-Time and Link give the next, older page: following them loses and repeats no bar.',
      tags: ['klines'],
      querystring: KlinesQuery,
      response: { 200: tableResponse(dataOf(refs.Candles), 'candles', { ...NEXT_PAGE_HEADERS, ...LIMITED_BY_HEADER }), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const ref = oneSymbol(request.query.symbol);
    const params = candleParams(request.query);
    requireAccess(request);
    requireBarBudget(request, 1, params.period, params);
    return ctx.responder.respond(request, reply, { key: `klines|${ref.symbol}|${paramsKey(params)}`, resource: 'candles', table: 'candles' }, async (format) => {
      const result = await ctx.service.candles(ref, params);
      if (result === undefined) throw notFound(ref);
      const next = result.next === undefined ? undefined : {
        endTime: result.next,
        url: pageUrl('/v1/klines', {
          symbol: ref.symbol, period: params.period, count: params.count, adjust: params.adjust, start_time: params.start, end_time: result.next,
        }, format),
      };
      return { body: { data: result.candles }, status: result.status, next, limits: result.limits };
    });
  });

  app.get<{ Querystring: KlinesInput & { symbols: string } }>('/v1/klines/batch', {
    config: access(klinesAccess(true)),
    schema: {
      operationId: 'getKlinesBatch',
      summary: 'Historical candles for several symbols',
      description: 'Unknown symbols are omitted from `data` and listed in X-Missing-Symbols; symbols whose upstream failed are omitted and listed in X-Failed-Symbols (such a response is never cached). When every symbol failed upstream the answer is 502/503/504. Symbols cut by `count` (older bars exist in the range) are listed in X-Truncated-Symbols.',
      tags: ['klines'],
      querystring: KlinesBatchQuery,
      response: { 200: tableResponse(dataOf(Type.Record(Type.String(), refs.Candles)), 'candles-batch', { ...TRUNCATED_HEADERS, ...LIMITED_BY_HEADER }), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const symbols = symbolList(request.query.symbols);
    const params = candleParams(request.query);
    requireAccess(request);
    requireBarBudget(request, symbols.length, params.period, params);
    const key = `klines-batch|${symbols.map((r) => r.symbol).join(',')}|${paramsKey(params)}`;
    return ctx.responder.respond(request, reply, { key, resource: 'candles', table: 'candles-batch' }, async () => {
      const cut = new Set<string>();
      const limits = new Set<string>();
      const result = await ctx.service.perSymbol(symbols, async (ref) => {
        const one = await ctx.service.candles(ref, params, symbols.length);
        if (one?.next !== undefined) cut.add(ref.symbol);
        for (const limit of one?.limits ?? []) limits.add(limit);
        return one;
      });
      return { ...batchBody(result, cut), limits: [...limits] };
    });
  });
}

export function notFound(ref: SymbolRef): AppError {
  return new AppError('SYMBOL_NOT_FOUND', `symbol ${ref.symbol} not found`, { details: { symbol: ref.symbol } });
}

/** A candle batch as a response: data keyed by symbol; unknown, failed and cut (`cut`) symbols in headers. */
export function batchBody(result: BatchResult<Candles>, cut: ReadonlySet<string>): Produced {
  const data: Record<string, Candles> = {};
  const truncated: string[] = [];
  for (const [symbol, candles] of result.items) {
    data[symbol] = candles;
    if (cut.has(symbol)) truncated.push(symbol);
  }
  return { body: { data }, missing: result.unknown, failed: result.failed, status: result.status, truncated };
}
