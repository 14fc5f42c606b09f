// The routes: the OpenAPI document and /docs, each /v1 resource's route plugin, the stream, the
// explorer, and the operational routes (/healthz, /readyz with the readiness checks, /metrics,
// /v1/meta). Each route file is a Fastify plugin registered with the context it needs.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import type { Config } from '../../config/schema.ts';
import type { Region } from '../domain.ts';
import { registerDocs } from '../http/docs.ts';
import { strictQuery } from '../http/strict-query.ts';
import { redisReadiness } from '../redis/health.ts';
import type { AppContext } from '../routes/context.ts';
import depthRoutes from '../routes/depth.ts';
import exFactorRoutes from '../routes/ex-factors.ts';
import explorerRoutes from '../routes/explorer.ts';
import financialsRoutes from '../routes/financials.ts';
import instrumentRoutes from '../routes/instruments.ts';
import intradayRoutes from '../routes/intraday.ts';
import coverageRoutes from '../routes/coverage.ts';
import klinesRoutes from '../routes/klines.ts';
import marketDayRoutes from '../routes/market-day.ts';
import meRoutes from '../routes/me.ts';
import opsRoutes, { type ReadinessCheck } from '../routes/ops.ts';
import quotesRoutes from '../routes/quotes.ts';
import referenceRoutes from '../routes/reference.ts';
import universeRoutes from '../routes/universes.ts';
import { SHARED_SCHEMAS } from '../schemas.ts';
import { historyReadiness } from '../store/index.ts';
import streamRoutes, { streamReadiness } from '../stream/index.ts';

/** Every /v1 route plugin, registered in this order. */
const ROUTES = [
  quotesRoutes, klinesRoutes, intradayRoutes, exFactorRoutes, instrumentRoutes, depthRoutes, universeRoutes,
  referenceRoutes, financialsRoutes, meRoutes, streamRoutes, explorerRoutes,
];

export const routesPlugin = fp(async (app: FastifyInstance, options: { config: Config; now: () => number; redis?: Redis }) => {
  const { config, now } = options;
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  await registerDocs(app, { keys: app.access.keys });
  const ctx: AppContext = {
    service: app.service, responder: app.caches.responder, config, keys: app.access.keys, metrics: app.metrics, now, redis: options.redis,
  };
  await app.register(async (scope) => {
    scope.addHook('preValidation', strictQuery);
    for (const route of ROUTES) await scope.register(route, ctx);
    // The store's views (coverage, the whole-market day) also read the store and the candle routing.
    const storeCtx = {
      ...ctx, history: app.history, simulated: app.upstream.simulated, candleChain: (region: Region) => app.upstream.router.configuredChain('candles', region),
    };
    await scope.register(coverageRoutes, storeCtx);
    await scope.register(marketDayRoutes, storeCtx);
  });
  const readinessChecks: ReadinessCheck[] = [];
  if (app.history.store !== undefined) readinessChecks.push(historyReadiness(app.history.store));
  if (app.sharedRedis !== undefined) readinessChecks.push(redisReadiness(app.sharedRedis.health));
  const stream = streamReadiness(app);
  if (stream !== undefined) readinessChecks.push(stream);
  await app.register(opsRoutes, {
    router: app.upstream.router, now, config, metrics: app.metrics, simulated: app.upstream.simulated,
    isClosing: () => app.isClosing(), readinessChecks,
  });
}, { name: 'routes', dependencies: ['market-data', 'caches', 'access', 'upstream', 'history', 'lifecycle', 'metrics'] });
