// GET /v1/klines and /v1/klines/batch: historical candles, columnar, any period and adjustment.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AdjustType, Candles, Period, SymbolRef } from '../domain.ts';
import { AppError } from '../errors.ts';
import { KlinesBatchQuery, KlinesQuery, dataOf, refs } from '../schemas.ts';
import type { BatchResult, CandleParams } from '../service/market-data.ts';
import type { Produced } from '../http/respond.ts';
import { oneSymbol, periodFeature, requireAccess, requireBarBudget, symbolList, timeRange } from './common.ts';
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

function paramsKey(p: CandleParams): string {
  return `${p.period}|${p.count}|${p.start ?? ''}|${p.end ?? ''}|${p.adjust}`;
}

export default async function klinesRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get<{ Querystring: KlinesInput & { symbol: string } }>('/v1/klines', {
    schema: {
      summary: 'Historical candles for one symbol',
      description: 'The newest `count` bars inside [start_time, end_time] (inclusive), or up to now without a range. Minute periods (1m…60m) need klines_minute, daily and longer need klines_daily.',
      tags: ['klines'],
      querystring: KlinesQuery,
      response: { 200: dataOf(refs.Candles), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const ref = oneSymbol(request.query.symbol);
    const params = candleParams(request.query);
    requireAccess(request, { features: [periodFeature(params.period)], symbols: [ref] });
    requireBarBudget(request, 1, params.period, params);
    return ctx.responder.respond(request, reply, { key: `klines|${ref.symbol}|${paramsKey(params)}`, resource: 'candles' }, async () => {
      const result = await ctx.service.candles(ref, params);
      if (result === undefined) throw notFound(ref);
      return { body: { data: result.candles }, status: result.status };
    });
  });

  app.get<{ Querystring: KlinesInput & { symbols: string } }>('/v1/klines/batch', {
    schema: {
      summary: 'Historical candles for several symbols',
      description: 'Unknown symbols are omitted from `data` and listed in X-Missing-Symbols; symbols whose upstream failed are omitted and listed in X-Failed-Symbols (such a response is never cached). When every symbol failed upstream the answer is 502/503/504.',
      tags: ['klines'],
      querystring: KlinesBatchQuery,
      response: { 200: dataOf(Type.Record(Type.String(), refs.Candles)), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const symbols = symbolList(request.query.symbols);
    const params = candleParams(request.query);
    requireAccess(request, { features: [periodFeature(params.period), 'batch'], symbols, explicitCount: symbols.length });
    requireBarBudget(request, symbols.length, params.period, params);
    const key = `klines-batch|${symbols.map((r) => r.symbol).join(',')}|${paramsKey(params)}`;
    return ctx.responder.respond(request, reply, { key, resource: 'candles' }, async () =>
      batchBody(await ctx.service.perSymbol(symbols, (ref) => ctx.service.candles(ref, params))));
  });
}

export function notFound(ref: SymbolRef): AppError {
  return new AppError('SYMBOL_NOT_FOUND', `symbol ${ref.symbol} not found`, { details: { symbol: ref.symbol } });
}

/** A candle batch as a response: data keyed by symbol, unknown and failed symbols in headers. */
export function batchBody(result: BatchResult<Candles>): Produced {
  const data: Record<string, Candles> = {};
  for (const [symbol, candles] of result.items) data[symbol] = candles;
  return { body: { data }, missing: result.unknown, failed: result.failed, status: result.status };
}
