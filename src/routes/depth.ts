// GET /v1/depth and /v1/depth/batch: five-level order book.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { SymbolQuery, SymbolsQuery, dataOf, refs } from '../schemas.ts';
import { access, listedSymbols, oneListedSymbol, oneSymbol, requireAccess, symbolList } from './common.ts';
import type { RouteContext } from './context.ts';
import { ERROR_RESPONSES } from './errors-doc.ts';
import { notFound } from './klines.ts';
import { AppError } from '../errors.ts';
import { isIndexSymbol } from '../markets/indices.ts';
import type { SymbolRef } from '../domain.ts';

/** Depth of an index: 404 SYMBOL_NOT_FOUND, saying why (an index has no order book). */
function indexHasNoDepth(ref: SymbolRef): AppError {
  return new AppError('SYMBOL_NOT_FOUND', `${ref.symbol} is an index: indices have no order book`, { details: { symbol: ref.symbol, type: 'index' } });
}

export default async function depthRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get<{ Querystring: { symbol: string } }>('/v1/depth', {
    config: access(oneListedSymbol('depth')),
    schema: {
      operationId: 'getDepth',
      summary: 'Five-level depth for one symbol',
      description: 'Index 0 is the best level; bids descend, asks ascend; empty levels are omitted. An index (`000001.SH`, `HSI.HK`, `SPX.US`) has no depth: 404 SYMBOL_NOT_FOUND.',
      tags: ['quotes'],
      querystring: SymbolQuery,
      response: { 200: dataOf(refs.Depth), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const ref = oneSymbol(request.query.symbol);
    requireAccess(request);
    return ctx.responder.respond(request, reply, { key: `depth|${ref.symbol}`, resource: 'depth' }, async () => {
      const result = await ctx.service.depth([ref]);
      const depth = result.items.get(ref.symbol);
      if (depth === undefined) throw isIndexSymbol(ref) ? indexHasNoDepth(ref) : notFound(ref);
      return { body: { data: depth }, status: result.status };
    });
  });

  app.get<{ Querystring: { symbols: string } }>('/v1/depth/batch', {
    config: access(listedSymbols('depth', 'batch')),
    schema: {
      operationId: 'getDepthBatch',
      summary: 'Five-level depth for several symbols',
      description: 'Indices have no depth: they are omitted from `data` and listed in `X-Missing-Symbols`, like unknown symbols.',
      tags: ['quotes'],
      querystring: SymbolsQuery,
      response: { 200: dataOf(Type.Record(Type.String(), refs.Depth)), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const symbols = symbolList(request.query.symbols);
    requireAccess(request);
    return ctx.responder.respond(request, reply, { key: `depth-batch|${symbols.map((r) => r.symbol).join(',')}`, resource: 'depth' }, async () => {
      const result = await ctx.service.depth(symbols);
      const data: Record<string, unknown> = {};
      for (const ref of symbols) {
        const depth = result.items.get(ref.symbol);
        if (depth !== undefined) data[ref.symbol] = depth;
      }
      return { body: { data }, missing: result.unknown, failed: result.failed, status: result.status };
    });
  });
}
