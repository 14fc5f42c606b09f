// GET /v1/klines/intraday and /v1/klines/intraday/batch: the latest session's minute candles, in
// JSON, CSV, Arrow or Parquet (http/formats). When `count` cuts the session, the single route gives
// the next, older page of the same session (X-Next-End-Time, and a Link to /v1/klines with
// adjust=none inside the session's day: intraday itself takes no end_time, as TickFlow's); the batch
// lists the cut symbols in X-Truncated-Symbols.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { MinutePeriod } from '../domain.ts';
import { IntradayBatchQuery, IntradayQuery, dataOf, refs } from '../schemas.ts';
import { NEXT_PAGE_HEADERS, TRUNCATED_HEADERS, tableResponse } from '../http/formats/openapi.ts';
import { localDate, localMidnight } from '../markets/calendar.ts';
import { access, listedSymbols, oneListedSymbol, oneSymbol, pageUrl, requireAccess, symbolList } from './common.ts';
import type { RouteContext } from './context.ts';
import { ERROR_RESPONSES } from './errors-doc.ts';
import { batchBody, notFound } from './klines.ts';

interface IntradayInput {
  period?: MinutePeriod;
  count?: number;
}

const DESCRIPTION = "Today's session (or, before today's open and on closed days, the latest trading session) in minute bars labelled at their end. `start_time`/`end_time` are ignored.";
const PAGING = ' When `count` cuts the session, X-Next-End-Time and Link give its next, older page: a /v1/klines request (adjust=none, start_time at 00:00 exchange-local of the session\'s day; it needs klines_minute).';

export default async function intradayRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get<{ Querystring: IntradayInput & { symbol: string } }>('/v1/klines/intraday', {
    config: access(oneListedSymbol('intraday')),
    schema: {
      operationId: 'getIntraday',
      summary: "Today's minute candles for one symbol",
      description: DESCRIPTION + PAGING,
      tags: ['klines'],
      querystring: IntradayQuery,
      response: { 200: tableResponse(dataOf(refs.Candles), 'candles', NEXT_PAGE_HEADERS), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const ref = oneSymbol(request.query.symbol);
    const period = request.query.period ?? '1m';
    const count = request.query.count;
    requireAccess(request);
    return ctx.responder.respond(request, reply, { key: `intraday|${ref.symbol}|${period}|${count ?? ''}`, resource: 'intraday', table: 'candles' }, async (format) => {
      const result = await ctx.service.intraday(ref, period, count);
      if (result === undefined) throw notFound(ref);
      const cursor = result.next;
      const next = cursor === undefined || count === undefined ? undefined : {
        endTime: cursor,
        url: pageUrl('/v1/klines', {
          symbol: ref.symbol, period, count, adjust: 'none', start_time: localMidnight(ref.region, localDate(ref.region, cursor)), end_time: cursor,
        }, format),
      };
      return { body: { data: result.candles }, status: result.status, next };
    });
  });

  app.get<{ Querystring: IntradayInput & { symbols: string } }>('/v1/klines/intraday/batch', {
    config: access(listedSymbols('intraday', 'batch')),
    schema: {
      operationId: 'getIntradayBatch',
      summary: "Today's minute candles for several symbols",
      description: `${DESCRIPTION} Symbols whose session \`count\` cut are listed in X-Truncated-Symbols.`,
      tags: ['klines'],
      querystring: IntradayBatchQuery,
      response: { 200: tableResponse(dataOf(Type.Record(Type.String(), refs.Candles)), 'candles-batch', TRUNCATED_HEADERS), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const symbols = symbolList(request.query.symbols);
    const period = request.query.period ?? '1m';
    const count = request.query.count;
    requireAccess(request);
    const key = `intraday-batch|${symbols.map((r) => r.symbol).join(',')}|${period}|${count ?? ''}`;
    return ctx.responder.respond(request, reply, { key, resource: 'intraday', table: 'candles-batch' }, async () => {
      const cut = new Set<string>();
      const result = await ctx.service.perSymbol(symbols, async (ref) => {
        const one = await ctx.service.intraday(ref, period, count);
        if (one?.next !== undefined) cut.add(ref.symbol);
        return one;
      });
      return batchBody(result, cut);
    });
  });
}
