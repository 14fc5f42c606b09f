// One resilience layer per adapter (docs/architecture.md#upstream-resilience), whatever the adapter (sim included):
//   - one deadline, the adapter's own (`deadlineMs`): it starts when a request first needs the
//     data (the caller passes `neededAt`), so waiting for a concurrency slot counts; the adapter
//     gets it as ctx.signal and the call is raced against it in case an adapter ignores it;
//   - one circuit breaker: verdicts per logical call; an answer (found, unknown, empty) is a
//     success, a 4xx from the vendor is an answer, only timeouts / 5xx / network / unreadable
//     bodies are failures, and a vendor 429 or a spent budget gives no verdict;
//   - one concurrency cap in two lanes (lanes.ts) with a bounded queue: background work (the
//     recorder, `history warm`) holds at most `backgroundSlots` slots and waits behind user calls,
//     so a user call always finds a slot it can start in; a background call's deadline starts
//     when it gets its slot;
//   - admission by the vendor's recent latency (issue 27.5): a call whose slot comes with less of
//     its deadline left than the vendor's recent answers took (p90 of the last 32 successes) is
//     not started: it fails fast with UPSTREAM_UNAVAILABLE and Retry-After (the loader answers
//     from stale data when it has some) and the breaker gets no verdict, since only our own queue
//     is to blame; a call that still times out having had less time at the vendor than that gets
//     no verdict either. A burst is so served at the vendor's pace, with its breaker closed;
//   - HTTP vendors add the outbound budget and the one retry in src/upstream/http.ts, under this
//     same deadline (their `http.timeoutMs` is this layer's deadline: registry.ts).
import type { Adapter, CallContext, Resource } from '../../adapters/types.ts';
import { AppError, isAppError } from '../errors.ts';
import { createBreaker, type BreakerState, type CircuitBreaker } from './breaker.ts';
import type { UpstreamMetricsSink, UpstreamOutcome } from './http.ts';
import { createLanes, type Lane, type Lanes } from './lanes.ts';

export interface ResilienceSettings {
  /** Deadline of one logical call, ms, from the moment the data is needed. */
  deadlineMs: number;
  concurrency: number;
  /** Calls waiting for a slot beyond which new calls fail fast (UPSTREAM_UNAVAILABLE). */
  maxQueue: number;
  breaker: { failureThreshold: number; openMs: number };
  /** Slots background calls may hold together (default concurrency − 1, at least 1). */
  backgroundSlots?: number;
}

export interface AdapterHealth {
  circuit: BreakerState;
  /** When the circuit last left `closed` (epoch ms); undefined while closed. */
  circuitSince?: number;
  inFlight: number;
  queued: number;
  /** Requests the vendor's outbound budget still allows in its window; null when unbudgeted. */
  budgetRemaining: number | null;
}

export interface Resilience {
  readonly adapterId: string;
  readonly deadlineMs: number;
  /** One logical adapter call, due `deadlineMs` after `neededAt` (epoch ms; default now). */
  call<T>(adapter: Adapter, resource: Resource, fn: (ctx: CallContext) => Promise<T>, neededAt?: number, lane?: Lane): Promise<T>;
  health(): AdapterHealth;
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

export interface ResilienceDeps {
  now: () => number;
  metrics?: UpstreamMetricsSink;
  onBreakerStateChange?: (adapter: string, state: BreakerState) => void;
  /** The vendor's outbound budget, when it has one (http.ts). */
  budgetRemaining?: () => number;
  /**
   * False when the adapter's HTTP layer (http.ts) reports each request that reaches the vendor
   * itself: this layer then reports only its breaker's refusals, so `mdqs_upstream_requests_total`
   * counts each vendor request once. Default true (adapters without an HTTP layer, e.g. sim).
   */
  countsCalls?: boolean;
}

/** Answer times the admission looks at: the newest successes. */
const LATENCY_SAMPLES = 32;
/** Fewer samples than this: no admission by latency yet (a cold vendor is simply asked). */
const MIN_LATENCY_SAMPLES = 4;

/** The vendor's recent answer times, ms (real time), and what a call needs: their p90. */
export class RecentLatency {
  readonly #samples: number[] = [];
  #next = 0;
  #need = 0;

