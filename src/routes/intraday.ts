// GET /v1/klines/intraday and /v1/klines/intraday/batch: the latest session's minute candles.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { MinutePeriod } from '../domain.ts';
import { IntradayBatchQuery, IntradayQuery, dataOf, refs } from '../schemas.ts';
import { oneSymbol, requireAccess, symbolList } from './common.ts';
import type { RouteContext } from './context.ts';
import { ERROR_RESPONSES } from './errors-doc.ts';
import { batchBody, notFound } from './klines.ts';

interface IntradayInput {
  period?: MinutePeriod;
  count?: number;
}

const DESCRIPTION = "Today's session (or, before today's open and on closed days, the latest trading session) in minute bars labelled at their end. `start_time`/`end_time` are ignored.";

export default async function intradayRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get<{ Querystring: IntradayInput & { symbol: string } }>('/v1/klines/intraday', {
    schema: {
      summary: "Today's minute candles for one symbol",
      description: DESCRIPTION,
      tags: ['klines'],
      querystring: IntradayQuery,
      response: { 200: dataOf(refs.Candles), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const ref = oneSymbol(request.query.symbol);
    const period = request.query.period ?? '1m';
    const count = request.query.count;
    requireAccess(request, { features: ['intraday'], symbols: [ref] });
    return ctx.responder.respond(request, reply, { key: `intraday|${ref.symbol}|${period}|${count ?? ''}`, resource: 'intraday' }, async () => {
      const result = await ctx.service.intraday(ref, period, count);
      if (result === undefined) throw notFound(ref);
      return { body: { data: result.candles }, status: result.status };
    });
  });

  app.get<{ Querystring: IntradayInput & { symbols: string } }>('/v1/klines/intraday/batch', {
    schema: {
      summary: "Today's minute candles for several symbols",
      description: DESCRIPTION,
      tags: ['klines'],
      querystring: IntradayBatchQuery,
      response: { 200: dataOf(Type.Record(Type.String(), refs.Candles)), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const symbols = symbolList(request.query.symbols);
    const period = request.query.period ?? '1m';
    const count = request.query.count;
    requireAccess(request, { features: ['intraday', 'batch'], symbols, explicitCount: symbols.length });
    const key = `intraday-batch|${symbols.map((r) => r.symbol).join(',')}|${period}|${count ?? ''}`;
    return ctx.responder.respond(request, reply, { key, resource: 'intraday' }, async () =>
      batchBody(await ctx.service.perSymbol(symbols, (ref) => ctx.service.intraday(ref, period, count))));
  });
}
