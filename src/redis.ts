// The shared Redis client (scale-out), its pub/sub twin and a health tracker.
//
//   createRedisClient(url, options?): Redis          fail-fast client (see below)
//   createSubscriber(url, options?): Redis           a second connection for SUBSCRIBE
//   trackRedisHealth(redis, options?): RedisHealth   up/down + since, probed in the background
//   redisHealth(redis): RedisHealth | undefined      the tracker attached to a client
//   registerRedisMetric(registry, health)            gauge mdqs_redis_up (1 up, 0 down)
//   redisReadiness(health)                           a /readyz check: redis 'ok' | 'down since …'
//
// Fail fast (issue 14.1): no offline queue (a command while disconnected fails at once instead of
// waiting for a reconnect and replaying into the wrong rate-limit window), one attempt per command,
// a short connect timeout, and a command timeout so a frozen Redis (SIGSTOP: the socket stays open
// and never answers) fails a command after `commandTimeoutMs` instead of hanging the request.
// Reconnection runs in the background forever with a capped back-off, so a Redis that comes back is
// used again without a restart. Callers also consult the health tracker first: while Redis is
// known down they skip it without paying even the command timeout.
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

// ioredis (~45 ms to load) only when a Redis is configured: most starts never need it.
const load = createRequire(import.meta.url);
const RedisClient = (): typeof import('ioredis').Redis => (load('ioredis') as typeof import('ioredis')).Redis;
import { Gauge, type Registry } from 'prom-client';
import type { ReadinessCheck } from './routes/ops.ts';

export interface RedisClientOptions {
  /** A command not answered within this many ms fails (default 250). */
  commandTimeoutMs?: number;
  /** TCP connect + handshake budget, ms (default 500). */
  connectTimeoutMs?: number;
  /** Longest pause between reconnect attempts, ms (default 1000). */
  maxReconnectDelayMs?: number;
}

function baseOptions(options: RedisClientOptions) {
  const maxDelay = options.maxReconnectDelayMs ?? 1000;
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: options.connectTimeoutMs ?? 500,
    commandTimeout: options.commandTimeoutMs ?? 250,
    // Never give up: null would stop reconnecting for good.
    retryStrategy: (times: number) => Math.min(maxDelay, 50 * 2 ** Math.min(times, 5)),
  };
}

const commandTimeouts = new WeakMap<Redis, number>();

export function createRedisClient(url: string, options: RedisClientOptions = {}): Redis {
  const commandTimeoutMs = options.commandTimeoutMs ?? 250;
  // The client's own timeout is a backstop at twice ours: our calls go through softly(), which
  // does not count a reply that arrived during an event-loop stall as a timeout.
  const redis = new (RedisClient())(url, { ...baseOptions(options), commandTimeout: 2 * commandTimeoutMs });
  // Errors surface through command rejections and the health tracker; an unhandled 'error'
  // event would crash the process.
  redis.on('error', () => undefined);
  commandTimeouts.set(redis, commandTimeoutMs);
  return redis;
}

/** The command timeout a client was created with (createRedisClient), if any. */
export function commandTimeoutOf(redis: Redis): number | undefined {
  return commandTimeouts.get(redis);
}

/** A subscriber needs its own connection (a subscribed connection runs no other command). */
export function createSubscriber(url: string, options: RedisClientOptions = {}): Redis {
  // SUBSCRIBE may queue until connected (nothing waits on it), and no command timeout: a
  // subscribed connection only receives. Subscriptions are renewed on every reconnect.
  const redis = new (RedisClient())(url, { ...baseOptions(options), enableOfflineQueue: true, commandTimeout: undefined, autoResubscribe: true });
  redis.on('error', () => undefined);
  return redis;
}

export interface RedisHealth {
  /** Whether Redis answered the last probe or command. */
  readonly up: boolean;
  /** Clock time of the last up/down change (or of tracking start). */
  readonly since: number;
  /** A command failed or timed out: treat Redis as down until a probe answers. */
  markDown(): void;
  /** Called on every change. */
  onChange(listener: (up: boolean) => void): void;
  /** Probe now (also runs every `probeIntervalMs`). */
  probe(): Promise<boolean>;
  /** Resolves once Redis is up, or after `timeoutMs` (boot waits for the first connection). */
  settled(timeoutMs: number): Promise<boolean>;
  stop(): void;
}

