// Host rotation across Eastmoney's numbered mirrors (docs/vendors.md#eastmoney-hosts). Eastmoney
// throttles per host and per IP, by answering 429 or, more often, by resetting connections. A
// host that throttles is cooled down and later calls go to the next mirror. There is no inline
// retry on another host: a throttled call fails (the http layer never retries a vendor 429), so
// we never multiply load on a vendor that asked us to slow down.

import { isAppError } from '../../src/errors.ts';

export class HostRotation {
  readonly #hosts: readonly string[];
  readonly #cooldownMs: number;
  readonly #now: () => number;
  readonly #coolUntil = new Map<string, number>();

  constructor(hosts: readonly string[], cooldownMs: number, now: () => number) {
    if (hosts.length === 0) throw new Error('eastmoney: a host list must not be empty');
    this.#hosts = hosts;
    this.#cooldownMs = cooldownMs;
    this.#now = now;
  }

  /** The first host (in configured order) that is not cooling; if all are, the one free soonest. */
  pick(): string {
    const now = this.#now();
    let soonest = this.#hosts[0];
    let soonestAt = Number.POSITIVE_INFINITY;
    for (const host of this.#hosts) {
      const until = this.#coolUntil.get(host) ?? 0;
      if (until <= now) return host;
      if (until < soonestAt) {
        soonest = host;
        soonestAt = until;
      }
    }
    return soonest;
  }

  cool(host: string, ms = this.#cooldownMs): void {
    this.#coolUntil.set(host, this.#now() + ms);
  }
}

/**
 * Whether a failed call looks like host throttling: a vendor 429 (the http layer's
 * UPSTREAM_UNAVAILABLE with `status` 429), or a transport failure with no HTTP status at all
 * (Eastmoney's connection resets). Breaker-open and budget errors are ours, not the host's.
 */
export function isThrottle(error: unknown): boolean {
  if (!isAppError(error)) return false;
  const details = (error.details ?? {}) as { status?: unknown; circuit?: unknown; budget?: unknown };
  if (error.reason === 'UPSTREAM_UNAVAILABLE') return details.status === 429;
  if (error.reason === 'UPSTREAM_ERROR') {
    return details.status === undefined && details.circuit === undefined && details.budget === undefined && error.cause !== undefined;
  }
  return false;
}
