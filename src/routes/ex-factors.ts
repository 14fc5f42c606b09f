// GET /v1/klines/ex-factors: one record per ex-rights/ex-dividend event (docs/contract.md#ex-factors-and-adjustment).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ExFactorsQuery, dataOf, refs } from '../schemas.ts';
import { access, listedSymbols, requireAccess, symbolList, timeRange } from './common.ts';
import type { RouteContext } from './context.ts';
import { ERROR_RESPONSES } from './errors-doc.ts';
import { tableResponse } from '../http/formats/openapi.ts';

export default async function exFactorRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get<{ Querystring: { symbols: string; start_time?: number; end_time?: number } }>('/v1/klines/ex-factors', {
    config: access(listedSymbols('ex_factors')),
    schema: {
      operationId: 'getExFactors',
      summary: 'Ex-rights/ex-dividend factors',
      description: '`timestamp` is 00:00 exchange-local of the ex-date; `ex_factor = P_prev / ref` per event (not cumulative). Where the vendor has them, the event\'s parts per share (`cash_dividend`, `bonus_ratio`, `rights_ratio`, `rights_price`, with `parts_known: true`) give ref = (P_prev − cash + rights_price·rights) / (1 + bonus + rights); `parts_known: false` means only the ratio is known. start_time/end_time filter inclusively. Symbols without events map to [].',
      tags: ['klines'],
      querystring: ExFactorsQuery,
      response: { 200: tableResponse(dataOf(Type.Record(Type.String(), Type.Array(refs.ExFactor))), 'ex-factors'), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const symbols = symbolList(request.query.symbols);
    const { start_time: start, end_time: end } = request.query;
    timeRange(start, end);
    requireAccess(request);
    const key = `ex-factors|${symbols.map((r) => r.symbol).join(',')}|${start ?? ''}|${end ?? ''}`;
    return ctx.responder.respond(request, reply, { key, resource: 'exFactors', table: 'ex-factors' }, async () => {
      const result = await ctx.service.exFactors(symbols, start, end);
      const data: Record<string, unknown> = {};
      for (const ref of symbols) {
        const events = result.items.get(ref.symbol);
        if (events !== undefined) data[ref.symbol] = events;
      }
      return { body: { data }, missing: result.unknown, failed: result.failed, status: result.status };
    });
  });
}
