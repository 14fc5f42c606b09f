// Outbound request budget, one per vendor: never more than `max` requests in ANY window of
// `windowMs` (docs/architecture.md#upstream-resilience, "never exceed its quota").
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
// Both count with the sliding-window log of cache/sliding-log.ts, the one the key rate limits use:
// in process for the local budget, and for the fleet budget (issue 27) in Redis, by its one Lua
// script per decision (Redis's TIME is the one clock): a LIST of send times under
// `mdqs:v2:budget:{<adapter>}:log` and the pause deadline under `mdqs:v2:budget:{<adapter>}:pause`
// (one hash tag per vendor: one Cluster slot, so the script never gets CROSSSLOT). Each send is
// kept for windowMs plus a guard (2 % of the window, 50 to 250 ms) that covers the time between a
// process taking a slot and its request reaching the vendor, so the vendor's own count never sees
// more than `max` in any windowMs. While Redis is down (or not configured) each process keeps its
// share, max ÷ processes (redis.instances × server.workers), in a local budget.
//
// A sliding log rather than a token bucket: a full bucket plus its refill lets 2 × max through
// in one window, which is exactly what a vendor quota forbids: a request may go when the oldest of
// the last `max` sends is at least `windowMs` old. When spent, callers fail fast (no queue): the
// http layer turns that into UPSTREAM_UNAVAILABLE with Retry-After, and the service may serve
// stale instead.

import type { Redis } from 'ioredis';
import { redisSlidingLog, SlidingLog, type SlidingLogMode, type SlidingLogReply } from '../cache/sliding-log.ts';
import { softly, type RedisHealth } from '../redis/health.ts';
import { redisKey } from '../redis/keys.ts';

export interface BudgetOptions {
  /** Requests allowed in any window (1 … 1 000 000; the log holds one time per request in the window). */
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

  const log = new SlidingLog();

  function waitMs(t: number): number {
    const slot = log.count(t, windowMs) < max ? 0 : log.freesAt(max, t) + windowMs - t;
    return Math.max(0, log.pausedUntil - t, slot);
  }

  return {
    tryTake() {
      return log.take(now(), max, windowMs);
    },
    waitMs() {
      return waitMs(now());
    },
    retryAfterSeconds() {
      return Math.max(1, Math.ceil(waitMs(now()) / 1000));
    },
    pauseFor(ms) {
      if (ms > 0) log.pausedUntil = Math.max(log.pausedUntil, now() + ms);
    },
    remaining() {
      const t = now();
      return t < log.pausedUntil ? 0 : max - log.count(t, windowMs);
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

/** What the fleet decision says, as `take`, `state` and the pause read it. */
interface FleetReading {
  ok: boolean;
  /** Refused: ms until a slot frees, or until the pause ends. */
  wait: number;
  remaining: number;
  paused: boolean;
}

/** The script's reply read for the budget: a pause reports the asked wait and no room. */
function fleetDecision(reply: SlidingLogReply, mode: SlidingLogMode, max: number, windowMs: number, pauseMs: number): FleetReading {
  if (mode === 'pause') return { ok: false, wait: pauseMs, remaining: 0, paused: true };
  const remaining = Math.max(0, max - reply.count);
  if (reply.pausedUntil > reply.now) return { ok: false, wait: reply.pausedUntil - reply.now, remaining, paused: true };
  if (mode === 'peek' || reply.allowed) return { ok: reply.allowed, wait: 0, remaining, paused: false };
  return { ok: false, wait: Math.max(1, reply.freesAt + windowMs - reply.now), remaining: 0, paused: false };
}

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
  const fleetLog = redis === undefined ? undefined : redisSlidingLog(redis);
  let seen: { remaining: number; at: number; pausedUntil: number } | undefined;
  let refreshing = false;
  let localPausedUntil = 0;

  const run = async (mode: SlidingLogMode, pauseMs = 0): Promise<FleetReading | undefined> => {
    if (fleetLog === undefined) return undefined;
    const reply = await softly(health, timeoutMs, () => fleetLog([logKey, pauseKey], max, windowWithGuard, mode, pauseMs));
    if (reply === undefined) {
      seen = undefined;
      return undefined;
    }
    const decision = fleetDecision(reply, mode, max, windowWithGuard, pauseMs);
    const at = now();
    seen = { remaining: decision.remaining, at, pausedUntil: decision.paused ? at + decision.wait : 0 };
    return decision;
  };

  const localDecision = (): BudgetDecision => {
    if (local.tryTake()) return { ok: true, waitMs: 0, paused: false, scope: 'local' };
    return { ok: false, waitMs: Math.max(1, local.waitMs()), paused: localPausedUntil > now(), scope: 'local' };
  };

  return {
    async take() {
      const decision = await run('take');
      if (decision === undefined) return localDecision();
      const { ok, wait, paused } = decision;
      return { ok, waitMs: ok ? 0 : Math.max(1, wait), paused, scope: 'fleet' };
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
