// buildApp: the app as a short list of Fastify plugins, each owning its lifecycle (src/plugins/).
// Never reads the environment, never listens. Tests, benchmarks and the server use the same
// composition:
//
//   metrics → lifecycle → upstream (resilience, router, routing check) → shared Redis (health, fill
//   lock) → caches (data tiers, response cache) → history store → market data (resources, loader,
//   service) → access (keys, rate limits, access log) → fast path → routes (docs, /v1, stream,
//   explorer, ops)
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { createServer } from 'node:http';
import type { Redis } from 'ioredis';
import type { Adapter } from '../adapters/types.ts';
import type { Config } from '../config/schema.ts';
import { fastifyTrustProxy } from '../config/trust-proxy.ts';
import type { KeyStore } from './access/keys.ts';
import type { Tier } from './cache/tier.ts';
import type { DataEntry } from './data/loader.ts';
import { API_VERSION } from './http/docs.ts';
import { clientErrorHandler, HTTP_SERVER_OPTIONS, sendError, toAppError } from './http/error-handler.ts';
import { createFrontDoor } from './http/front-door.ts';
import { createRequestIds, loggerOptions, OneLineLogController } from './http/logging.ts';
import { parseQueryString } from './http/querystring.ts';
import type { Responder } from './http/respond.ts';
import { jsonSerializers, lazyValidators } from './http/server-options.ts';
import type { Metrics } from './metrics.ts';
import { accessPlugin } from './plugins/access.ts';
import { cachesPlugin } from './plugins/caches.ts';
import { fastPathPlugin } from './plugins/fast-path.ts';
import { historyPlugin } from './plugins/history.ts';
import { lifecyclePlugin } from './plugins/lifecycle.ts';
import { marketDataPlugin } from './plugins/market-data.ts';
import { metricsPlugin } from './plugins/metrics.ts';
import { recorderPlugin } from './plugins/recorder.ts';
import { routesPlugin } from './plugins/routes.ts';
import { sharedRedisPlugin } from './plugins/shared-redis.ts';
import { upstreamPlugin } from './plugins/upstream.ts';
import type { HistoryStore } from './store/index.ts';
import type { UpstreamClient } from './upstream/http.ts';

export { API_VERSION };
export { BootError, RoutingError } from './errors.ts';

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
  history?: HistoryStore;
}

/** The response headers a browser client may read (every one the API sets for its clients). */
export const CORS_EXPOSED_HEADERS = [
  'X-Next-End-Time', 'Link', 'X-Missing-Symbols', 'X-Failed-Symbols', 'X-Truncated-Symbols', 'X-Limited-By', 'X-Cache',
  'X-Cache-Tier', 'X-Upstream', 'X-Simulated', 'X-Forming-Bar', 'X-Forming-Bar-Stale', 'X-Forming-Bar-Absent',
  'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'X-Request-Id', 'ETag', 'Age',
];

/** server.cors.origins as @fastify/cors takes them: `*` any, `https://*.example.com` host labels, else exact. */
function corsOptions(origins: readonly string[]): FastifyCorsOptions {
  const escape = (text: string) => text.replace(/[.+?^${}()|[\]\\/]/g, '\\$&');
  const allowed = origins.includes('*')
    ? true
    : origins.map((origin) => (origin.includes('*') ? new RegExp(`^${origin.split('*').map(escape).join('[a-z0-9-]+(?:\\.[a-z0-9-]+)*')}$`, 'i') : origin));
  return {
    origin: allowed,
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ['X-API-Key', 'Authorization', 'Content-Type', 'Accept', 'If-None-Match', 'X-Request-Id'],
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
  };
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, keys, redis } = options;
  const now = options.now ?? Date.now;
  const cache = options.cache !== false;
  // What answers before Fastify routes a request: the cache-hit fast path, once its plugin runs.
  const frontDoor = createFrontDoor();
  const requestIds = createRequestIds();
  const app = Fastify({
    serverFactory: (handler, serverOptions) => {
      const opts = serverOptions as FastifyServerOptions & { http?: object };
      const server = createServer(opts.http ?? {}, (req, res) => {
        if (!frontDoor.handle(req, res)) handler(req, res);
      });
      server.keepAliveTimeout = opts.keepAliveTimeout ?? 72_000;
      server.requestTimeout = opts.requestTimeout ?? 0;
      server.setTimeout(opts.connectionTimeout ?? 0);
      return server;
    },
    logger: options.logger ?? loggerOptions(config),
    // One access line per request (registerRequestLog) instead of Fastify's two.
    logController: new OneLineLogController(),
    genReqId: requestIds,
    // Malformed HTTP (garbage request lines, oversized headers, …) gets our JSON error body too.
    clientErrorHandler,
    http: HTTP_SERVER_OPTIONS,
    bodyLimit: config.server.bodyLimitBytes,
    trustProxy: fastifyTrustProxy(config.server.trustProxy),
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    requestTimeout: config.server.requestTimeoutMs,
    routerOptions: { querystringParser: parseQueryString, ignoreTrailingSlash: false, maxParamLength: 200 },
    // swagger-ui answers its static index with a redirect to /docs/; never redirect (docs/contract.md).
    rewriteUrl: (req) => (req.url === '/docs/static/index.html' || req.url === '/docs/' ? '/docs' : (req.url ?? '/')),
    // Errors Fastify raises before routing (an undecodable URL) get our error body too.
    frameworkErrors: (error, request, reply) => {
      sendError(request, reply, toAppError(error));
    },
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false, useDefaults: false, allErrors: false } },
    schemaController: { compilersFactory: { buildValidator: lazyValidators as never, buildSerializer: jsonSerializers as never } },
  });

  await app.register(metricsPlugin, { metrics: options.metrics });
  await app.register(lifecyclePlugin, { config });
  await app.register(upstreamPlugin, { config, adapters: options.adapters, upstreamClients: options.upstreamClients, now });
  await app.register(sharedRedisPlugin, { redis, config, cache, now });
  await app.register(cachesPlugin, { config, now, cache, responder: options.responder, dataTiers: options.dataTiers });
  await app.register(historyPlugin, { config, now, history: options.history });
  await app.register(recorderPlugin, { config, now });
  await app.register(marketDataPlugin, { config, now });
  // Before access: a preflight carries no key and is answered here; every answer gets the headers.
  const origins = config.server.cors?.origins ?? [];
  if (origins.length > 0) await app.register(cors, corsOptions(origins));
  await app.register(accessPlugin, { keys, redis, config, now });
  if (options.fastPath !== false) await app.register(fastPathPlugin, { config, now, frontDoor, requestIds });
  await app.register(routesPlugin, { config, now, redis });
  return app;
}
