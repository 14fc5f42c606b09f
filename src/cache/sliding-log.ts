// The sliding-window log behind every "at most max in any window" count: the per-key rate limits
// (access/rate-limit.ts) and the vendor budgets (upstream/budget.ts). One log, two homes: in
// Redis (one Lua script, every process shares it) or in process (the same semantics, one process).
//
//   redisSlidingLog(redis)(keys, max, windowMs, mode, pauseMs?): Promise<SlidingLogReply>
//   new SlidingLog(): log.take(now, max, windowMs) | log.count(now, windowMs) | log.freesAt(max, now)
//
// Semantics: a take is admitted when fewer than `max` admissions are in the window ending now
// (`windowMs` long; an admission at time a is in it until a + windowMs, exclusive) and no pause
// holds. So no interval of `windowMs` ever holds more than `max` admissions, at a window edge
// included (a fixed window or a token bucket lets up to 2 × max through across its boundary).
// Refusals are not logged: they never push the window forward. One slot frees when the admission
// `max` places from the newest leaves the window (the oldest, while fewer than max are logged):
// `freesAt` is when that admission entered. Admission times never go backwards (a clock that
// steps back logs the newest time again), so the log stays sorted.
//
// In Redis the log is a LIST of admission times (ms, ascending; a list of integers is stored
// compactly, about 10 bytes an admission) with PEXPIRE = window after each take, so an idle log
// disappears, and an optional second key holds a pause deadline (a vendor's 429 Retry-After). The
// time is Redis's (TIME): processes with skewed clocks share one timeline. The caller names the
// keys; both must hash to one Cluster slot (one hash tag) or the script gets CROSSSLOT.
import type { Redis } from 'ioredis';

/** 'take': admit one if there is room; 'peek': count only; 'pause': set the pause deadline (second key). */
export type SlidingLogMode = 'take' | 'peek' | 'pause';

export interface SlidingLogReply {
  /** 'take' only: this one was admitted (and logged). */
  allowed: boolean;
  /** Admissions in the window, this one included. */
  count: number;
  /** When the admission whose leaving frees a slot entered, ms ('pause': now). */
  freesAt: number;
  /** Redis's clock at the decision, ms. */
  now: number;
  /** The pause deadline, ms (0 when none was ever set, or without a pause key). */
  pausedUntil: number;
}

// KEYS[1] the log, KEYS[2] (optional) the pause deadline; ARGV max, window ms, mode, pause ms.
// Returns {allowed 0|1, count, frees at, now, paused until}.
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = KEYS[1]
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local mode = ARGV[3]
local paused = 0
if KEYS[2] then
  paused = tonumber(redis.call('GET', KEYS[2]) or '0')
  if mode == 'pause' then
    local ms = tonumber(ARGV[4])
    if now + ms > paused then
      paused = now + ms
      redis.call('SET', KEYS[2], paused, 'PX', ms)
    end
    return {0, 0, now, now, paused}
  end
end
local floor = now - window
while true do
  local head = redis.call('LINDEX', key, 0)
  if not head or tonumber(head) > floor then break end
  redis.call('LPOP', key)
end
local count = redis.call('LLEN', key)
local allowed = 0
if mode == 'take' then
  if count < max and paused <= now then
    local tail = redis.call('LINDEX', key, -1)
    local at = now
    if tail and tonumber(tail) > at then at = tonumber(tail) end
    redis.call('RPUSH', key, at)
    count = count + 1
    allowed = 1
  end
  redis.call('PEXPIRE', key, window)
end
local frees = now
if count > 0 then
  local i = count - max
  if i < 0 then i = 0 end
  frees = tonumber(redis.call('LINDEX', key, i))
end
return {allowed, count, frees, now, paused}
`;

const COMMAND = 'mdqsSlidingLog';

type Raw = [number, number, number, number, number];
type WithScript = Redis & { [COMMAND](numberOfKeys: number, ...args: Array<string | number>): Promise<Raw> };

/** One decision on the log at keys[0] (keys[1]: its pause deadline), by the script, defined once per client. */
export type RedisSlidingLog = (keys: readonly [log: string, pause?: string], max: number, windowMs: number, mode: SlidingLogMode, pauseMs?: number) => Promise<SlidingLogReply>;

export function redisSlidingLog(redis: Redis): RedisSlidingLog {
  // The number of keys is passed per call: the rate limits use one, the budgets two.
  const script = redis as unknown as WithScript;
  if (typeof (script as Partial<WithScript>)[COMMAND] !== 'function') redis.defineCommand(COMMAND, { lua: SCRIPT });
  return async (keys, max, windowMs, mode, pauseMs = 0) => {
    const names = keys[1] === undefined ? [keys[0]] : [keys[0], keys[1]];
    const [allowed, count, freesAt, now, pausedUntil] = (await script[COMMAND](names.length, ...names, max, windowMs, mode, pauseMs)).map(Number);
    return { allowed: allowed === 1, count, freesAt, now, pausedUntil };
  };
}

/** The log of one bucket in process (the in-memory twin of the script). */
export class SlidingLog {
  private times: number[] = [];
  /** Index of the oldest admission still in the window. */
  private head = 0;
  /** The window it was last counted over, ms (an owner of many logs sweeps idle ones by it). */
  windowMs = 0;
  /** Nothing is admitted before this time, ms (a vendor's pause). */
  pausedUntil = Number.NEGATIVE_INFINITY;

  /** Admissions in the window ending at `now`; older ones are dropped. */
  count(now: number, windowMs: number): number {
    this.windowMs = windowMs;
    const floor = now - windowMs;
    const times = this.times;
    let head = this.head;
    while (head < times.length && times[head] <= floor) head += 1;
    // Compact once the dead prefix dominates, so the array never grows without bound.
    if (head > 1024 && head * 2 > times.length) {
      this.times = times.slice(head);
      head = 0;
    }
    this.head = head;
    return this.times.length - head;
  }

  /** Admissions in the window as last counted (after count or take). */
  get size(): number {
    return this.times.length - this.head;
  }

  /** Admits one at `now` when fewer than `max` are in the window and no pause holds; whether it did. */
  take(now: number, max: number, windowMs: number): boolean {
    const count = this.count(now, windowMs);
    if (count >= max || now < this.pausedUntil) return false;
    const times = this.times;
    times.push(count > 0 ? Math.max(now, times[times.length - 1]) : now);
    return true;
  }

  /** When the admission whose leaving frees a slot entered (after count or take at `now`); `now` when none is logged. */
  freesAt(max: number, now: number): number {
    const count = this.times.length - this.head;
    return count > 0 ? this.times[this.head + Math.max(0, count - max)] : now;
  }
}
