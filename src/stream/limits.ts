// Per-key limits of the stream: the plan's connection and subscription caps (read defensively:
// keys.ts may not carry them yet) and the key's rate-limit bucket, against which client messages
// count (pushes never do). There is no separate message limiter: the key's bucket lives in the
// access hook's limiter (Redis when configured), so closing and reopening connections resets
// nothing.
import { addressBucket } from '../access/auth-failures.ts';
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

/**
 * The rate-limit bucket of a connection, named as access/plugin.ts names it: `key:<id>` for a key,
 * `anon:<address>` for the free tier (no key; limited per client address, an IPv6 /64 as one), so
 * the stream's client messages and the HTTP requests count against one budget, shared through Redis.
 */
export function keyBucket(entry: KeyEntry, ip: string): string {
  return (entry as KeyEntry & { anonymous?: boolean }).anonymous === true ? `anon:${addressBucket(ip)}` : `key:${entry.id}`;
}
