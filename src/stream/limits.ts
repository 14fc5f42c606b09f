// Per-key limits of the stream: the plan's connection and subscription caps (read defensively:
// keys.ts may not carry them yet) and a per-key sliding-window counter for client messages, so
// subscribe floods count against the plan's rate limit while pushes never do.
import type { KeyEntry, Plan } from '../access/keys.ts';

export const DEFAULT_MAX_SUBSCRIPTIONS = 200;
export const DEFAULT_MAX_CONNECTIONS = 10;

function positiveInt(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback;
}

/** `max_subscriptions`: subscribed symbols per key, over its connections and both channels. */
export function maxSubscriptions(plan: Plan): number {
  return positiveInt((plan as Plan & { maxSubscriptions?: unknown }).maxSubscriptions, DEFAULT_MAX_SUBSCRIPTIONS);
}

/** `max_connections`: open stream connections per key. */
export function maxConnections(plan: Plan): number {
  return positiveInt((plan as Plan & { maxConnections?: unknown }).maxConnections, DEFAULT_MAX_CONNECTIONS);
}

export interface MessageDecision {
  allowed: boolean;
  retryAfterMs: number;
}

/** Sliding-window log per key (the same semantics as the HTTP limiter: max per windowMs). */
export class MessageLimiter {
  readonly #now: () => number;
  readonly #logs = new Map<string, number[]>();

  constructor(now: () => number) {
    this.#now = now;
  }

  consume(entry: KeyEntry): MessageDecision {
    const { max, windowMs } = entry.plan.rateLimit;
    const now = this.#now();
    let log = this.#logs.get(entry.id);
    if (log === undefined) {
      log = [];
      this.#logs.set(entry.id, log);
    }
    let drop = 0;
    while (drop < log.length && log[drop] <= now - windowMs) drop++;
    if (drop > 0) log.splice(0, drop);
    if (log.length >= max) return { allowed: false, retryAfterMs: Math.max(1, log[0] + windowMs - now) };
    log.push(now);
    return { allowed: true, retryAfterMs: 0 };
  }

  /** Forget a key once its last connection is gone (bounded memory). */
  forget(keyId: string): void {
    this.#logs.delete(keyId);
  }
}
