// Circuit breaker, one per adapter (docs/architecture.md#upstream-resilience).
//
//   createBreaker(options: BreakerOptions, deps: BreakerDeps): CircuitBreaker
//   breaker.state(): 'closed' | 'open' | 'half_open'
//   breaker.admit(): BreakerTicket            throws AppError UPSTREAM_UNAVAILABLE (retryAfterSeconds)
//   ticket.success() | ticket.failure()       one report per upstream attempt
//   ticket.release()                          the call ended without a verdict (always call it last)
//
// Policy: `failureThreshold` CONSECUTIVE failures open the circuit. A failure-ratio window was
// rejected: vendor traffic per adapter ranges from a trickle to thousands per second, and a ratio
// needs a minimum volume to mean anything, which a quiet adapter never reaches; consecutive
// failures trip predictably at any volume. Open lasts `openMs`; then the circuit is half-open and
// admits at most `halfOpenProbes` calls at once (others fail fast, so a recovering vendor is not
// stampeded). The first probe verdict decides: success closes, failure reopens for another `openMs`.
// The open → half-open move is computed lazily from the clock (no timer), so an idle breaker still
// reaches half-open, and tests drive it with an injected clock.
//
// Only upstream failures are reported as failures (timeouts, 5xx, network errors, bad bodies); a
// 4xx answer shows the vendor is reachable, and the http layer reports it as a success.

import { AppError } from '../errors.ts';

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerOptions {
  /** Consecutive upstream failures that open the circuit (≥ 1). */
  failureThreshold: number;
  /** Time the circuit stays open before probing, ms. */
  openMs: number;
  /** Calls admitted at once while half-open (default 1). */
  halfOpenProbes?: number;
}

export interface BreakerDeps {
  /** Used in the error message and details only. */
  adapterId: string;
  /** Clock, ms (any monotonic-enough source; epoch ms is fine). */
  now: () => number;
  /** Called on every transition (after it happened), e.g. to log it. */
  onStateChange?: (state: BreakerState) => void;
}

export interface BreakerTicket {
  /** Whether this call was admitted as a half-open probe. */
  readonly probe: boolean;
  success(): void;
  failure(): void;
  /** Frees a probe slot without a verdict (caller aborted, budget spent, 429). Idempotent. */
  release(): void;
}

export interface CircuitBreaker {
  state(): BreakerState;
  admit(): BreakerTicket;
  /** Whole seconds until the circuit half-opens (≥ 1), for `Retry-After`. */
  retryAfterSeconds(): number;
  /** When the circuit last left `closed` (epoch ms); undefined while closed. */
  troubleSince(): number | undefined;
}

export function createBreaker(options: BreakerOptions, deps: BreakerDeps): CircuitBreaker {
  const threshold = Math.max(1, Math.floor(options.failureThreshold));
  const openMs = Math.max(0, options.openMs);
  const probeLimit = Math.max(1, Math.floor(options.halfOpenProbes ?? 1));
  const { now, adapterId } = deps;

  let current: BreakerState = 'closed';
  // Verdicts from tickets admitted before the last transition are ignored: a straggler that
  // was admitted while closed must not close (or re-open) a circuit that has moved on.
  let generation = 0;
  let consecutiveFailures = 0;
  let openedAt = 0;
  let probesInFlight = 0;
  let troubleSince: number | undefined;

  function moveTo(next: BreakerState): void {
    if (current === 'closed' && next !== 'closed') troubleSince = now();
    if (next === 'closed') troubleSince = undefined;
    current = next;
    generation++;
    probesInFlight = 0;
    if (next === 'open') openedAt = now();
    if (next === 'closed') consecutiveFailures = 0;
    deps.onStateChange?.(next);
  }

  function state(): BreakerState {
    if (current === 'open' && now() - openedAt >= openMs) moveTo('half_open');
    return current;
  }

  function retryAfterSeconds(): number {
    if (state() !== 'open') return 1;
    return Math.max(1, Math.ceil((openedAt + openMs - now()) / 1000));
  }

  function reject(): never {
    throw new AppError('UPSTREAM_UNAVAILABLE', 'The upstream data source is temporarily unavailable', {
      details: { adapter: adapterId, circuit: current },
      retryAfterSeconds: retryAfterSeconds(),
    });
  }

  function admit(): BreakerTicket {
    const s = state();
    if (s === 'open') reject();
    let probe = false;
    if (s === 'half_open') {
      if (probesInFlight >= probeLimit) reject();
      probesInFlight++;
      probe = true;
    }
    const ticketGeneration = generation;
    let slotHeld = probe;

    const freeSlot = (): void => {
      if (slotHeld && ticketGeneration === generation) probesInFlight--;
      slotHeld = false;
    };

    return {
      probe,
      success() {
        if (ticketGeneration !== generation) return;
        freeSlot();
        if (current === 'half_open') moveTo('closed');
        else consecutiveFailures = 0;
      },
      failure() {
        if (ticketGeneration !== generation) return;
        freeSlot();
        if (current === 'half_open') moveTo('open');
        else if (current === 'closed' && ++consecutiveFailures >= threshold) moveTo('open');
      },
      release: freeSlot,
    };
  }

  return { state, admit, retryAfterSeconds, troubleSince: () => (state() === 'closed' ? undefined : troubleSince) };
}
