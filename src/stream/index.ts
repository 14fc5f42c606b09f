// WebSocket streaming: GET /v1/ws/stream (channels quotes, depth) and the legacy quotes-only
// GET /v1/ws/quotes (docs/vendors.md#tickflow-stream), through @fastify/websocket so the
// handshake runs the app's own hooks: the key is checked (401) and the plan's features and the
// connection cap (403, 429) before the upgrade, and refusals carry the JSON error body.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import websocket from '@fastify/websocket';
import type WebSocket from 'ws';
import type { KeyEntry } from '../access/keys.ts';
import { authorize } from '../access/guard.ts';
import { RATE_LIMIT_PREFIX } from '../access/plugin.ts';
import { createLocalLimiter, createRedisLimiter, createSharedLimiter, type Limiter } from '../access/rate-limit.ts';
import { trackRedisHealth } from '../redis/health.ts';
import { AppError, isAppError } from '../errors.ts';
import type { AppContext } from '../routes/context.ts';
import { DEFAULT_FLEET_LEASE_MS, StreamFleet } from './fleet.ts';
import { StreamHub, type ConnectionTicket } from './hub.ts';
import { keyBucket, maxConnections } from './limits.ts';
import { createStreamMetrics } from './metrics.ts';
import { parseClientMessage } from './protocol.ts';
import { DEFAULT_REPLAY, Sequencer } from './sequencer.ts';
import { streamRouteSchema } from './docs.ts';
import { UpstreamPush } from './upstream-push.ts';
import type { ReadinessCheck } from '../health.ts';

export { StreamHub } from './hub.ts';
export { CLOSE } from './protocol.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The per-key rate limiter of the access hook (access/plugin.ts), when it shares it. */
    keyRateLimiter?: Limiter;
  }
}

/**
 * The key's own rate-limit bucket: the access hook's limiter when it shares it, else one over the
 * same buckets (the same Redis lists when Redis is configured, so fleet-wide either way).
 */
function keyLimiter(app: FastifyInstance, ctx: AppContext): Limiter {
  if (app.keyRateLimiter !== undefined) return app.keyRateLimiter;
  const { redis, now, config } = ctx;
  const health = redis === undefined ? undefined : trackRedisHealth(redis, { now });
  if (health !== undefined) app.addHook('onClose', async () => health.stop());
  return createSharedLimiter({
    degraded: createLocalLimiter({ now, source: redis === undefined ? 'local' : 'degraded' }),
    redis: redis === undefined ? undefined : createRedisLimiter({ redis, prefix: RATE_LIMIT_PREFIX, health, timeoutMs: config.redis.commandTimeoutMs ?? 250 }),
    instances: config.redis.instances ?? 1,
  });
}

/**
 * The stream's fleet when Redis is configured (fleet.ts): caps across instances and workers, and
 * one refresh per symbol per tick for the whole fleet, on a subscriber connection of its own.
 */
function streamFleet(app: FastifyInstance, ctx: AppContext): StreamFleet | undefined {
  const shared = app.sharedRedis;
  if (shared === undefined) return undefined;
  const subscriber = shared.client.duplicate({ enableOfflineQueue: true, commandTimeout: undefined, autoResubscribe: true });
  subscriber.on('error', () => undefined);
  app.addHook('onClose', async () => subscriber.disconnect());
  const { config } = ctx;
  return new StreamFleet({
    redis: shared.client,
    subscriber,
    health: shared.health,
    processes: (config.redis.instances ?? 1) * (config.server.workers ?? 1),
    leaseMs: config.stream.fleetLeaseMs ?? DEFAULT_FLEET_LEASE_MS,
    tickMs: config.stream.tickMs,
    timeoutMs: shared.timeoutMs,
    log: app.log,
  });
}

const hubs = new WeakMap<object, StreamHub>();
const pushes = new WeakMap<object, UpstreamPush>();

/** The /readyz check of the stream's upstream push modes, when some adapter has a push feed. */
export function streamReadiness(app: FastifyInstance): ReadinessCheck | undefined {
  return pushes.get(app.server)?.readiness();
}

/** The hub of an app (tests and benchmarks drive its ticks). */
export function streamHub(app: FastifyInstance): StreamHub {
  const hub = hubs.get(app.server);
  if (hub === undefined) throw new Error('no stream hub registered on this app');
  return hub;
}

/** The subprotocol selected for browsers (see access/guard.ts presentedKey). */
export const STREAM_PROTOCOL = 'mdqs.v1';

