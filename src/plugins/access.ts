// Access for every /v1 request (src/access/plugin.ts: key → failed-auth budget → rate limit),
// before any cache is consulted, and the one access line per request (http/logging.ts).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import type { Config } from '../../config/schema.ts';
import type { KeyStore } from '../access/keys.ts';
import { registerAccess, type Access } from '../access/plugin.ts';
import { registerRequestLog, type KeyUsage } from '../http/logging.ts';

declare module 'fastify' {
  interface FastifyInstance {
    access: Access & { keys: KeyStore; usage: KeyUsage };
  }
}

export const accessPlugin = fp(async (app: FastifyInstance, options: { keys: KeyStore; redis?: Redis; config: Config; now: () => number }) => {
  const access = await registerAccess(app, { keys: options.keys, metrics: app.metrics, redis: options.redis, now: options.now, config: options.config });
  const usage = registerRequestLog(app, { registry: app.metrics.registry });
  app.decorate('access', Object.assign(access, { keys: options.keys, usage }));
}, { name: 'access', dependencies: ['metrics', 'lifecycle'] });
