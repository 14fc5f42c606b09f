// Operational routes (no key): liveness, readiness, the OpenAPI document and service metadata.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/schema.ts';
import type { KeyStore } from '../access/keys.ts';
import type { Metrics } from '../metrics.ts';
import type { AdapterRouter } from '../service/router.ts';
import type { AdapterGuard } from '../upstream/adapter-guard.ts';

export interface OpsContext {
  router: AdapterRouter;
  now: () => number;
  keys: KeyStore;
  config: Config;
  metrics: Metrics;
  guard: AdapterGuard;
  /** Extra readiness checks (Redis, circuits), added by the caching layer. */
  readinessChecks?: Array<() => Promise<Record<string, unknown>>>;
}

export default async function opsRoutes(app: FastifyInstance, ctx: OpsContext): Promise<void> {
  const publicRoute = { public: true, rateLimit: false } as const;

  app.get('/healthz', { config: publicRoute, schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  app.get('/readyz', { config: publicRoute, schema: { hide: true } }, async (_request, reply) => {
    const adapters: Record<string, { ready: boolean; circuit: string }> = {};
    let ready = true;
    await Promise.all([...ctx.router.adapters.values()].map(async (adapter) => {
      let ok = true;
      try {
        ok = adapter.ready ? await adapter.ready() : true;
      } catch {
        ok = false;
      }
      const circuit = ctx.guard.breakerState(adapter.id);
      adapters[adapter.id] = { ready: ok && circuit === 'closed', circuit };
      if (!ok || circuit !== 'closed') ready = false;
    }));
    const extra: Record<string, unknown> = {};
    for (const check of ctx.readinessChecks ?? []) {
      const result = await check();
      Object.assign(extra, result);
      if (result.ready === false) ready = false;
    }
    return reply.code(ready ? 200 : 503).header('cache-control', 'no-store').send({ status: ready ? 'ready' : 'not_ready', adapters, ...extra });
  });

  app.get('/metrics', { config: publicRoute, schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics()));

  app.get('/v1/openapi.json', { config: publicRoute, schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(app.swagger())));

  app.get('/v1/meta', {
    config: publicRoute,
    schema: {
      summary: 'Service metadata: version, adapters per market, whether the data is simulated',
      tags: ['ops'],
      security: [],
    },
  }, async () => {
    const routing = ctx.config.routing.markets;
    const adapters = [...ctx.router.adapters.values()].map((a) => ({ id: a.id, label: a.label, markets: a.capabilities.markets }));
    return {
      data: {
        service: 'market-data-query-service',
        version: '1.0.0',
        simulated: Object.values(routing).some((chain) => chain[0] === 'sim'),
        routing,
        adapters,
        server_time: ctx.now(),
      },
    };
  });
}
