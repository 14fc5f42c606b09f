// Exact per-key rate limits: a sliding-window log, in Redis (one atomic Lua script, shared by every
// instance) or in process (same semantics, one instance).
//
//   createLocalLimiter({ now, maxBuckets? }): Limiter
//   createRedisLimiter({ redis, prefix, health, timeoutMs }): Limiter   (consume → undefined on failure)
//   createSharedLimiter({ local, redis?, instances }): Limiter          Redis when up, else local ÷ instances
//
// Semantics: a request is admitted when fewer than `max` requests were admitted in the last
// `windowMs` (the window ending now, not a calendar window). So no interval of `windowMs` ever
// holds more than `max` admissions, at a window edge included (a fixed window admits up to 2×max
// across its boundary). Refused requests are not logged: they never push the window forward.
// remaining = max − admitted in the window; resetMs = when the oldest admission leaves the window
// (one slot frees); retryAfterMs (refused only) = the same instant.
//
// The log lives as a Redis LIST of admission times (ms, ascending) under redisKey(prefix, bucket)
// (e.g. `mdqs:v2:rl:{key:k1}`: versioned and hash-tagged, redis.ts; one key per script), with
// PEXPIRE = window so an idle bucket disappears; a list of integers is stored compactly
// (listpack), about 10 bytes per admission. Time comes from Redis (TIME) so instances with skewed
// clocks share one timeline.

import type { Redis } from 'ioredis';
import { redisKey, softly, type RedisHealth } from '../redis.ts';

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

// KEYS[1] the log; ARGV max, window. Returns {allowed 0|1, count after, oldest, now}.
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local peek = ARGV[3] == '1'
local key = KEYS[1]
local floor = now - window
while true do
  local head = redis.call('LINDEX', key, 0)
  if not head or tonumber(head) > floor then break end
  redis.call('LPOP', key)
end
local count = redis.call('LLEN', key)
if peek then return {0, count, 0, now} end
local allowed = 0
if count < max then
  local tail = redis.call('LINDEX', key, -1)
  local at = now
  if tail and tonumber(tail) > at then at = tonumber(tail) end
  redis.call('RPUSH', key, at)
  count = count + 1
  allowed = 1
end
redis.call('PEXPIRE', key, window)
local oldest = redis.call('LINDEX', key, 0)
if oldest then oldest = tonumber(oldest) else oldest = now end
return {allowed, count, oldest, now}
`;

function decide(allowed: boolean, count: number, oldest: number, now: number, max: number, windowMs: number, source: LimitDecision['source']): LimitDecision {
  const untilOldestLeaves = Math.max(0, oldest + windowMs - now);
  const full = count >= max;
  return {
    allowed,
    limit: max,
    remaining: Math.max(0, max - count),
    resetMs: full ? Math.max(1, untilOldestLeaves) : count === 0 ? 0 : untilOldestLeaves,
    retryAfterMs: allowed ? 0 : Math.max(1, untilOldestLeaves),
    source,
    at: now,
  };
}

interface Log {
  times: number[];
  head: number;
  windowMs: number;
}

export interface LocalLimiterOptions {
  now: () => number;
  /** Buckets kept before idle ones are swept (default 100 000). */
  maxBuckets?: number;
  source?: 'local' | 'degraded';
}

export function createLocalLimiter(options: LocalLimiterOptions): Limiter {
  const logs = new Map<string, Log>();
  const maxBuckets = options.maxBuckets ?? 100_000;
  const source = options.source ?? 'local';

  const trim = (log: Log, floor: number) => {
    while (log.head < log.times.length && log.times[log.head] <= floor) log.head += 1;
    // Compact once the dead prefix dominates, so the array never grows without bound.
    if (log.head > 1024 && log.head * 2 > log.times.length) {
      log.times = log.times.slice(log.head);
      log.head = 0;
    }
  };
  const sweep = (now: number) => {
    for (const [bucket, log] of logs) {
      trim(log, now - log.windowMs);
      if (log.head >= log.times.length) logs.delete(bucket);
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
        log = { times: [], head: 0, windowMs };
        logs.set(bucket, log);
      }
      log.windowMs = windowMs;
      trim(log, now - windowMs);
      let count = log.times.length - log.head;
      let allowed = false;
      if (count < max) {
        const tail = count > 0 ? log.times[log.times.length - 1] : now;
        log.times.push(Math.max(now, tail));
        count += 1;
        allowed = true;
      }
      const oldest = count > 0 ? log.times[log.head] : now;
      return decide(allowed, count, oldest, now, max, windowMs, source);
  };
  return {
    consumeSync,
    async consume(bucket, max, windowMs) {
      return consumeSync(bucket, max, windowMs);
    },
    async peek(bucket, windowMs) {
      const log = logs.get(bucket);
      if (log === undefined) return 0;
      trim(log, options.now() - windowMs);
      return log.times.length - log.head;
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

type ScriptReply = [number, number, number, number];

export function createRedisLimiter(options: RedisLimiterOptions): Limiter {
  const { redis, prefix, health, timeoutMs } = options;
  if (typeof (redis as Redis & { mdqsRateLimit?: unknown }).mdqsRateLimit !== 'function') {
    redis.defineCommand('mdqsRateLimit', { numberOfKeys: 1, lua: SCRIPT });
  }
  const run = (bucket: string, max: number, windowMs: number, peek: boolean) =>
    softly(health, timeoutMs, () => (redis as Redis & {
      mdqsRateLimit(key: string, max: number, window: number, peek: string): Promise<ScriptReply>;
    }).mdqsRateLimit(redisKey(prefix, bucket), max, windowMs, peek ? '1' : '0'));
  return {
    async consume(bucket, max, windowMs) {
      const reply = await run(bucket, max, windowMs, false);
      if (reply === undefined) return undefined;
      const [allowed, count, oldest, now] = reply.map(Number);
      return decide(allowed === 1, count, oldest, now, max, windowMs, 'redis');
    },
    async peek(bucket, windowMs) {
      const reply = await run(bucket, 1, windowMs, true);
      return reply === undefined ? undefined : Number(reply[1]);
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
