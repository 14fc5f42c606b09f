// Exact per-key rate limits: the sliding-window log (cache/sliding-log.ts), in Redis (its one
// atomic Lua script, shared by every instance) or in process (same semantics, one instance).
//
//   createLocalLimiter({ now, maxBuckets? }): Limiter
//   createRedisLimiter({ redis, prefix, health, timeoutMs }): Limiter   (consume → undefined on failure)
//   createSharedLimiter({ local, redis?, instances }): Limiter          Redis when up, else local ÷ instances
//
// Semantics (the log's): a request is admitted when fewer than `max` requests were admitted in the
// last `windowMs` (the window ending now, not a calendar window). So no interval of `windowMs` ever
// holds more than `max` admissions, at a window edge included (a fixed window admits up to 2×max
// across its boundary). Refused requests are not logged: they never push the window forward.
// remaining = max − admitted in the window; resetMs = when the next slot frees (the oldest
// admission leaves the window); retryAfterMs (refused only) = the same instant.
//
// In Redis the log of a bucket is the list under redisKey(prefix, bucket) (e.g.
// `mdqs:v2:rl:{key:k1}`: versioned and hash-tagged, redis/keys.ts; one key per script), expiring
// with the window so an idle bucket disappears. Time comes from Redis (TIME) so instances with
// skewed clocks share one timeline.

import type { Redis } from 'ioredis';
import { redisSlidingLog, SlidingLog } from '../cache/sliding-log.ts';
import { softly, type RedisHealth } from '../redis/health.ts';
import { redisKey } from '../redis/keys.ts';

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** ms until one more request would be admitted (0 when not full after this one). */
  resetMs: number;
  /** Refused only: ms until a retry can succeed. */
  retryAfterMs: number;
  /** Which counter decided: 'redis' (shared), 'local' (one instance) or 'degraded' (Redis down). */
  source: 'redis' | 'local' | 'degraded';
  /** Clock time of the decision, ms (Redis's TIME for 'redis'). */
  at: number;
}

export interface Limiter {
  consume(bucket: string, max: number, windowMs: number): Promise<LimitDecision | undefined>;
  /**
   * The same decision without a promise, for the cache-hit fast path (http/fast-path.ts);
   * undefined when it cannot be decided synchronously (a shared Redis limiter).
   */
  consumeSync?(bucket: string, max: number, windowMs: number, now?: number): LimitDecision | undefined;
  /** Admissions currently in the window (no admission). */
  peek(bucket: string, windowMs: number): Promise<number | undefined>;
}

/** `freesAt`: when the admission whose leaving frees a slot entered (cache/sliding-log.ts). */
function decide(allowed: boolean, count: number, freesAt: number, now: number, max: number, windowMs: number, source: LimitDecision['source']): LimitDecision {
  const untilSlotFrees = Math.max(0, freesAt + windowMs - now);
  const full = count >= max;
  return {
    allowed,
    limit: max,
    remaining: Math.max(0, max - count),
    resetMs: full ? Math.max(1, untilSlotFrees) : count === 0 ? 0 : untilSlotFrees,
    retryAfterMs: allowed ? 0 : Math.max(1, untilSlotFrees),
    source,
    at: now,
  };
}

export interface LocalLimiterOptions {
  now: () => number;
  /** Buckets kept before idle ones are swept (default 100 000). */
  maxBuckets?: number;
  source?: 'local' | 'degraded';
}

export function createLocalLimiter(options: LocalLimiterOptions): Limiter {
  const logs = new Map<string, SlidingLog>();
  const maxBuckets = options.maxBuckets ?? 100_000;
  const source = options.source ?? 'local';

  const sweep = (now: number) => {
    for (const [bucket, log] of logs) {
      if (log.count(now, log.windowMs) === 0) logs.delete(bucket);
    }
  };

  /** `at`: the caller's reading of the same clock (the fast path reads it once per hit). */
  const consumeSync = (bucket: string, max: number, windowMs: number, at?: number): LimitDecision => {
    const now = at ?? options.now();
    let log = logs.get(bucket);
    if (log === undefined) {
      if (logs.size >= maxBuckets) sweep(now);
      // Still full of live buckets (a flood of addresses): forget the oldest-created ones.
      for (const oldest of logs.keys()) {
        if (logs.size < maxBuckets) break;
        logs.delete(oldest);
      }
      log = new SlidingLog();
      logs.set(bucket, log);
    }
    const allowed = log.take(now, max, windowMs);
    return decide(allowed, log.size, log.freesAt(max, now), now, max, windowMs, source);
  };
  return {
    consumeSync,
    async consume(bucket, max, windowMs) {
      return consumeSync(bucket, max, windowMs);
    },
    async peek(bucket, windowMs) {
      const log = logs.get(bucket);
      return log === undefined ? 0 : log.count(options.now(), windowMs);
    },
  };
}

export interface RedisLimiterOptions {
  redis: Redis;
  /** Key prefix, e.g. 'mdqs:rl:'. */
  prefix: string;
  health?: RedisHealth;
  /** Hard ceiling of one decision, ms. */
  timeoutMs: number;
}

export function createRedisLimiter(options: RedisLimiterOptions): Limiter {
  const { redis, prefix, health, timeoutMs } = options;
  const log = redisSlidingLog(redis);
  const run = (bucket: string, max: number, windowMs: number, mode: 'take' | 'peek') =>
    softly(health, timeoutMs, () => log([redisKey(prefix, bucket)], max, windowMs, mode));
  return {
    async consume(bucket, max, windowMs) {
      const reply = await run(bucket, max, windowMs, 'take');
      if (reply === undefined) return undefined;
      return decide(reply.allowed, reply.count, reply.freesAt, reply.now, max, windowMs, 'redis');
    },
    async peek(bucket, windowMs) {
      return (await run(bucket, 1, windowMs, 'peek'))?.count;
    },
  };
}

export interface SharedLimiterOptions {
  /** Per-instance counter used while Redis is down (its own state, not the no-Redis one). */
  degraded: Limiter;
  redis?: Limiter;
  /** Configured instance count: while Redis is down each instance admits max ÷ instances. */
  instances: number;
}

/** The limiter the app uses: shared through Redis when configured and up, else per instance. */
export function createSharedLimiter(options: SharedLimiterOptions): Limiter {
  const { degraded, redis, instances } = options;
  const share = (max: number) => Math.max(1, Math.floor(max / Math.max(1, instances)));
  return {
    consumeSync(bucket, max, windowMs, now) {
      return redis === undefined ? degraded.consumeSync?.(bucket, max, windowMs, now) : undefined;
    },
    async consume(bucket, max, windowMs) {
      if (redis === undefined) return degraded.consume(bucket, max, windowMs);
      const shared = await redis.consume(bucket, max, windowMs);
      return shared ?? degraded.consume(bucket, share(max), windowMs);
    },
    async peek(bucket, windowMs) {
      if (redis === undefined) return degraded.peek(bucket, windowMs);
      return (await redis.peek(bucket, windowMs)) ?? degraded.peek(bucket, windowMs);
    },
  };
}
