// Shared Redis (scale-out), when configured: its health (probed in the background; /readyz and
// mdqs_redis_up) and the fill lock per cache key (one upstream call across instances).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import type { Config } from '../../config/schema.ts';
import { createFillLock, type FillLock } from '../cache/fill-lock.ts';
import { trackRedisHealth, type RedisHealth } from '../redis/health.ts';

export interface SharedRedis {
  client: Redis;
  health: RedisHealth;
  /** The fill lock per cache key (absent when caching is off). */
  lock?: FillLock;
  /** Command timeout for tier reads and writes, ms. */
  timeoutMs: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** undefined: no Redis configured; every instance works on its own. */
    sharedRedis: SharedRedis | undefined;
  }
}

export const sharedRedisPlugin = fp(async (app: FastifyInstance, options: { redis?: Redis; config: Config; cache: boolean; now: () => number }) => {
  const { redis, config, now } = options;
  if (redis === undefined) {
    app.decorate('sharedRedis', undefined);
    return;
  }
  const health = trackRedisHealth(redis, { now });
  app.addHook('onClose', async () => health.stop());
  let lock: FillLock | undefined;
  if (options.cache) {
    const subscriber = redis.duplicate({ enableOfflineQueue: true, commandTimeout: undefined, autoResubscribe: true });
    subscriber.on('error', () => undefined);
    lock = createFillLock({ redis, subscriber, prefix: 'mdqs:fill:', leaseMs: config.redis.fillLockLeaseMs ?? 1_000, now, health });
    const opened = lock;
    app.addHook('onClose', async () => {
      await opened.close();
      subscriber.disconnect();
    });
  }
  app.decorate('sharedRedis', { client: redis, health, lock, timeoutMs: config.redis.commandTimeoutMs ?? 250 });
}, { name: 'shared-redis' });
