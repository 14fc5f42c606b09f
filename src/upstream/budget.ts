// Outbound request budget, one per vendor: never more than `max` requests in ANY window of
// `windowMs` (DESIGN.md 5, "never exceed its quota").
//
//   createBudget(options: BudgetOptions, now: () => number): RequestBudget      one process
//   budget.tryTake(): boolean           true = one request may go out now (and is counted)
//   budget.waitMs(): number             ms until tryTake() can succeed (0: now)
//   budget.retryAfterSeconds(): number  whole seconds until tryTake() can succeed (≥ 1)
//   budget.pauseFor(ms): void           spend nothing until then (a vendor 429's Retry-After)
//   budget.remaining(): number          requests still allowed in the current window
//
//   createFleetBudget(options: FleetBudgetOptions): FleetBudget      every process sharing Redis
//   fleet.take(): Promise<BudgetDecision>  a slot now ({ ok: true }), or how long until one frees
//   fleet.pauseFor(ms): Promise<void>      every process spends nothing until then (a vendor 429)
//   fleet.state(): BudgetState             scope, max, remaining (as last seen), paused
//
// The fleet budget (issue 27) is the same sliding log, kept in Redis by one Lua script per
// decision (Redis's TIME is the one clock): a LIST of send times under
// `mdqs:v2:budget:{<adapter>}:log` and the pause deadline under `mdqs:v2:budget:{<adapter>}:pause`
// (one hash tag per vendor: one Cluster slot, so the script never gets CROSSSLOT). Each send is
// kept for windowMs plus a guard (2 % of the window, 50 to 250 ms) that covers the time between a
// process taking a slot and its request reaching the vendor, so the vendor's own count never sees
// more than `max` in any windowMs. While Redis is down (or not configured) each process keeps its
// share, max ÷ processes (redis.instances × server.workers), in a local budget.
//
// A sliding log rather than a token bucket: a full bucket plus its refill lets 2 × max through
// in one window, which is exactly what a vendor quota forbids. The log is a ring of the last `max`
// send times, so each check is O(1): a request may go when the oldest of the last `max` sends is
// at least `windowMs` old. When spent, callers fail fast (no queue): the http layer turns that
// into UPSTREAM_UNAVAILABLE with Retry-After, and the service may serve stale instead.

import type { Redis } from 'ioredis';
import { redisKey, softly, type RedisHealth } from '../redis.ts';

export interface BudgetOptions {
  /** Requests allowed in any window (1 … 1 000 000; the ring holds one slot per request). */
  max: number;
  /** Window length, ms (> 0). */
  windowMs: number;
}

export interface RequestBudget {
  tryTake(): boolean;
  waitMs(): number;
  retryAfterSeconds(): number;
  pauseFor(ms: number): void;
  remaining(): number;
}

const MAX_BUDGET = 1_000_000;

export function createBudget(options: BudgetOptions, now: () => number): RequestBudget {
  const { max, windowMs } = options;
  if (!Number.isInteger(max) || max < 1 || max > MAX_BUDGET) {
    throw new RangeError(`budget.max must be an integer in 1..${MAX_BUDGET}, got ${max}`);
  }
  if (!(windowMs > 0)) throw new RangeError(`budget.windowMs must be > 0, got ${windowMs}`);

  const sends = new Float64Array(max).fill(Number.NEGATIVE_INFINITY);
  // `sends[oldest]` is the earliest of the last `max` sends; it is also the slot the next one fills.
  let oldest = 0;
  let pausedUntil = Number.NEGATIVE_INFINITY;

  function waitMs(t: number): number {
    return Math.max(0, pausedUntil - t, sends[oldest] + windowMs - t);
  }

  return {
    tryTake() {
      const t = now();
      if (waitMs(t) > 0) return false;
      sends[oldest] = t;
      oldest = (oldest + 1) % max;
      return true;
    },
    waitMs() {
      return waitMs(now());
    },
    retryAfterSeconds() {
      return Math.max(1, Math.ceil(waitMs(now()) / 1000));
    },
    pauseFor(ms) {
      if (ms > 0) pausedUntil = Math.max(pausedUntil, now() + ms);
    },
    remaining() {
      const t = now();
      if (t < pausedUntil) return 0;
      let count = 0;
      for (const sent of sends) if (t - sent < windowMs) count++;
      return max - count;
    },
  };
}

export interface BudgetDecision {
  /** True: one request may go out now (it is counted). */
  ok: boolean;
  /** Refused: ms until a slot frees (or the pause ends). */
  waitMs: number;
  /** Whether the refusal is a vendor's pause (429 Retry-After) rather than a spent window. */
  paused: boolean;
  /** Which budget decided: the fleet's (Redis) or this process's share. */
  scope: 'fleet' | 'local';
}

export interface BudgetState {
  scope: 'fleet' | 'local';
  /** The max of the deciding budget: the fleet's, or this process's share. */
  max: number;
  windowMs: number;
  /** Requests still allowed in the window, as last seen (fleet: the last decision's, at most ~1 s old). */
  remaining: number;
  /** Epoch ms until which a vendor asked us to wait, when in the future. */
  pausedUntil?: number;
}

export interface FleetBudget {
  take(): Promise<BudgetDecision>;
  pauseFor(ms: number): Promise<void>;
  state(): BudgetState;
}

export interface FleetBudgetOptions extends BudgetOptions {
  /** Adapter id: the key's hash tag. */
  adapterId: string;
  now: () => number;
  /** Without Redis: this process's share only. */
  redis?: Redis;
  health?: RedisHealth;
  /** Ceiling of one decision in Redis, ms (default 250). */
  timeoutMs?: number;
  /** Processes sharing the vendor (redis.instances × server.workers): the local share is max ÷ this. */
  processes?: number;
}