export interface RedisHealthOptions {
  now?: () => number;
  /** How often a PING checks the connection, ms (default 500). */
  probeIntervalMs?: number;
}

const trackers = new WeakMap<Redis, RedisHealth>();
const users = new WeakMap<Redis, number>();

/** The health tracker of a client: one per client, shared; call stop() once per call of this. */
export function trackRedisHealth(redis: Redis, options: RedisHealthOptions = {}): RedisHealth {
  const existing = trackers.get(redis);
  if (existing !== undefined) {
    users.set(redis, (users.get(redis) ?? 0) + 1);
    return existing;
  }
  users.set(redis, 1);
  const now = options.now ?? Date.now;
  let up = redis.status === 'ready';
  let since = now();
  const listeners: Array<(up: boolean) => void> = [];
  const set = (next: boolean) => {
    if (next === up) return;
    up = next;
    since = now();
    for (const listener of listeners) listener(up);
  };
  let probing: Promise<boolean> | undefined;
  const health: RedisHealth = {
    get up() {
      return up;
    },
    get since() {
      return since;
    },
    markDown: () => set(false),
    onChange: (listener) => {
      listeners.push(listener);
    },
    probe() {
      // A frozen Redis would stack one PING per interval; one outstanding probe is enough.
      if (probing !== undefined) return probing;
      const run = async () => {
        try {
          const ok = redis.status === 'ready' && (await redis.ping()) === 'PONG';
          set(ok);
          return ok;
        } catch {
          set(false);
          return false;
        }
      };
      probing = run().finally(() => {
        probing = undefined;
      });
      return probing;
    },
    settled(timeoutMs) {
      if (up) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timeout = setTimeout(() => resolve(up), timeoutMs);
        timeout.unref();
        listeners.push((next) => {
          if (next) {
            clearTimeout(timeout);
            resolve(true);
          }
        });
      });
    },
    stop() {
      // One stop per trackRedisHealth call: the tracker lives while anyone still uses it.
      const left = (users.get(redis) ?? 1) - 1;
      users.set(redis, left);
      if (left > 0) return;
      trackers.delete(redis);
      clearInterval(timer);
      redis.off('ready', onReady);
      redis.off('close', onClose);
    },
  };
  const onReady = () => void health.probe();
  const onClose = () => set(false);
  redis.on('ready', onReady);
  redis.on('close', onClose);
  const timer = setInterval(() => void health.probe(), options.probeIntervalMs ?? 500);
  timer.unref();
  trackers.set(redis, health);
  void health.probe();
  return health;
}

export function redisHealth(redis: Redis): RedisHealth | undefined {
  return trackers.get(redis);
}

/** mdqs_redis_up: 1 while the shared Redis answers, 0 while instances run on their own. */
export function registerRedisMetric(registry: Registry, health: RedisHealth): void {
  if (registry.getSingleMetric('mdqs_redis_up') !== undefined) return;
  new Gauge({
    name: 'mdqs_redis_up',
    help: 'Whether the shared Redis answers (1) or the instance runs on its own tiers and per-instance limits (0).',
    registers: [registry],
    collect() {
      this.set(health.up ? 1 : 0);
    },
  });
}

/**
 * A /readyz check (routes/ops.ts ReadinessCheck shape): detail 'ok', or 'down since <ISO time>'.
 * Never sends a command, so it never waits. A Redis that is down does not make the instance
 * unready: it keeps serving from its own tiers with per-instance limits.
 */
export function redisReadiness(health: RedisHealth): ReadinessCheck {
  return {
    name: 'redis',
    run: async () => (health.up
      ? { ready: true, detail: 'ok' }
      : { ready: true, detail: `down since ${new Date(health.since).toISOString()}`, degraded: { problem: 'down: limits per instance, no shared cache', since: health.since } }),
  };
}

/** Run a Redis call with a hard ceiling; undefined on error, timeout or known-down Redis. */
export async function softly<T>(health: RedisHealth | undefined, timeoutMs: number, call: () => Promise<T>): Promise<T | undefined> {
  if (health !== undefined && !health.up) return undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      call(),
      new Promise<undefined>((_, reject) => {
        // Timers run before I/O in an event-loop turn: after a stall the reply may already be in
        // the socket. setImmediate runs after that I/O, so only a reply that truly is not there
        // yet counts as a timeout.
        timer = setTimeout(() => setImmediate(() => reject(new Error('redis timeout'))), timeoutMs);
      }),
    ]);
  } catch {
    health?.markDown();
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
