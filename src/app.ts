// buildApp: registers plugins and routes. Never reads the environment, never listens.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import { createFastPath, type FastPath, type FastRoute } from './http/fast-path.ts';
import { createHistoryTier, historyReadiness, type HistoryTier } from './store/index.ts';
import { historySettings } from './store/settings.ts';
import { createFillLock, type FillLock } from './cache/fill-lock.ts';
import { createRedisTier, jsonCodec, responseCodec } from './cache/redis-tier.ts';
import { redisReadiness, trackRedisHealth } from './redis.ts';
import type { Redis } from 'ioredis';
import type { Adapter } from '../adapters/types.ts';
import type { Config } from '../config/schema.ts';
import { registerAccess } from './access/plugin.ts';
import type { KeyStore } from './access/keys.ts';
import { AppError } from './errors.ts';
import { drainWithin, trackConnections } from './http/drain.ts';
import { clientErrorHandler, HTTP_SERVER_OPTIONS, installClientErrorHandling, sendError, toAppError } from './http/error-handler.ts';
import { parseQueryString } from './http/querystring.ts';
import { redactUrl } from './http/redact.ts';
import { createHitLogger, loggerOptions, OneLineLogController, registerRequestLog, requestId } from './http/logging.ts';
import { API_VERSION, registerDocs } from './http/docs.ts';
import { directResponder, type Responder } from './http/respond.ts';
import { SHARED_SCHEMAS } from './schemas.ts';
import { createByteCache } from './cache/byte-cache.ts';
import { configureCalendarMemo, DEFAULT_CALENDAR_MEMO_MAX_BYTES, warmCalendar } from './markets/calendar.ts';
import { createMemoryTier } from './cache/memory-tier.ts';
import type { Tier } from './cache/tier.ts';
import { Loader, type DataEntry } from './data/loader.ts';
import { createResources, policyFromConfig } from './data/resources/index.ts';
import { createCachingResponder, type CachedResponse } from './http/response-cache.ts';
import { createMetrics, observeSeries, upstreamSink, type CounterSeries, type HistogramSeries, type Metrics } from './metrics.ts';
import { MarketDataService } from './service/market-data.ts';
import type { UpstreamClient } from './upstream/http.ts';
import { createResilience, type Resilience } from './upstream/resilience.ts';
import { AdapterRouter } from './upstream/router.ts';
import { checkRouting } from './upstream/routing-check.ts';
import { isSimAdapter, resilienceSettings } from './upstream/registry.ts';
import type { Region } from './domain.ts';
import exFactorRoutes from './routes/ex-factors.ts';
import depthRoutes from './routes/depth.ts';
import instrumentRoutes from './routes/instruments.ts';
import intradayRoutes from './routes/intraday.ts';
import klinesRoutes from './routes/klines.ts';
import opsRoutes from './routes/ops.ts';
import quotesRoutes from './routes/quotes.ts';
import universeRoutes from './routes/universes.ts';
import referenceRoutes from './routes/reference.ts';
import meRoutes from './routes/me.ts';
import explorerRoutes from './routes/explorer.ts';
import streamRoutes from './stream/index.ts';
import type { AppContext } from './routes/context.ts';

export { API_VERSION };

export interface AppOptions {
  config: Config;
  keys: KeyStore;
  adapters: ReadonlyMap<string, Adapter>;
  /** Injectable clock (epoch ms). */
  now?: () => number;
  /** Pino options or false; tests pass false or a stream. */
  logger?: FastifyServerOptions['logger'];
  /** Turn both cache layers off (every request goes to the adapters); default on. */
  cache?: boolean;
  responder?: Responder;
  metrics?: Metrics;
  /**
   * Shared Redis (scale-out): the second tier of both caches, the fill lock per key, the shared
   * rate-limit counters and key reloads. Without it each instance works on its own.
   */
  redis?: Redis;
  /** The HTTP layers of HTTP vendors (registry productionDeps().clients): budgets and shutdown. */
  upstreamClients?: ReadonlyMap<string, UpstreamClient>;
  /** Extra data tiers after the in-process one (e.g. Redis), in order. */
  dataTiers?: Tier<DataEntry>[];
  /** The cache-hit fast path (http/fast-path.ts); default on. */
  fastPath?: boolean;
  /**
   * The candle history store (src/store/). Default: opened from `config.history` when enabled;
   * pass one to share it (tests), or set `config.history.enabled: false` for none.
   */
  history?: HistoryTier;
  /** DATABASE_URL for `history.backend: postgres` (server.ts passes the environment's). */
  databaseUrl?: string;
}

