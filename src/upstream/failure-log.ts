// The log of vendor failures (issue 43.5): one warn line per adapter and failure class per
// interval (FAILURE_LOG_INTERVAL_MS), never a stack trace for a vendor failing as vendors do. The
// first failure of a class logs at once (an unexpected one, `error`, with its stack); repeats within the interval are counted, and the next line
// for that adapter and class says how many were left out (`suppressed`). Every failure is still
// counted in mdqs_upstream_requests_total; the client's answer names each adapter tried
// (details.attempts, attempts.ts).
//
//   const log = new FailureLog(logger, now)
//   log.note(adapterId, error)     one failed logical call (the resilience layer calls it)
import { isAppError } from '../errors.ts';
import { failureClass, type AttemptCause } from './attempts.ts';

/** At most one line per adapter and failure class in this long, ms. */
export const FAILURE_LOG_INTERVAL_MS = 60_000;

export interface WarnLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

interface Slot {
  loggedAt: number;
  suppressed: number;
}

export class FailureLog {
  readonly #log: WarnLogger;
  readonly #now: () => number;
  readonly #intervalMs: number;
  // Bounded: adapters × failure classes.
  readonly #slots = new Map<string, Slot>();

  constructor(log: WarnLogger, now: () => number, intervalMs = FAILURE_LOG_INTERVAL_MS) {
    this.#log = log;
    this.#now = now;
    this.#intervalMs = intervalMs;
  }

  note(adapter: string, error: unknown): void {
    const cls = failureClass(error);
    const key = `${adapter}\u0000${cls.cause}`;
    const now = this.#now();
    const slot = this.#slots.get(key);
    if (slot !== undefined && now - slot.loggedAt < this.#intervalMs && now >= slot.loggedAt) {
      slot.suppressed += 1;
      return;
    }
    const suppressed = slot?.suppressed ?? 0;
    this.#slots.set(key, { loggedAt: now, suppressed: 0 });
    this.#log.warn({
      adapter,
      cause: cls.cause,
      ...(cls.status === undefined ? {} : { status: cls.status }),
      ...(cls.code === undefined ? {} : { code: cls.code }),
      ...(cls.host === undefined ? {} : { host: cls.host }),
      ...reasonOf(error),
      // An unexpected failure is a bug to find: its stack, once per interval.
      ...(cls.cause === 'error' ? { err: isAppError(error) && error.cause !== undefined ? error.cause : error } : {}),
      suppressed,
      interval_s: this.#intervalMs / 1000,
    }, 'upstream call failed');
  }

  /** Failures of `adapter` and `cause` counted since its last line (tests, diagnostics). */
  suppressed(adapter: string, cause: AttemptCause): number {
    return this.#slots.get(`${adapter}\u0000${cause}`)?.suppressed ?? 0;
  }
}

/** Our reason and message (never the vendor's text). */
function reasonOf(error: unknown): Record<string, unknown> {
  return isAppError(error) ? { reason: error.reason, message: error.message } : {};
}
