// Resilience around every adapter call, whatever the adapter (sim included): a deadline (the
// adapter gets it as ctx.signal, and the call is raced against it in case an adapter ignores it),
// a circuit breaker per adapter, a concurrency cap per adapter (p-limit), and metrics.
// HTTP vendors additionally retry and budget inside src/upstream/http.ts.
import pLimit, { type LimitFunction } from 'p-limit';
import type { Adapter, CallContext, Resource } from '../../adapters/types.ts';
import { AppError, isAppError } from '../errors.ts';
import { createBreaker, type BreakerState, type CircuitBreaker } from './breaker.ts';
import type { UpstreamMetricsSink, UpstreamOutcome } from './http.ts';

export interface GuardOptions {
  deadlineMs: number;
  concurrency: number;
  breaker: { failureThreshold: number; openMs: number };
  now: () => number;
  metrics?: UpstreamMetricsSink;
  onBreakerStateChange?: (adapter: string, state: BreakerState) => void;
}

interface AdapterSlot {
  breaker: CircuitBreaker;
  limit: LimitFunction;
}

function outcomeOf(error: unknown): UpstreamOutcome {
  if (!isAppError(error)) return 'error';
  switch (error.reason) {
    case 'UPSTREAM_TIMEOUT': return 'timeout';
    case 'UPSTREAM_BAD_RESPONSE': return 'bad_response';
    case 'UPSTREAM_UNAVAILABLE': return 'rate_limited';
    default: return 'error';
  }
}

export class AdapterGuard {
  readonly #options: GuardOptions;
  readonly #slots = new Map<string, AdapterSlot>();

  constructor(options: GuardOptions) {
    this.#options = options;
  }

  #slot(adapterId: string): AdapterSlot {
    let slot = this.#slots.get(adapterId);
    if (slot === undefined) {
      slot = {
        breaker: createBreaker(this.#options.breaker, {
          adapterId,
          now: this.#options.now,
          onStateChange: (state) => this.#options.onBreakerStateChange?.(adapterId, state),
        }),
        limit: pLimit(Math.max(1, this.#options.concurrency)),
      };
      this.#slots.set(adapterId, slot);
    }
    return slot;
  }

  breakerState(adapterId: string): BreakerState {
    return this.#slot(adapterId).breaker.state();
  }

  /** The adapter's shared concurrency cap (the batch loaders run under it too). */
  limitFor(adapterId: string): LimitFunction {
    return this.#slot(adapterId).limit;
  }

  /** One logical adapter call under the breaker and a deadline. */
  async call<T>(adapter: Adapter, resource: Resource, fn: (ctx: CallContext) => Promise<T>): Promise<T> {
    const slot = this.#slot(adapter.id);
    return slot.limit(() => this.#callAdmitted(slot, adapter, resource, fn));
  }

  async #callAdmitted<T>(slot: AdapterSlot, adapter: Adapter, resource: Resource, fn: (ctx: CallContext) => Promise<T>): Promise<T> {
    let ticket;
    try {
      ticket = slot.breaker.admit();
    } catch (error) {
      this.#options.metrics?.upstream({ adapter: adapter.id, resource, outcome: 'circuit_open', ms: 0 });
      throw error;
    }
    const started = performance.now();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new AppError('UPSTREAM_TIMEOUT', `${adapter.label} did not answer within ${this.#options.deadlineMs} ms`, {
          details: { adapter: adapter.id, resource },
        });
        controller.abort(error);
        reject(error);
      }, this.#options.deadlineMs);
    });
    try {
      const value = await Promise.race([fn({ signal: controller.signal }), deadline]);
      ticket.success();
      this.#options.metrics?.upstream({ adapter: adapter.id, resource, outcome: 'ok', ms: performance.now() - started });
      return value;
    } catch (error) {
      // A 4xx from the adapter is an answer (e.g. unknown symbol), not an outage.
      if (isAppError(error) && error.status < 500) ticket.success();
      else if (isAppError(error) && error.reason === 'UPSTREAM_UNAVAILABLE') ticket.release();
      else ticket.failure();
      this.#options.metrics?.upstream({ adapter: adapter.id, resource, outcome: outcomeOf(error), ms: performance.now() - started });
      if (isAppError(error)) throw error;
      throw new AppError('UPSTREAM_ERROR', `${adapter.label} failed`, { cause: error, details: { adapter: adapter.id, resource } });
    } finally {
      clearTimeout(timer);
      ticket.release();
    }
  }
}
