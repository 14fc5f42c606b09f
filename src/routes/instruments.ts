// GET/POST /v1/instruments: instrument metadata.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { FormatQuery, InstrumentsBody, InstrumentsQuery, dataOf, refs } from '../schemas.ts';
import { tableResponse } from '../http/formats/openapi.ts';
import { access, listedSymbols, requireAccess, symbolList } from './common.ts';
import type { RouteContext } from './context.ts';
import { ERROR_RESPONSES, POST_ERROR_RESPONSES } from './errors-doc.ts';

export default async function instrumentRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  const handle = async (request: FastifyRequest, reply: FastifyReply, raw: string | string[] | undefined) => {
    const symbols = symbolList(raw);
    requireAccess(request);
    return ctx.responder.respond(request, reply, { key: `instruments|${symbols.map((r) => r.symbol).join(',')}`, resource: 'instruments', table: 'instruments' }, async () => {
      const result = await ctx.service.instruments(symbols);
      const data = symbols.flatMap((r) => {
        const item = result.items.get(r.symbol);
        return item === undefined ? [] : [item];
      });
      return { body: { data }, missing: result.unknown, failed: result.failed, status: result.status };
    });
  };
  const response = { 200: tableResponse(dataOf(Type.Array(refs.Instrument)), 'instruments'), ...ERROR_RESPONSES };
  const postResponse = { 200: tableResponse(dataOf(Type.Array(refs.Instrument)), 'instruments'), ...POST_ERROR_RESPONSES };
  app.get<{ Querystring: { symbols: string } }>('/v1/instruments', {
    config: access(listedSymbols('instruments')),
    schema: { operationId: 'getInstruments', summary: 'Instrument metadata', tags: ['reference'], querystring: InstrumentsQuery, response },
  }, (request, reply) => handle(request, reply, request.query.symbols));
  app.post<{ Body: { symbols: string[] } }>('/v1/instruments', {
    config: access(listedSymbols('instruments')),
    schema: { operationId: 'postInstruments', summary: 'Instrument metadata (POST body for long lists)', tags: ['reference'], querystring: FormatQuery, body: InstrumentsBody, response: postResponse },
  }, (request, reply) => handle(request, reply, request.body.symbols));
}
