// Outbound request budget, one per vendor: never more than `max` requests in ANY window of
// `windowMs` (DESIGN.md 5, "never exceed its quota").
//
//   createBudget(options: BudgetOptions, now: () => number): RequestBudget
//   budget.tryTake(): boolean           true = one request may go out now (and is counted)
//   budget.retryAfterSeconds(): number  whole seconds until tryTake() can succeed (≥ 1)
//   budget.pauseFor(ms): void           spend nothing until then (a vendor 429's Retry-After)
//   budget.remaining(): number          requests still allowed in the current window
//
// A sliding log rather than a token bucket: a full bucket plus its refill lets 2 × max through
// in one window, which is exactly what a vendor quota forbids. The log is a ring of the last `max`
// send times, so each check is O(1): a request may go when the oldest of the last `max` sends is
// at least `windowMs` old. When spent, callers fail fast (no queue): the http layer turns that
// into UPSTREAM_UNAVAILABLE with Retry-After, and the service may serve stale instead.

export interface BudgetOptions {
  /** Requests allowed in any window (1 … 1 000 000; the ring holds one slot per request). */
  max: number;
  /** Window length, ms (> 0). */
  windowMs: number;
}

export interface RequestBudget {
  tryTake(): boolean;
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