/** The routing is refused at boot (sim after a real vendor, or a gap under routing.strict). */
export class RoutingError extends Error {}

type ValidatorFactory = (externalSchemas: unknown, ajvOptions: unknown) => (route: { schema: unknown }) => ValidateFn;
type ValidateFn = ((data: unknown) => boolean) & { errors?: unknown };
const requireCjs = createRequire(import.meta.url);

/**
 * Fastify's own validator compiler (@fastify/ajv-compiler, same options), compiling each route's
 * schema on its first request instead of at boot: ~100 ms of CPU in a ~0.9 s start went to
 * compiling validators for routes a process may never serve (BENCHMARKS.md, startup). Fastify reads a failed
 * validation's `errors` from the function it was given, so the wrapper carries them over.
 */
function lazyValidators(externalSchemas: unknown, ajvOptions: unknown): (route: { schema: unknown }) => ValidateFn {
  // Ajv itself (its module, its instance, the shared schemas checked against the meta-schema) also
  // waits for the first request that validates anything.
  let build: ((route: { schema: unknown }) => ValidateFn) | undefined;
  return (route) => {
    let compiled: ValidateFn | undefined;
    const validate: ValidateFn = (data) => {
      build ??= (requireCjs('@fastify/ajv-compiler') as () => ValidatorFactory)()(externalSchemas, ajvOptions);
      compiled ??= build(route);
      const ok = compiled(data);
      validate.errors = compiled.errors;
      return ok;
    };
    return validate;
  };
}

/**
 * Response serialisation is JSON.stringify, as Fastify's serializer factory. Response schemas
 * document the API (OpenAPI); data routes send finished bytes, so a fast-json-stringify serialiser
 * per route and status (a fifth of startup when compiled at boot) buys nothing, and Fastify's own
 * factory (@fastify/fast-json-stringify-compiler with its Ajv, ~25 ms to load) is never needed.
 */