  note(ms: number): void {
    if (this.#samples.length < LATENCY_SAMPLES) this.#samples.push(ms);
    else this.#samples[this.#next] = ms;
    this.#next = (this.#next + 1) % LATENCY_SAMPLES;
    if (this.#samples.length < MIN_LATENCY_SAMPLES) return;
    const sorted = [...this.#samples].sort((a, b) => a - b);
    this.#need = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.9) - 1)];
  }

  /** The time a call needs at the vendor, ms; 0 until enough answers were seen. */
  need(): number {
    return this.#need;
  }
}

export function createResilience(adapterId: string, settings: ResilienceSettings, deps: ResilienceDeps): Resilience {
  const breaker: CircuitBreaker = createBreaker(settings.breaker, {
    adapterId,
    now: deps.now,
    onStateChange: (state) => deps.onBreakerStateChange?.(adapterId, state),
  });
  const concurrency = Math.max(1, settings.concurrency);
  const lanes: Lanes = createLanes(concurrency, settings.backgroundSlots ?? Math.max(1, concurrency - 1));
  const callMetrics = deps.countsCalls === false ? undefined : deps.metrics;
  const latency = new RecentLatency();

  const timeoutError = (adapter: Adapter, resource: Resource) => new AppError(
    'UPSTREAM_TIMEOUT', `${adapter.label} did not answer within ${settings.deadlineMs} ms`, { details: { adapter: adapter.id, resource } },
  );

  /**
   * Runs once a concurrency slot is free; the deadline may have fired while it queued. `dueAt`:
   * the deadline on performance.now()'s clock (when the deadline timer fires).
   */
  async function admitted<T>(adapter: Adapter, resource: Resource, fn: (ctx: CallContext) => Promise<T>, signal: AbortSignal, deadlineAt: number, dueAt: number): Promise<T> {
    if (signal.aborted) throw signal.reason;
    if (deps.now() >= deadlineAt) throw timeoutError(adapter, resource);
    const need = latency.need();
    const left = dueAt - performance.now();
    if (left < need) {
      // Our queue ate the deadline: the vendor is not asked, and not blamed.
      callMetrics?.upstream({ adapter: adapter.id, resource, outcome: 'timeout', ms: 0 });
      throw new AppError('UPSTREAM_UNAVAILABLE', `${adapter.label} was not asked: ${Math.max(0, Math.round(left))} ms of the deadline were left after queueing, and its recent answers took ${Math.round(need)} ms`, {
        retryAfterSeconds: 1, details: { adapter: adapter.id, resource },
      });
    }
    let ticket;
    try {
      ticket = breaker.admit();
    } catch (error) {
      deps.metrics?.upstream({ adapter: adapter.id, resource, outcome: 'circuit_open', ms: 0 });
      throw error;
    }
    const started = performance.now();
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      // The deadline travels in the call's context (the HTTP layer waits for budget room only
      // while it fits before deadlineAt); raced in case an adapter ignores its signal.
      const value = await Promise.race([fn({ signal, deadlineAt }), aborted]);
      ticket.success();
      latency.note(performance.now() - started);
      callMetrics?.upstream({ adapter: adapter.id, resource, outcome: 'ok', ms: performance.now() - started });
      return value;
    } catch (error) {
      const ourDeadline = signal.aborted && error === signal.reason;
      if (isAppError(error) && error.status < 500) ticket.success();
      else if (isAppError(error) && error.reason === 'UPSTREAM_UNAVAILABLE') { /* a vendor 429 or a spent budget: no verdict */ }
      else if (ourDeadline && performance.now() - started < latency.need()) { /* less time at the vendor than it needs: our delay, no verdict */ }
      else ticket.failure();
      callMetrics?.upstream({ adapter: adapter.id, resource, outcome: outcomeOf(error), ms: performance.now() - started });
      if (isAppError(error)) throw error;
      throw new AppError('UPSTREAM_ERROR', `${adapter.label} failed`, { cause: error, details: { adapter: adapter.id, resource } });
    } finally {
      signal.removeEventListener('abort', onAbort as () => void);
      ticket.release();
    }
  }

  /**
   * One call due `deadlineMs` after `neededAt`: time queued for a slot counts. `queue`: take a
   * user slot first (a background call already holds its own).
   */
  function timed<T>(adapter: Adapter, resource: Resource, fn: (ctx: CallContext) => Promise<T>, neededAt: number, queue: boolean): Promise<T> {
    const deadlineAt = neededAt + settings.deadlineMs;
    const dueAt = performance.now() + Math.max(0, deadlineAt - deps.now());
    if (deps.now() >= deadlineAt) {
      callMetrics?.upstream({ adapter: adapter.id, resource, outcome: 'timeout', ms: 0 });
      return Promise.reject(timeoutError(adapter, resource));
    }
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = timeoutError(adapter, resource);
        controller.abort(error);
        reject(error);
      }, Math.max(0, deadlineAt - deps.now()));
    });
    const go = () => admitted(adapter, resource, fn, controller.signal, deadlineAt, dueAt);
    const run = queue ? lanes.run('user', go) : go();
    run.catch(() => undefined);
    return Promise.race([run, deadline]).finally(() => clearTimeout(timer));
  }

  return {
    adapterId,
    deadlineMs: settings.deadlineMs,
    call(adapter, resource, fn, neededAt = deps.now(), lane: Lane = 'user') {
      // Fail fast while open, before queueing behind the concurrency cap.
      if (breaker.state() === 'open') {
        try {
          breaker.admit().release();
        } catch (error) {
          deps.metrics?.upstream({ adapter: adapter.id, resource, outcome: 'circuit_open', ms: 0 });
          return Promise.reject(error);
        }
      }
      if (lanes.pendingCount(lane) >= settings.maxQueue) {
        return Promise.reject(new AppError('UPSTREAM_UNAVAILABLE', `too many calls to ${adapter.label} are queued`, {
          retryAfterSeconds: 1, details: { adapter: adapter.id, resource },
        }));
      }
      // Background work is not waited for by anyone: its deadline starts with its slot.
      if (lane === 'background') return lanes.run('background', () => timed(adapter, resource, fn, deps.now(), false));
      return timed(adapter, resource, fn, neededAt, true);
    },
    health: () => ({
      circuit: breaker.state(),
      circuitSince: breaker.troubleSince(),
      inFlight: lanes.activeCount,
      queued: lanes.pendingCount(),
      budgetRemaining: deps.budgetRemaining ? deps.budgetRemaining() : null,
    }),
  };
}
