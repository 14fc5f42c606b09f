// A budget of failed authentications per client address (issue 14.8): guessing keys is not free.
//
//   createAuthFailures({ limiter, budget, windowMs, now, redis?, health?, prefix, timeoutMs })
//     .refuse(address): Promise<LimitDecision | undefined>   a wrong key: count it; a decision
//                                                              when the address is over budget
//     .admit(address, keyId): Promise<LimitDecision | undefined>  a valid key: undefined = let it in
//
// Only a wrong key (INVALID_API_KEY) counts; a missing key reveals nothing and is not a guess.
// Past the budget, wrong keys get 429 RATE_LIMITED instead of 401.
//
// A valid key from a blocked address: it is let in when it already authenticated from that
// address during the last `trustMs` (default 1 h) before or during the block ("known good", kept
// per instance and in Redis), so a client behind the same NAT as a guesser keeps working. A key
// never seen from a blocked address gets the same 429 as a wrong one: otherwise a 200 among the
// 429s would still tell the guesser which guess was right, and the budget would slow nothing.
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { softly, type RedisHealth } from '../redis/health.ts';
import { redisKey } from '../redis/keys.ts';
import type { LimitDecision, Limiter } from './rate-limit.ts';

/**
 * The budget's unit: an IPv4 address, or an IPv6 /64 (one host usually holds a whole /64, so
 * counting single IPv6 addresses would give a guesser 2^64 budgets).
 */
export function addressBucket(ip: string): string {
  const address = ip.split('%')[0];
  if (!address.includes(':')) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  const [head, tail] = address.split('::');
  const first = head ? head.split(':') : [];
  const last = tail ? tail.split(':') : [];
  const groups = tail === undefined ? first : [...first, ...Array(Math.max(0, 8 - first.length - last.length)).fill('0'), ...last];
  return `${groups.slice(0, 4).map((g) => (Number.parseInt(g, 16) || 0).toString(16)).join(':')}::/64`;
}

export interface AuthFailuresOptions {
  /** The same limiter as the per-key limits (shared through Redis when up). */
  limiter: Limiter;
  /** Failed authentications allowed per address per window. */
  budget: number;
  windowMs: number;
  now: () => number;
  redis?: Redis;
  health?: RedisHealth;
  /** e.g. 'mdqs:af:' */
  prefix: string;
  timeoutMs: number;
  /** How long a key that authenticated from an address stays trusted there, ms (default 1 h). */
  trustMs?: number;
}

export interface AuthFailures {
  refuse(address: string): Promise<LimitDecision | undefined>;
  admit(address: string, keyId: string): Promise<LimitDecision | undefined>;
  /**
   * A valid key served elsewhere (the cache-hit fast path): remember it for that address. `now`:
   * the caller's reading of the same clock, when it has one.
   */
  seen(address: string, keyId: string, now?: number): void;
}

export function createAuthFailures(options: AuthFailuresOptions): AuthFailures {
  const { limiter, budget, windowMs, redis, health, prefix, timeoutMs } = options;
  const trustMs = options.trustMs ?? 3_600_000;
  // Bounded: a flood of addresses cannot grow it; losing an entry only costs one Redis read.
  const known = new LRUCache<string, number>({ max: 50_000 });
  const bucket = (address: string) => `ip:${addressBucket(address)}`;
  const pair = (address: string, keyId: string) => `${address}|${keyId}`;

  const remember = (address: string, keyId: string, now: number) => {
    const seen = known.get(pair(address, keyId));
    // Refresh the shared mark at most once a minute per pair: the hot path stays Redis-free.
    if (seen !== undefined && now - seen < 60_000) return;
    known.set(pair(address, keyId), now);
    if (redis !== undefined) {
      void softly(health, timeoutMs, () => redis.set(redisKey(`${prefix}ok:`, pair(address, keyId)), '1', 'PX', trustMs));
    }
  };
  const trusted = async (address: string, keyId: string, now: number): Promise<boolean> => {
    const seen = known.get(pair(address, keyId));
    if (seen !== undefined && now - seen < trustMs) return true;
    if (redis === undefined) return false;
    const mark = await softly(health, timeoutMs, () => redis.exists(redisKey(`${prefix}ok:`, pair(address, keyId))));
    return mark === 1;
  };

  return {
    seen: (address, keyId, now) => remember(address, keyId, now ?? options.now()),
    async refuse(address) {
      const decision = await limiter.consume(bucket(address), budget, windowMs);
      if (decision === undefined || decision.allowed) return undefined;
      return decision;
    },
    async admit(address, keyId) {
      const now = options.now();
      if (await trusted(address, keyId, now)) {
        remember(address, keyId, now);
        return undefined;
      }
      const failures = await limiter.peek(bucket(address), windowMs);
      if (failures === undefined || failures < budget) {
        remember(address, keyId, now);
        return undefined;
      }
      // Blocked and never seen here: refused like a wrong key, with that bucket's retry time
      // (a slot that freed meanwhile admits it, at the cost of one counted attempt).
      const probe = await limiter.consume(bucket(address), budget, windowMs);
      if (probe === undefined || probe.allowed) {
        remember(address, keyId, now);
        return undefined;
      }
      return probe;
    },
  };
}