function jsonSerializers(): (route: { schema: unknown }) => (data: unknown) => string {
  return () => (data) => JSON.stringify(data);
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const now = options.now ?? Date.now;
  // The cache-hit fast path answers before Fastify routes a request (http/fast-path.ts); it is
  // created once the caches and the limiter exist, and passes everything it cannot answer on.
  let fastPath: FastPath | undefined;
  const app = Fastify({
    serverFactory: (handler, serverOptions) => {
      const opts = serverOptions as FastifyServerOptions & { http?: object };
      const server = createServer(opts.http ?? {}, (req, res) => {
        if (fastPath === undefined || !fastPath.handle(req, res)) handler(req, res);
      });
      server.keepAliveTimeout = opts.keepAliveTimeout ?? 72_000;
      server.requestTimeout = opts.requestTimeout ?? 0;
      server.setTimeout(opts.connectionTimeout ?? 0);
      return server;
    },
    logger: options.logger ?? loggerOptions(config),
    // One access line per request (registerRequestLog) instead of Fastify's two.
    logController: new OneLineLogController(),
    genReqId: requestId,
    // Malformed HTTP (garbage request lines, oversized headers, …) gets our JSON error body too.
    clientErrorHandler,
    http: HTTP_SERVER_OPTIONS,
    bodyLimit: config.server.bodyLimitBytes,
    trustProxy: config.server.trustProxy,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    requestTimeout: config.server.requestTimeoutMs,
    routerOptions: { querystringParser: parseQueryString, ignoreTrailingSlash: false, maxParamLength: 200 },
    // swagger-ui answers its static index with a redirect to /docs/; never redirect (DESIGN.md 4).
    rewriteUrl: (req) => (req.url === '/docs/static/index.html' || req.url === '/docs/' ? '/docs' : (req.url ?? '/')),
    // Errors Fastify raises before routing (an undecodable URL) get our error body too.
    frameworkErrors: (error, request, reply) => {
      sendError(request, reply, toAppError(error));
    },
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false, useDefaults: false, allErrors: false } },
    schemaController: { compilersFactory: { buildValidator: lazyValidators as never, buildSerializer: jsonSerializers as never } },
  });

  installClientErrorHandling(app);
  // app.close() is bounded by server.shutdownGraceMs: connections without a request in flight
  // close at once, the rest as their responses finish, and whatever is left at the deadline is
  // destroyed (registered first, so it runs before the stream's own preClose drain).
  const connections = trackConnections(app.server);
  app.addHook('preClose', (done) => {
    // Not listening (app.inject() only): no connections, and no 'close' event to stop the sweep.
    if (app.server.listening) drainWithin(app.server, connections, config.server.shutdownGraceMs, (open) => {
      app.log.warn({ connections: open }, 'shutdown grace over: closed connections still open');
    });
    done();
  });
  const metrics = options.metrics ?? createMetrics();
  const simulated = new Set([...options.adapters.keys()].filter((id) => isSimAdapter(id, config.adapters[id])));
  const routingReport = checkRouting(config.routing, options.adapters, simulated);
  if (routingReport.errors.length > 0) throw new RoutingError(routingReport.errors.join('\n'));
  for (const warning of routingReport.warnings) app.log.warn(warning);

  const resilience = new Map<string, Resilience>();
  for (const id of options.adapters.keys()) {
    const client = options.upstreamClients?.get(id);
    resilience.set(id, createResilience(id, resilienceSettings(id, config.adapters[id], config.upstream), {
      now,
      metrics: upstreamSink(metrics),
      budgetRemaining: client ? () => client.budgetRemaining() : undefined,
      countsCalls: client === undefined,
      // Logged once per state change, not per failed request.
      onBreakerStateChange: (adapter, state) => app.log.warn({ adapter, state }, 'circuit breaker state changed'),
    }));
    metrics.trackCircuit(id, () => resilience.get(id)?.health().circuit ?? 'closed');
  }
  const router = new AdapterRouter(options.adapters, config.routing, resilience);
  const hasRealVendor = [...options.adapters.keys()].some((id) => !simulated.has(id));
  const simWarnedAt = new Map<Region, number>();
  let responder: Responder = options.responder ?? directResponder;
  const tiers: Tier<DataEntry>[] = [];
  let fastPathCache: ReturnType<typeof createByteCache<CachedResponse>> | undefined;
  // Scaled out (Redis configured): a shared second tier for data entries and finished responses,
  // and a fill lock per key so N instances make one upstream call for the same cold data.
  const redis = options.redis;
  const redisHealthTracker = redis === undefined ? undefined : trackRedisHealth(redis, { now });
  if (redisHealthTracker !== undefined) app.addHook('onClose', async () => redisHealthTracker.stop());
  const redisTimeoutMs = config.redis.commandTimeoutMs ?? 250;
  let lock: FillLock | undefined;
  if (redis !== undefined && options.cache !== false) {
    const subscriber = redis.duplicate({ enableOfflineQueue: true, commandTimeout: undefined, autoResubscribe: true });
    subscriber.on('error', () => undefined);
    lock = createFillLock({ redis, subscriber, prefix: 'mdqs:fill:', leaseMs: config.redis.fillLockLeaseMs ?? 1_000, now, health: redisHealthTracker });
    const opened = lock;
    app.addHook('onClose', async () => {
      await opened.close();
      subscriber.disconnect();
    });
  }
  if (options.cache !== false) {
    const memory = createMemoryTier<DataEntry>({ maxBytes: config.cache.dataMaxBytes, now });
    const responseCache = createByteCache<CachedResponse>({ maxSize: config.cache.responseMaxBytes, now });
    metrics.trackCacheBytes('data', () => memory.bytes);
    metrics.trackCacheBytes('response', () => responseCache.calculatedSize);
    tiers.push(memory, ...(options.dataTiers ?? []));
    if (redis !== undefined) {
      tiers.push(createRedisTier<DataEntry>({ redis, prefix: 'mdqs:data:', codec: jsonCodec(), now, timeoutMs: redisTimeoutMs, health: redisHealthTracker, log: app.log }));
    }
    responder = options.responder ?? createCachingResponder({
      cache: responseCache, gzipMinBytes: config.cache.gzipMinBytes, now, metrics,
      shared: redis === undefined ? undefined : createRedisTier({ redis, prefix: 'mdqs:resp:', codec: responseCodec, now, timeoutMs: redisTimeoutMs, health: redisHealthTracker, log: app.log }),
      onStored: (request, key) => {
        if (request.method !== 'GET' || request.keyEntry === undefined || request.accessNeeds === undefined) return;
        fastPath?.record(request.raw.url ?? '', { key, route: request.routeOptions.url ?? 'unknown', needs: request.accessNeeds, bars: request.barsNeeded ?? 0 });
      },
    });
    fastPathCache = responseCache;
  }
  // Candles reach their adapter through the history store (each closed bar fetched once, ever)
  // unless it is off, or off for that adapter.
  const historyConfig = historySettings(config, { DATABASE_URL: options.databaseUrl });
  let history = options.history;
  if (history === undefined && historyConfig.enabled) {
    history = await createHistoryTier({
      backend: historyConfig.backend, sqlitePath: historyConfig.sqlitePath, databaseUrl: historyConfig.databaseUrl, now,
      revision: historyConfig.revision, retentionDays: historyConfig.retentionDays, registry: metrics.registry,
      log: { warn: (fields, message) => app.log.warn(fields, message), error: (fields, message) => app.log.error(fields, message) },
    });
    const opened = history;
    app.addHook('onClose', async () => opened.close());
  }
  const store = history;
  // The calendar's memos are process-wide; their byte budget follows the config of the app built last.
  configureCalendarMemo({ maxBytes: config.cache.calendarMemoMaxBytes ?? DEFAULT_CALENDAR_MEMO_MAX_BYTES });
  // Nothing at boot needs a market's local time, and the first use loads ICU's time-zone data
  // (~25 ms): it is loaded just after the server listens, so /healthz answers sooner and the first
  // data request does not wait for it either.
  app.addHook('onListen', (done) => {
    setImmediate(() => warmCalendar(now()));
    done();
  });
  const resources = createResources(policyFromConfig(config.cache), { history: store, historyOffFor: new Set(historyConfig.disabledAdapters) });
  const loader = new Loader({
    router,
    tiers,
    now,
    isSimulated: (id) => simulated.has(id),
    lock,
    // A waiter never waits past the request's deadline: then it fetches itself.
    lockWaitMs: config.upstream.deadlineMs,
    onLookup: (resource, result) => metrics.cacheLookups.inc({ layer: 'data', resource, result }),
    onJoin: (resource, joined) => metrics.singleflightWaiters.inc({ resource }, joined),
    onFetched: (adapter, region) => {
      if (!hasRealVendor || !simulated.has(adapter)) return;
      const last = simWarnedAt.get(region) ?? Number.NEGATIVE_INFINITY;
      if (now() - last < 60_000) return;
      simWarnedAt.set(region, now());
      app.log.warn({ adapter, market: region }, 'SIMULATED DATA served: the real vendors of this market failed and the sim fallback answered');
    },
  });
  const service = new MarketDataService(loader, resources, now);
  metrics.trackHeavyCandles(() => service.heavyCandles);
  const ctx: AppContext = { service, responder, config, keys: options.keys, metrics, now, redis: options.redis };

  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);

  let closing = false;
  app.addHook('onClose', async () => {
    closing = true;
  });
  app.decorate('markClosing', () => {
    closing = true;
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', String(request.id));
    if (closing) {
      // Keep-alive clients must let go of the socket; in-flight ones are drained by app.close() (http/drain.ts).
      throw new AppError('SHUTTING_DOWN', 'the service is shutting down; retry on another instance', {
        retryAfterSeconds: 1,
        headers: { connection: 'close' },
      });
    }
  });

  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error);
    return sendError(request, reply, appError);
  });
  app.setNotFoundHandler((request, reply) => {
    sendError(request, reply, new AppError('NOT_FOUND', `no route ${request.method} ${redactUrl(request.url).split('?')[0]}`));
  });

  const access = await registerAccess(app, { keys: options.keys, metrics, redis: options.redis, now, config });
  const keyUsage = registerRequestLog(app, { registry: metrics.registry });
  if (fastPathCache !== undefined && options.fastPath !== false) {
    const limitSync = access.limitSync;
    const requestCounter = { n: 0, prefix: Math.random().toString(36).slice(2, 8) };
    // Per recorded route: its metric series, bound once (src/metrics.ts SeriesCounter).
    const bound = new WeakMap<FastRoute, { ok: CounterSeries; notModified: CounterSeries; duration: HistogramSeries }>();
    const logHit = createHitLogger(app.log);
    fastPath = createFastPath({
      keys: options.keys,
      cache: fastPathCache,
      gzipMinBytes: config.cache.gzipMinBytes,
      now,
      limit: (entry, address, at) => limitSync(entry, address, at),
      isClosing: () => closing,
      // Behind a proxy the address needs the proxy rules: the normal path then decides.
      address: (req) => (config.server.trustProxy ? undefined : req.socket.remoteAddress),
      requestId: (req) => {
        const incoming = req.headers['x-request-id'];
        return typeof incoming === 'string' && /^[A-Za-z0-9._:-]{1,64}$/.test(incoming) ? incoming : `${requestCounter.prefix}-${++requestCounter.n}`;
      },
      onServed: (route, status, entry, startedAt, req, requestIdSent, wallMs) => {
        keyUsage.record(entry.id, status);
        const ms = performance.now() - startedAt;
        logHit(route, req.url ?? '', route.route, status, requestIdSent, Math.round(ms * 10) / 10, entry.id, wallMs);
        let series = bound.get(route);
        if (series === undefined) {
          series = {
            ok: metrics.httpRequests.series(route.route, '200'),
            notModified: metrics.httpRequests.series(route.route, '304'),
            duration: metrics.httpRequestDuration.series(route.route),
          };
          bound.set(route, series);
        }
        (status === 200 ? series.ok : series.notModified).value += 1;
        observeSeries(series.duration, ms / 1000);
      },
    });
    const index = fastPath;
    metrics.trackCacheBytes('fast_path_index', () => index.index.bytes);
  }

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unknown';
    metrics.httpRequests.inc({ route, status: String(reply.statusCode) });
    metrics.httpRequestDuration.observe({ route }, reply.elapsedTime / 1000);
  });

  await registerDocs(app, { keys: options.keys });

  await app.register(async (scope) => {
    await quotesRoutes(scope, ctx);
    await klinesRoutes(scope, ctx);
    await intradayRoutes(scope, ctx);
    await exFactorRoutes(scope, ctx);
    await instrumentRoutes(scope, ctx);
    await depthRoutes(scope, ctx);
    await universeRoutes(scope, ctx);
    await referenceRoutes(scope, ctx);
    await meRoutes(scope, ctx);
    await streamRoutes(scope, ctx);
    await explorerRoutes(scope, ctx);
  });
  await app.register(async (scope) => opsRoutes(scope, {
    router, now, config, metrics, simulated,
    isClosing: () => closing,
    readinessChecks: [...(store === undefined ? [] : [historyReadiness(store)]), ...(redisHealthTracker === undefined ? [] : [redisReadiness(redisHealthTracker)])],
  }));
  app.addHook('onClose', async () => {
    await service.close();
    for (const client of options.upstreamClients?.values() ?? []) await client.close();
  });

  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Start refusing new requests with 503 SHUTTING_DOWN (graceful shutdown). */
    markClosing(): void;
  }
}
