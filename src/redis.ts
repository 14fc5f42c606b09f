// The shared Redis client (scale-out). Fail fast: no offline queue, short timeouts, so a Redis
// that is down never stalls a request.
import { Redis } from 'ioredis';

export function createRedisClient(url: string): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, connectTimeout: 500, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  return redis;
}
