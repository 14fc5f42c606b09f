// GET/POST /v1/quotes: by symbols or by pools (exactly one of the two).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PoolId, SymbolRef } from '../domain.ts';
import { AppError } from '../errors.ts';
import { parseList, parseSymbol } from '../markets/symbols.ts';
import { resolvePoolId, POOL_REGION } from '../markets/pools.ts';
import { FormatQuery, QuotesBody, QuotesQuery, dataOf, refs } from '../schemas.ts';
import { tableResponse } from '../http/formats/openapi.ts';
import { Type } from 'typebox';
import { access, keyOf, requireAccess, symbolList, type RouteAccess } from './common.ts';
import { authorize } from '../access/guard.ts';
import type { RouteContext } from './context.ts';
import { ERROR_RESPONSES, POST_ERROR_RESPONSES } from './errors-doc.ts';

interface QuotesInput {
  symbols?: string | string[];
  universes?: string | string[];
}

function parsePools(raw: string | string[]): PoolId[] {
  if (typeof raw !== 'string' && !(Array.isArray(raw) && raw.every((r) => typeof r === 'string'))) {
    throw new AppError('INVALID_UNIVERSE', 'universes must be a comma-separated string or an array of strings');
  }
  const ids = parseList(raw);
  if (ids.length === 0) throw new AppError('INVALID_PARAMETER', 'universes is empty: give at least one pool id');
  const pools: PoolId[] = [];
  const unknown: string[] = [];
  for (const id of ids) {
    const pool = resolvePoolId(id);
    if (pool === undefined) unknown.push(id);
    else if (!pools.includes(pool)) pools.push(pool);
  }
  if (unknown.length > 0) {
    throw new AppError('INVALID_UNIVERSE', `unknown pool ids: ${unknown.slice(0, 10).join(', ')}; known: CN_Stock, CN_ETF, HK_Stock, US_Stock, CN_Index, HK_Index, US_Index (aliases CN_Equity_A, HK_Equity, US_Equity)`, {
      details: { universes: unknown.slice(0, 100) },
    });
  }
  return pools;
}

/** By symbols: `quotes` and those symbols; by pools: `quotes`, `pools` and the pools' markets. */
const quotesAccess: RouteAccess = (request) => {
  const input = ((request.method === 'POST' ? request.body : request.query) ?? {}) as QuotesInput;
  if (input.symbols !== undefined && input.symbols !== '') {
    const symbols = symbolList(input.symbols);
    return { features: ['quotes'], symbols, explicitCount: symbols.length };
  }
  const pools = parsePools(input.universes as string | string[]);
  return { features: ['quotes', 'pools'], regions: pools.map((p) => POOL_REGION[p]) };
};

export default async function quotesRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  const handle = async (request: FastifyRequest, reply: FastifyReply, input: QuotesInput) => {
    const hasSymbols = input.symbols !== undefined && input.symbols !== '';
    const hasPools = input.universes !== undefined && input.universes !== '';
    if (hasSymbols === hasPools) {
      throw new AppError('INVALID_PARAMETER', 'give exactly one of symbols or universes');
    }
    let refsList: SymbolRef[];
    let key: string;
    if (hasSymbols) {
      refsList = symbolList(input.symbols);
      requireAccess(request);
      key = `quotes|s|${refsList.map((r) => r.symbol).join(',')}`;
    } else {
      const pools = parsePools(input.universes as string | string[]);
      requireAccess(request);
      // Members are resolved first so their markets are checked too (403 names what is missing).
      const members = await Promise.all(pools.map((p) => ctx.service.pool(p, POOL_REGION[p])));
      const seen = new Set<string>();
      refsList = [];
      for (const { value } of members) {
        for (const symbol of value?.symbols ?? []) {
          if (seen.has(symbol)) continue;
          seen.add(symbol);
          const ref = parseSymbol(symbol);
          if (ref !== undefined) refsList.push(ref);
        }
      }
      // The members' own markets (a pool's members are in its market; checked all the same).
      authorize(keyOf(request), { features: ['quotes', 'pools'], symbols: refsList });
      key = `quotes|u|${pools.join(',')}`;
    }
    return ctx.responder.respond(request, reply, { key, resource: 'quotes', table: 'quotes' }, async () => {
      const result = await ctx.service.quotes(refsList);
      const data = refsList.flatMap((r) => {
        const quote = result.items.get(r.symbol);
        return quote === undefined ? [] : [quote];
      });
      return { body: { data }, missing: result.unknown, failed: result.failed, status: result.status };
    });
  };

  const response = { 200: tableResponse(dataOf(Type.Array(refs.Quote)), 'quotes'), ...ERROR_RESPONSES };
  const postResponse = { 200: tableResponse(dataOf(Type.Array(refs.Quote)), 'quotes'), ...POST_ERROR_RESPONSES };
  app.get<{ Querystring: QuotesInput }>('/v1/quotes', {
    config: access(quotesAccess),
    schema: { operationId: 'getQuotes', summary: 'Real-time quotes by symbols or pools', tags: ['quotes'], querystring: QuotesQuery, response },
  }, (request, reply) => handle(request, reply, request.query));
  app.post<{ Body: QuotesInput }>('/v1/quotes', {
    config: access(quotesAccess),
    schema: { operationId: 'postQuotes', summary: 'Real-time quotes (POST body for long lists)', tags: ['quotes'], querystring: FormatQuery, body: QuotesBody, response: postResponse },
  }, (request, reply) => handle(request, reply, request.body ?? {}));
}
