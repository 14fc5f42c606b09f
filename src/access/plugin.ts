// Access for every /v1 request, in one onRequest hook before any cache is consulted:
// authenticate (key from header or query) → failed-authentication budget per address → the
// per-key rate limit (rate-limit.ts: sliding window, shared through Redis when configured and up).
//
// Every authenticated answer carries X-RateLimit-Limit / -Remaining / -Reset (seconds to the next
// free slot, rounded up); a refusal is 429 RATE_LIMITED with Retry-After (seconds, rounded up) and
// retry_after_ms in the body. Header and query key share one bucket, `key:<id>`. Routes with
// `config.public` (or `rateLimit: false`), unknown routes and /docs are neither authenticated nor
// limited.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../../config/schema.ts';
import { AppError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import { commandTimeoutOf } from '../redis/connection.ts';
import { registerRedisMetric, trackRedisHealth } from '../redis/health.ts';
import { addressBucket, createAuthFailures } from './auth-failures.ts';
import { authenticate } from './guard.ts';
import type { KeyEntry, KeyStore } from './keys.ts';
import { createLocalLimiter, createRedisLimiter, createSharedLimiter, type LimitDecision } from './rate-limit.ts';

export interface AccessOptions {
  keys: KeyStore;
  metrics: Metrics;
  redis?: Redis;
  now: () => number;
  /** redis.instances, redis.commandTimeoutMs and auth.failuresPerMinute; defaults without it. */
  config?: Pick<Config, 'redis'> & Partial<Pick<Config, 'auth'>>;
}

export const RATE_LIMIT_PREFIX = 'mdqs:rl:';
export const AUTH_FAILURE_PREFIX = 'mdqs:af:';
const AUTH_FAILURE_WINDOW_MS = 60_000;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route is never rate-limited (operational routes). */
    rateLimit?: boolean;
  }
  interface FastifyRequest {
    /** The rate-limit decision that admitted the request (GET /v1/me reports what remains). */
    rateLimitDecision?: LimitDecision;
  }
}

function limitHeaders(decision: LimitDecision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(Math.ceil(decision.resetMs / 1000)),
  };
}

function tooMany(message: string, decision: LimitDecision, headers: Record<string, string>): AppError {
  return new AppError('RATE_LIMITED', message, { retryAfterSeconds: decision.retryAfterMs / 1000, headers });
}

export interface Access {
  /**
   * The key's rate-limit decision without a promise (no Redis), for the cache-hit fast path;
   * undefined sends the request the normal way. `address` (the client address as request.ip would
   * give it) lets a key served only by the fast path count as known from that address, so a
   * failed-key block there does not lock it out later. While any address is blocked for wrong
   * keys, the normal path decides everything (it alone applies the block).
   */
  limitSync(entry: KeyEntry, address?: string, now?: number): LimitDecision | undefined;
}

/** Registers the access hook. */
export async function registerAccess(app: FastifyInstance, options: AccessOptions): Promise<Access> {
  const { keys, metrics, redis, now } = options;
  const instances = options.config?.redis.instances ?? 1;
  const timeoutMs = options.config?.redis.commandTimeoutMs ?? (redis ? commandTimeoutOf(redis) : undefined) ?? 250;
  const failureBudget = options.config?.auth?.failuresPerMinute ?? 30;
  const health = redis ? trackRedisHealth(redis, { now }) : undefined;
  if (health !== undefined) {
    registerRedisMetric(metrics.registry, health);
    // The first requests should already share: wait (bounded) for the connection at boot.
    app.addHook('onReady', async () => {
      await health.settled(1000);
    });
    app.addHook('onClose', async () => health.stop());
  }
  const limiter = createSharedLimiter({
    degraded: createLocalLimiter({ now, source: redis ? 'degraded' : 'local' }),
    redis: redis ? createRedisLimiter({ redis, prefix: RATE_LIMIT_PREFIX, health, timeoutMs }) : undefined,
    instances,
  });
  // The stream's client messages count against the same per-key buckets (stream/index.ts).
  if (!app.hasDecorator('keyRateLimiter')) app.decorate('keyRateLimiter', limiter);
  const failureLimiter = createSharedLimiter({
    degraded: createLocalLimiter({ now, source: redis ? 'degraded' : 'local' }),
    redis: redis ? createRedisLimiter({ redis, prefix: AUTH_FAILURE_PREFIX, health, timeoutMs }) : undefined,
    instances,
  });
  const failures = createAuthFailures({
    limiter: failureLimiter, budget: failureBudget, windowMs: AUTH_FAILURE_WINDOW_MS, now, redis, health,
    prefix: AUTH_FAILURE_PREFIX, timeoutMs,
  });
  let blockSeenUntil = 0;
  const failureMessage = `too many failed authentications from this address (at most ${failureBudget} a minute)`;

  const exempt = (request: FastifyRequest) => {
    const config = request.routeOptions.config;
    return config?.public === true || config?.rateLimit === false || request.is404 || request.url.startsWith('/docs');
  };

  app.addHook('onRequest', async (request, reply) => {
    if (exempt(request)) return;
    let entry;
    try {
      entry = authenticate(request, keys);
    } catch (error) {
      if (error instanceof AppError && error.reason === 'INVALID_API_KEY') {
        const blocked = await failures.refuse(request.ip);
        if (blocked !== undefined) {
          blockSeenUntil = now() + AUTH_FAILURE_WINDOW_MS;
          metrics.rateLimited.inc();
          throw tooMany(failureMessage, blocked, {});
        }
      }
      throw error;
    }
    // No key presented is no guess: the free tier skips the failed-key budget.
    const blocked = entry.anonymous ? undefined : await failures.admit(request.ip, entry.id);
    if (blocked !== undefined) {
      metrics.rateLimited.inc();
      throw tooMany(failureMessage, blocked, {});
    }
    request.keyEntry = entry;
    const { max, windowMs } = entry.plan.rateLimit;
    // The free tier counts per client address (request.ip: the forwarded one behind a trusted
    // proxy), an IPv6 /64 as one address; a key counts per key.
    const bucket = entry.anonymous ? `anon:${addressBucket(request.ip)}` : `key:${entry.id}`;
    // Never undefined: the per-instance counter answers when Redis does not.
    const decision = (await limiter.consume(bucket, max, windowMs))!;
    const headers = limitHeaders(decision);
    if (!decision.allowed) {
      metrics.rateLimited.inc();
      throw tooMany(`rate limit of ${decision.limit} requests per ${windowMs / 1000} s exceeded; see retry_after_ms`, decision, headers);
    }
    request.rateLimitDecision = decision;
    reply.headers(headers);
  });
  // The fast path's bucket name per key record (a reload makes new records).
  const keyBuckets = new WeakMap<KeyEntry, string>();
  return {
    limitSync: (entry, address, at) => {
      const time = at ?? now();
      // The free tier is limited per address, which only the normal path knows for sure.
      if (time < blockSeenUntil || entry.anonymous) return undefined;
      let bucket = keyBuckets.get(entry);
      if (bucket === undefined) {
        bucket = `key:${entry.id}`;
        keyBuckets.set(entry, bucket);
      }
      const decision = limiter.consumeSync?.(bucket, entry.plan.rateLimit.max, entry.plan.rateLimit.windowMs, time);
      if (decision !== undefined && address !== undefined) failures.seen(address, entry.id, time);
      return decision;
    },
  };
}
