// Cross-instance single-flight (docs/architecture.md#scale-out-through-redis): a short Redis lock per cache key, so N instances that
// miss the same key make one upstream call.
//
//   createFillLock({ redis, subscriber, prefix, leaseMs, now, health?, pollMs? }): FillLock
//   lock.run<T>(key, { deadlineAt }, fill, readFilled): Promise<T>
//   lock.close()
//
// run: SET <lock key> <token> NX PX leaseMs; the lock key is redisKey(prefix + 'lock:', key), e.g.
//   `mdqs:v2:fill:lock:{<key>}` (versioned and hash-tagged, redis/keys.ts: each script takes one key), and
//   the channel `mdqs:v2:fill:filled` (classic pub/sub: a PUBLISH reaches every node of a Cluster).
//   Won → readFilled() once more (another holder may have just finished), else fill(); while it
//         works the holder renews its lease every leaseMs/3 (PEXPIRE, only while the lock is still
//         its own); then PUBLISH <channel> <key> and release the lock (only if still ours).
//         `fill` must have written the shared tier (awaited) before it resolves: waiters read it
//         from there.
//   Lost → wait for that publish (or `pollMs`, whichever first), then readFilled(); a value: done.
//         None (the holder failed, or died and its lease ran out): try to take the lock again.
//   A waiter never waits past `deadlineAt` (clock `now`): then it fills itself. Redis failing or
//   known down: fill() directly, as a single instance would.
// A live holder keeps its lock however long its fill takes (up to its own deadline); a dead one
// (SIGKILL, a lost host) holds it at most one lease after its last renewal, so a waiter notices
// within about leaseMs + pollMs and fills itself, inside its own deadline. A holder whose event
// loop stalls longer than the lease may be joined by a second filler: one extra upstream call,
// never a wrong answer.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { commandTimeoutOf, unsubscribeWithin } from '../redis/connection.ts';
import { softly, type RedisHealth } from '../redis/health.ts';
import { redisKey, versionedName } from '../redis/keys.ts';

export interface FillLockOptions {
  redis: Redis;
  /** A connection of its own for SUBSCRIBE (redis/connection.ts createSubscriber). */
  subscriber: Redis;
  /** e.g. 'mdqs:fill:' */
  prefix: string;
  /** The lock's lease, renewed every leaseMs/3 while the holder works (redis.fillLockLeaseMs), ms. */
  leaseMs: number;
  now: () => number;
  health?: RedisHealth;
  /** Longest wait between checks when no publish arrives, ms (default 100). */
  pollMs?: number;
  /** Ceiling of one Redis command, ms (default: the client's, redis/connection.ts, else 250). */
  timeoutMs?: number;
}

export interface FillLock {
  run<T>(key: string, options: { deadlineAt: number }, fill: () => Promise<T>, readFilled: () => Promise<T | undefined>): Promise<T>;
  close(): Promise<void>;
}

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;

export function createFillLock(options: FillLockOptions): FillLock {
  const { redis, subscriber, prefix, leaseMs, now, health } = options;
  const pollMs = options.pollMs ?? 100;
  const timeoutMs = options.timeoutMs ?? commandTimeoutOf(redis) ?? 250;
  // Versioned like the keys: a release's waiters wake for that release's fills only.
  const channel = versionedName(`${prefix}filled`);
  const waiters = new Map<string, Set<() => void>>();

  const onMessage = (from: string, key: string) => {
    if (from !== channel) return;
    const set = waiters.get(key);
    if (set === undefined) return;
    waiters.delete(key);
    for (const wake of set) wake();
  };
  subscriber.on('message', onMessage);
  // Waiters also poll, so a subscription that is not up yet only costs latency, never correctness.
  // Subscribed again on every connection: a SUBSCRIBE sent while Redis was down fails and is not
  // renewed by ioredis (it renews only subscriptions it saw confirmed).
  const subscribe = () => void subscriber.subscribe(channel).catch(() => undefined);
  subscriber.on('ready', subscribe);
  subscribe();

  const signal = (key: string, ms: number) => new Promise<void>((resolve) => {
    let set = waiters.get(key);
    if (set === undefined) {
      set = new Set();
      waiters.set(key, set);
    }
    const wake = () => {
      clearTimeout(timer);
      set.delete(wake);
      resolve();
    };
    const timer = setTimeout(wake, Math.max(1, ms));
    set.add(wake);
  });

  const lockKey = (key: string) => redisKey(`${prefix}lock:`, key);

  /** Renew the lease every third of it while the holder works; stops once the lock is no longer ours. */
  const heartbeat = (key: string, token: string): (() => void) => {
    let stopped = false;
    let renewing = false;
    const timer = setInterval(() => {
      if (stopped || renewing) return;
      renewing = true;
      void softly(health, Math.min(timeoutMs, leaseMs), () => redis.eval(RENEW, 1, lockKey(key), token, String(leaseMs))).then((renewed) => {
        renewing = false;
        // 0: the lease ran out (a stalled holder) and someone else may hold it now: stop renewing.
        if (renewed === 0 && !stopped) {
          stopped = true;
          clearInterval(timer);
        }
      });
    }, Math.max(1, Math.floor(leaseMs / 3)));
    timer.unref();
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  };

  const hold = async <T>(key: string, token: string, fill: () => Promise<T>, readFilled: () => Promise<T | undefined>): Promise<T> => {
    const stop = heartbeat(key, token);
    try {
      const already = await readFilled();
      return already !== undefined ? already : await fill();
    } finally {
      stop();
      await softly(health, timeoutMs, () => redis.publish(channel, key));
      await softly(health, timeoutMs, () => redis.eval(RELEASE, 1, lockKey(key), token));
    }
  };

  return {
    async run(key, { deadlineAt }, fill, readFilled) {
      const token = randomBytes(12).toString('base64url');
      for (;;) {
        const left = deadlineAt - now();
        if (left <= 0) return fill();
        const won = await softly(health, Math.min(timeoutMs, left), () => redis.set(lockKey(key), token, 'PX', leaseMs, 'NX'));
        if (won === undefined) return fill();
        if (won === 'OK') return hold(key, token, fill, readFilled);
        await signal(key, Math.min(pollMs, deadlineAt - now()));
        if (deadlineAt - now() <= 0) return fill();
        const filled = await readFilled();
        if (filled !== undefined) return filled;
      }
    },
    async close() {
      subscriber.off('message', onMessage);
      subscriber.off('ready', subscribe);
      for (const set of waiters.values()) for (const wake of set) wake();
      waiters.clear();
      await unsubscribeWithin(subscriber, channel);
    },
  };
}
