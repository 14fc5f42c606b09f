// GET /v1/universes, GET /v1/universes/{id}, POST /v1/universes/batch: pools and their members.
// Reference data: any valid key may read them (quotes *by* pool need the `pools` feature).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { POOL_IDS, type PoolDetail } from '../domain.ts';
import { AppError } from '../errors.ts';
import { emptyStatus, mergeStatus, type DataStatus } from '../data/status.ts';
import { POOL_REGION, resolvePoolId } from '../markets/pools.ts';
import { parseList } from '../markets/symbols.ts';
import { UniverseParams, UniverseQuery, UniversesBatchBody, dataOf, refs } from '../schemas.ts';
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

  /**
   * The pool's members as recorded on the newest recorded day at or before `asOf` (the recorder
   * writes a snapshot each day the membership changed); NOT_FOUND before recording began.
   */
  const recorded = async (askedId: string, asOf: string, status: DataStatus): Promise<PoolDetail | undefined> => {
    const id = resolvePoolId(askedId);
    if (id === undefined) return undefined;
    const store = app.history.store;
    const [snapshot] = store === undefined ? [] : await store.ledgerGet('members', { name: id, to: asOf, last: true });
    const [first] = store === undefined ? [] : await store.ledgerGet('members', { name: id, first: true });
    if (snapshot === undefined) {
      throw new AppError('NOT_FOUND', first === undefined
        ? `the membership of ${askedId} is not recorded: a history.record job with membership records it each day`
        : `the membership of ${askedId} is recorded from ${first.day}, after as_of ${asOf}`, {
        details: { id: askedId, as_of: asOf, ...(first === undefined ? {} : { recorded_from: first.day }) },
      });
    }
    const now = await detail(askedId, status);
    const symbols = (JSON.parse(snapshot.data) as { symbols: string[] }).symbols;
    return {
      id: askedId as PoolDetail['id'], name: now?.name ?? id, region: POOL_REGION[id], category: now?.category ?? '',
      symbol_count: symbols.length, symbols, as_of: snapshot.day, recorded_from: first?.day ?? snapshot.day,
    };
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

  app.get<{ Params: { id: string }; Querystring: { as_of?: string } }>('/v1/universes/:id', {
    schema: {
      operationId: 'getUniverse',
      summary: 'One pool with its member symbols',
      description: 'Ids: CN_Stock, CN_ETF, HK_Stock, US_Stock, CN_Index, HK_Index, US_Index; TickFlow aliases CN_Equity_A, HK_Equity, US_Equity. Unknown id: 404 NOT_FOUND. `as_of`: the members as the recorder recorded them that day (404 NOT_FOUND naming `recorded_from` before recording began).',
      tags: ['reference'],
      params: UniverseParams,
      querystring: UniverseQuery,
      response: { 200: dataOf(refs.PoolDetail), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const askedId = request.params.id;
    if (resolvePoolId(askedId) === undefined) {
      throw new AppError('NOT_FOUND', `unknown universe '${askedId.slice(0, 40)}'`, { details: { id: askedId.slice(0, 40) } });
    }
    const asOf = request.query.as_of;
    return ctx.responder.respond(request, reply, { key: `universe|${askedId}|${asOf ?? ''}`, resource: 'pools' }, async () => {
      const status = emptyStatus();
      const found = asOf === undefined ? await detail(askedId, status) : await recorded(askedId, asOf, status);
      if (found === undefined) throw new AppError('NOT_FOUND', `unknown universe '${askedId}'`);
      return { body: { data: found }, status };
    });
  });

  app.post<{ Body: { ids: string[]; as_of?: string } }>('/v1/universes/batch', {
    schema: {
      operationId: 'postUniversesBatch',
      summary: 'Several pools with their members',
      description: 'Unknown ids are omitted from `data`; with `as_of`, so are ids whose membership is not recorded by then.',
      tags: ['reference'],
      body: UniversesBatchBody,
      response: { 200: dataOf(Type.Record(Type.String(), refs.PoolDetail)), ...POST_ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const ids = parseList(request.body.ids);
    if (ids.length === 0) throw new AppError('INVALID_PARAMETER', 'ids is empty: give at least one universe id');
    const asOf = request.body.as_of;
    return ctx.responder.respond(request, reply, { key: `universes-batch|${ids.join(',')}|${asOf ?? ''}`, resource: 'pools' }, async () => {
      const status = emptyStatus();
      const found = await Promise.all(ids.map((id) => (asOf === undefined ? detail(id, status) : recorded(id, asOf, status).catch(() => undefined))));
      const data: Record<string, PoolDetail> = {};
      found.forEach((item, index) => {
        if (item !== undefined) data[ids[index]] = item;
      });
      return { body: { data }, status };
    });
  });
}
