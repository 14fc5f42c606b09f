// Access for every /v1 request: authenticate (key from header or query) on onRequest, then the
// per-key rate limit, before any cache is consulted.
import type { FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { AppError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import { authenticate } from './guard.ts';
import type { KeyStore } from './keys.ts';

export interface AccessOptions {
  keys: KeyStore;
  metrics: Metrics;
  redis?: Redis;
  now: () => number;
}

/** Registers the auth hook; `isPublic` says which requests need no key. */
export async function registerAccess(app: FastifyInstance, options: AccessOptions): Promise<void> {
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config?.public === true || request.is404 || request.url.startsWith('/docs')) return;
    request.keyEntry = authenticate(request, options.keys);
  });

  await app.register(rateLimit, {
    global: true,
    hook: 'preParsing',
    ...(options.redis ? { redis: options.redis, nameSpace: 'mdqs:rl:', skipOnError: true } : {}),
    keyGenerator: (request) => (request.keyEntry ? `key:${request.keyEntry.id}` : `ip:${request.ip}`),
    max: (request) => request.keyEntry?.plan.rateLimit.max ?? 60,
    timeWindow: (request) => request.keyEntry?.plan.rateLimit.windowMs ?? 60_000,
    errorResponseBuilder: (_request, context) => {
      options.metrics.rateLimited.inc();
      return new AppError('RATE_LIMITED', `rate limit of ${context.max} requests exceeded; retry in ${context.after}`, {
        retryAfterSeconds: context.ttl / 1000,
      });
    },
  });
}
