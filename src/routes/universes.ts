// GET /v1/universes, GET /v1/universes/{id}, POST /v1/universes/batch: pools and their members.
// Reference data: any valid key may read them (quotes *by* pool need the `pools` feature).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { POOL_IDS, type PoolDetail } from '../domain.ts';
import { AppError } from '../errors.ts';
import { emptyStatus, mergeStatus, type DataStatus } from '../data/status.ts';
import { POOL_REGION, resolvePoolId } from '../markets/pools.ts';
import { parseList } from '../markets/symbols.ts';
import { UniverseParams, UniversesBatchBody, dataOf, refs } from '../schemas.ts';
import type { RouteContext } from './context.ts';
import { ERROR_RESPONSES, POST_ERROR_RESPONSES } from './errors-doc.ts';

export default async function universeRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  /** The pool's detail under the id the client asked for (TickFlow aliases are echoed back). */
  const detail = async (askedId: string, status: DataStatus): Promise<PoolDetail | undefined> => {
    const id = resolvePoolId(askedId);
    if (id === undefined) return undefined;
    const pool = await ctx.service.pool(id, POOL_REGION[id]);
    mergeStatus(status, pool.status);
    if (pool.value === undefined) return undefined;
    return { ...pool.value, id: askedId as PoolDetail['id'] };
  };

  app.get('/v1/universes', {
    schema: {
      operationId: 'getUniverses',
      summary: 'List pools',
      tags: ['reference'],
      response: { 200: dataOf(Type.Array(refs.PoolSummary)), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => ctx.responder.respond(request, reply, { key: 'universes', resource: 'pools' }, async () => {
    const status = emptyStatus();
    const found = await Promise.all(POOL_IDS.map((id) => detail(id, status)));
    const data = found.flatMap((item) => {
      if (item === undefined) return [];
      const { symbols: _members, ...summary } = item;
      return [summary];
    });
    return { body: { data }, status };
  }));

  app.get<{ Params: { id: string } }>('/v1/universes/:id', {
    schema: {
      operationId: 'getUniverse',
      summary: 'One pool with its member symbols',
      description: 'Ids: CN_Stock, CN_ETF, HK_Stock, US_Stock, CN_Index, HK_Index, US_Index; TickFlow aliases CN_Equity_A, HK_Equity, US_Equity. Unknown id: 404 NOT_FOUND.',
      tags: ['reference'],
      params: UniverseParams,
      response: { 200: dataOf(refs.PoolDetail), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const askedId = request.params.id;
    if (resolvePoolId(askedId) === undefined) {
      throw new AppError('NOT_FOUND', `unknown universe '${askedId.slice(0, 40)}'`, { details: { id: askedId.slice(0, 40) } });
    }
    return ctx.responder.respond(request, reply, { key: `universe|${askedId}`, resource: 'pools' }, async () => {
      const status = emptyStatus();
      const found = await detail(askedId, status);
      if (found === undefined) throw new AppError('NOT_FOUND', `unknown universe '${askedId}'`);
      return { body: { data: found }, status };
    });
  });

  app.post<{ Body: { ids: string[] } }>('/v1/universes/batch', {
    schema: {
      operationId: 'postUniversesBatch',
      summary: 'Several pools with their members',
      description: 'Unknown ids are omitted from `data`.',
      tags: ['reference'],
      body: UniversesBatchBody,
      response: { 200: dataOf(Type.Record(Type.String(), refs.PoolDetail)), ...POST_ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const ids = parseList(request.body.ids);
    if (ids.length === 0) throw new AppError('INVALID_PARAMETER', 'ids is empty: give at least one universe id');
    return ctx.responder.respond(request, reply, { key: `universes-batch|${ids.join(',')}`, resource: 'pools' }, async () => {
      const status = emptyStatus();
      const found = await Promise.all(ids.map((id) => detail(id, status)));
      const data: Record<string, PoolDetail> = {};
      found.forEach((item, index) => {
        if (item !== undefined) data[ids[index]] = item;
      });
      return { body: { data }, status };
    });
  });
}