const ROUTES = [
  { url: '/v1/ws/stream', legacy: false },
  { url: '/v1/ws/quotes', legacy: true },
] as const;

function keyOf(request: FastifyRequest): KeyEntry {
  if (request.keyEntry === undefined) throw new AppError('MISSING_API_KEY', 'an API key is required');
  return request.keyEntry;
}

export default async function streamRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const settings = ctx.config.stream;
  const live = ctx.config.cache.ttl;
  const metrics = createStreamMetrics(ctx.metrics.registry);
  const fleet = streamFleet(app, ctx);
  const shared = app.sharedRedis;
  // With Redis the numbers and the replay log are the fleet's, so a client resumes on any instance.
  const sequencer = new Sequencer({
    settings: { ...DEFAULT_REPLAY, ...settings.replay },
    now: ctx.now,
    redis: shared?.client,
    health: shared?.health,
    timeoutMs: shared?.timeoutMs,
  });
  // Vendors' push feeds: the hub is created next, and the feeds deliver to it.
  let hubOf: StreamHub | undefined;
  const router = app.upstream.router;
  const push = new UpstreamPush({
    adapters: router.adapters,
    chain: (channel, region) => router.configuredChain(channel, region),
    fleet,
    leaseMs: Math.max(settings.fleetLeaseMs ?? DEFAULT_FLEET_LEASE_MS, 3 * settings.tickMs),
    now: ctx.now,
    metrics,
    log: app.log,
    values: (channel, items) => hubOf?.pushed(channel, items),
  });
  const hub = new StreamHub({
    fleet,
    sequencer,
    numbered: settings.sequence ?? true,
    push: push.enabled ? push : undefined,
    service: ctx.service,
    now: ctx.now,
    metrics,
    log: app.log,
    settings: {
      tickMs: settings.tickMs,
      sendBufferBytes: settings.sendBufferBytes,
      slowCloseMs: settings.slowCloseMs,
      pingIntervalMs: settings.pingIntervalMs,
      heartbeatMs: settings.heartbeatMs ?? 15_000,
      // Long enough for entries cached just before the edge to expire and be read once more.
      edgeGraceMs: Math.max(live.quotes.open, live.depth.open) + ctx.config.cache.staleWhileRevalidate.quotesMs + settings.tickMs,
    },
  });
  hubOf = hub;
  hubs.set(app.server, hub);
  if (push.enabled) pushes.set(app.server, push);
  // Client messages count against the key's rate-limit bucket, the one its HTTP requests use:
  // per key over its window whatever its connections do, and fleet-wide through Redis.
  const limiter = keyLimiter(app, ctx);
  // A keys reload (SIGHUP, or published by another instance) applies to open connections at once.
  // The free tier's entry has no key: it follows the keys file's `anonymous` plan.
  const stopFollowingKeys = ctx.keys.onReload(() => {
    try {
      hub.applyKeys((entry) => ((entry as KeyEntry & { anonymous?: boolean }).anonymous === true
        ? (ctx.keys as unknown as { anonymous?: KeyEntry }).anonymous
        : ctx.keys.current(entry)));
    } catch (error) {
      // The keys were reloaded; only applying them to open connections failed.
      app.log.error({ err: error }, 'stream: applying reloaded keys to open connections failed');
    }
  });
  app.addHook('onClose', async () => stopFollowingKeys());

  // Connections admitted before the upgrade (fleet-wide), claimed by the socket handler.
  const tickets = new WeakMap<object, ConnectionTicket>();

  await app.register(websocket, {
    options: {
      maxPayload: settings.maxPayloadBytes,
      // The official client offers permessage-deflate; small frames are not worth compressing.
      // Each compressing connection keeps a deflate state for its life: zlib's defaults (a 32 KiB
      // window, memLevel 8) hold ~320 KiB of native memory a connection; an 8 KiB window and
      // memLevel 7 ~100 KiB, with stream frames (quotes, depth: a few KiB of JSON) compressed
      // about as well (the mixed memory soak, BENCHMARKS.md).
      perMessageDeflate: { threshold: 1024, serverMaxWindowBits: 13, zlibDeflateOptions: { memLevel: 7 }, concurrencyLimit: 10 },
      // A browser that sent its key as the `mdqs.key.<key>` subprotocol also offers `mdqs.v1`,
      // which is the one selected (the key is never echoed back).
      handleProtocols: (protocols: Set<string>) => (protocols.has(STREAM_PROTOCOL) ? STREAM_PROTOCOL : false),
    },
    preClose: async () => {
      await hub.shutdown(Math.min(5_000, ctx.config.server.shutdownGraceMs || 5_000));
      await push.close();
      await fleet?.close();
      await new Promise<void>((resolve) => app.websocketServer.close(() => resolve()));
    },
    errorHandler: (error, socket, request) => {
      request.log.warn({ err: error }, 'stream socket error');
      socket.terminate();
    },
  });

  for (const { url, legacy } of ROUTES) {
    app.route({
      method: 'GET',
      url,
      schema: streamRouteSchema(legacy),
      // Refusals before the upgrade: HTTP status and our JSON body (the official client stops on 401/403).
      preHandler: async (request) => {
        const entry = keyOf(request);
        const plan = entry.plan;
        if (legacy || !(plan.features.has('quotes') || plan.features.has('depth'))) {
          authorize(entry, { features: ['quotes'] });
        }
        // An upgrade is admitted here (fleet-wide) and attached with its ticket; a plain GET is only checked.
        const upgrade = String(request.headers.upgrade ?? '').toLowerCase() === 'websocket';
        const ticket = upgrade ? await hub.reserve(entry, request.ip) : undefined;
        if (ticket !== undefined) tickets.set(request.raw, ticket);
        if (upgrade ? ticket === undefined : !hub.admits(entry, request.ip)) {
          throw new AppError('TOO_MANY_CONNECTIONS', 'this key already has the most stream connections its plan allows; close one first', {
            retryAfterSeconds: 3,
            details: { max_connections: maxConnections(plan) },
          });
        }
      },
      // A refused handshake's socket left the HTTP server at 'upgrade': nothing else ends it.
      onResponse: async (request) => {
        const ticket = tickets.get(request.raw);
        if (ticket !== undefined) {
          tickets.delete(request.raw);
          hub.release(ticket);
        }
        if (String(request.headers.upgrade ?? '').toLowerCase() === 'websocket') request.raw.socket?.destroy();
      },
      handler: async (_request: FastifyRequest, _reply: FastifyReply) => {
        throw new AppError('UPGRADE_REQUIRED', `${url} is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket)`, {
          headers: { upgrade: 'websocket', connection: 'Upgrade' },
        });
      },
      wsHandler: (socket: WebSocket, request: FastifyRequest) => {
        const entry = keyOf(request);
        const ticket = tickets.get(request.raw);
        tickets.delete(request.raw);
        if (ticket === undefined && !hub.admits(entry, request.ip)) {
          socket.close(1008, 'too many connections for this key');
          return;
        }
        const client = hub.attach(entry, socket, url, request.ip, ticket);
        // Messages are handled in order per connection: a subscribe's snapshot precedes later acks.
        let queue: Promise<void> = Promise.resolve();
        socket.on('message', (data: WebSocket.RawData) => {
          client.awaitingPong = false;
          const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
          queue = queue.then(() => handleMessage(text)).catch((error: unknown) => {
            request.log.error({ err: error }, 'stream message failed');
          });
        });
        socket.on('close', () => hub.detach(client));

        async function handleMessage(text: string): Promise<void> {
          if (client.closed) return;
          // The key's record may have changed since the handshake (a reload): always the current one.
          const { max, windowMs } = client.entry.plan.rateLimit;
          const decision = await limiter.consume(keyBucket(client.entry, request.ip), max, windowMs);
          if (client.closed) return;
          if (decision !== undefined && !decision.allowed) {
            ctx.metrics.rateLimited.inc();
            hub.sendError(client, new AppError('RATE_LIMITED', `rate limit of ${max} requests per ${windowMs / 1000} s exceeded (client messages count against the key's limit); retry in ${Math.ceil(decision.retryAfterMs / 1000)} s`), decision.retryAfterMs);
            return;
          }
          const entry = client.entry;
          try {
            const message = parseClientMessage(text, legacy);
            if (message.op === 'unsubscribe') {
              hub.unsubscribe(client, message.channel, message.refs);
              return;
            }
            // Any market or channel the plan lacks refuses the whole message, as REST does.
            authorize(entry, { features: [message.channel], symbols: message.refs });
            await hub.subscribe(client, message.channel, message.refs, message.since);
          } catch (error) {
            if (!isAppError(error)) throw error;
            hub.sendError(client, error);
          }
        }
      },
    });
  }
}