// KEYS[1] the log, KEYS[2] the pause deadline; ARGV max, window (guard included), mode
// ('take' | 'peek' | 'pause'), pause ms. Returns {ok 0|1, wait ms, remaining, paused 0|1}.
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local mode = ARGV[3]
if mode == 'pause' then
  local ms = tonumber(ARGV[4])
  local current = tonumber(redis.call('GET', KEYS[2]) or '0')
  if now + ms > current then redis.call('SET', KEYS[2], now + ms, 'PX', ms) end
  return {0, ms, 0, 1}
end
local floor = now - window
while true do
  local head = redis.call('LINDEX', KEYS[1], 0)
  if not head or tonumber(head) > floor then break end
  redis.call('LPOP', KEYS[1])
end
local count = redis.call('LLEN', KEYS[1])
local remaining = max - count
if remaining < 0 then remaining = 0 end
local paused = tonumber(redis.call('GET', KEYS[2]) or '0')
if paused > now then return {0, paused - now, remaining, 1} end
if mode == 'peek' then return {0, 0, remaining, 0} end
if count < max then
  local tail = redis.call('LINDEX', KEYS[1], -1)
  local at = now
  if tail and tonumber(tail) > at then at = tonumber(tail) end
  redis.call('RPUSH', KEYS[1], at)
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, 0, remaining - 1, 0}
end
local oldest = tonumber(redis.call('LINDEX', KEYS[1], count - max))
local wait = oldest + window - now
if wait < 1 then wait = 1 end
return {0, wait, 0, 0}
`;

type Reply = [number, number, number, number];
type WithScript = Redis & { mdqsBudget(log: string, pause: string, max: number, window: number, mode: string, pauseMs: number): Promise<Reply> };

/** The guard added to the fleet window: 2 % of it, 50 to 250 ms. */
export function fleetGuardMs(windowMs: number): number {
  return Math.min(250, Math.max(50, Math.round(windowMs * 0.02)));
}

export function createFleetBudget(options: FleetBudgetOptions): FleetBudget {
  const { max, windowMs, now, redis, health, adapterId } = options;
  const processes = Math.max(1, options.processes ?? 1);
  const share = Math.max(1, Math.floor(max / processes));
  const local = createBudget({ max: share, windowMs }, now);
  const timeoutMs = options.timeoutMs ?? 250;
  const windowWithGuard = windowMs + fleetGuardMs(windowMs);
  const logKey = `${redisKey('mdqs:budget:', adapterId)}:log`;
  const pauseKey = `${redisKey('mdqs:budget:', adapterId)}:pause`;
  if (redis !== undefined && typeof (redis as unknown as Partial<WithScript>).mdqsBudget !== 'function') {
    redis.defineCommand('mdqsBudget', { numberOfKeys: 2, lua: SCRIPT });
  }
  let seen: { remaining: number; at: number; pausedUntil: number } | undefined;
  let refreshing = false;
  let localPausedUntil = 0;

  const run = async (mode: 'take' | 'peek' | 'pause', pauseMs = 0): Promise<Reply | undefined> => {
    if (redis === undefined) return undefined;
    const reply = await softly(health, timeoutMs, () => (redis as unknown as WithScript).mdqsBudget(logKey, pauseKey, max, windowWithGuard, mode, pauseMs));
    if (reply === undefined) {
      seen = undefined;
      return undefined;
    }
    const [, wait, remaining, paused] = reply.map(Number);
    const at = now();
    seen = { remaining, at, pausedUntil: paused === 1 ? at + wait : 0 };
    return reply;
  };

  const localDecision = (): BudgetDecision => {
    if (local.tryTake()) return { ok: true, waitMs: 0, paused: false, scope: 'local' };
    return { ok: false, waitMs: Math.max(1, local.waitMs()), paused: localPausedUntil > now(), scope: 'local' };
  };

  return {
    async take() {
      const reply = await run('take');
      if (reply === undefined) return localDecision();
      const [ok, wait, , paused] = reply.map(Number);
      return { ok: ok === 1, waitMs: ok === 1 ? 0 : Math.max(1, wait), paused: paused === 1, scope: 'fleet' };
    },
    async pauseFor(ms) {
      if (!(ms > 0)) return;
      // Locally too: while Redis is down this process still waits as the vendor asked.
      local.pauseFor(ms);
      localPausedUntil = Math.max(localPausedUntil, now() + ms);
      await run('pause', Math.ceil(ms));
    },
    state() {
      const fleet = redis !== undefined && (health === undefined || health.up) && seen !== undefined;
      if (fleet && seen !== undefined) {
        // At most ~1 s old: refresh in the background (a peek counts nothing).
        if (now() - seen.at > 1000 && !refreshing) {
          refreshing = true;
          void run('peek').finally(() => {
            refreshing = false;
          });
        }
        return { scope: 'fleet', max, windowMs, remaining: seen.remaining, ...(seen.pausedUntil > now() ? { pausedUntil: seen.pausedUntil } : {}) };
      }
      if (redis !== undefined && !refreshing && (health === undefined || health.up)) {
        refreshing = true;
        void run('peek').finally(() => {
          refreshing = false;
        });
      }
      return { scope: 'local', max: share, windowMs, remaining: local.remaining(), ...(localPausedUntil > now() ? { pausedUntil: localPausedUntil } : {}) };
    },
  };
}
