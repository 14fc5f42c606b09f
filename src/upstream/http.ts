// The HTTP layer of one vendor: implements `UpstreamHttp` (adapters/types.ts).
//
//   createUpstreamHttp(options: UpstreamHttpOptions): UpstreamClient
//   client.request(req)            see UpstreamHttp
//   client.budgetRemaining()       requests the outbound budget still allows in its window
//   client.budgetState()           scope (fleet | local), max, remaining, paused, taken/waits/refused
//   client.close(): Promise<void>  closes the keep-alive sockets (on shutdown)
//
// The deadline and the circuit breaker are the adapter's resilience layer's (resilience.ts): the
// deadline arrives in the request as the adapter got it in its CallContext, req.signal (fires at
// the deadline) and req.deadlineAt (when, epoch ms); this layer owns what only HTTP knows:
//   1. outbound budget (budget.ts; fleet-wide through Redis when `shared` is given, else this
//      process's share): spent → wait for a slot if one frees within the caller's deadline with
//      room left for the vendor's recent latency (the wait never reaches the deadline, so it is
//      never a timeout or a breaker mark); otherwise UPSTREAM_UNAVAILABLE at once, with
//      retryAfterSeconds until a slot frees, no I/O (the loader then serves stale data if it has any);
//   2. the signal (the caller's deadline) bounds connect, headers, body and any backoff; the
//      Agent's own timeouts (timeoutMs) are only a backstop for a caller without a signal;
//   3. at most `retry.maxRetries` (0|1) retry, on network errors and 502/503/504 only, after a
//      jittered backoff of baseDelayMs × [0.5, 1.5), only if the backoff fits in what is left of
//      the deadline and the budget has a slot;
//   4. a vendor 429 is never retried: → UPSTREAM_UNAVAILABLE with the vendor's Retry-After (or 1 s),
//      and the whole budget pauses for that long (capped at RETRY_AFTER_CAP_S), in every process
//      sharing Redis, so the following calls fail fast instead of hammering a vendor that asked us to wait;
//   5. other non-2xx not in acceptStatus → UPSTREAM_ERROR { details: { adapter, status } } (5xx
//      retryable); the vendor's text is never put in a message.
//
// Each attempt, and each fail-fast rejection, reports one event to `metrics.upstream()`.
// The global fetch is resolved at call time, so msw (which patches globalThis.fetch) intercepts it;
// the undici 7 Agent goes in as `dispatcher` (Node 24's fetch accepts undici 7 Agents).

import { createRequire } from 'node:module';
import type { Agent } from 'undici';
import type { Resource, UpstreamHttp, UpstreamRequest, UpstreamResponse } from '../../adapters/types.ts';
import { AppError } from '../errors.ts';
import type { Redis } from 'ioredis';
import { createFleetBudget, type BudgetState } from './budget.ts';
import type { RedisHealth } from '../redis/health.ts';

// undici (~130 ms to load) only when a vendor adapter is created: the embedded sim never needs it.
const load = createRequire(import.meta.url);

export type UpstreamOutcome =
  | 'ok' | 'error' | 'timeout' | 'rate_limited' | 'circuit_open' | 'budget_exhausted' | 'bad_response';

export interface UpstreamOutcomeEvent {
  adapter: string;
  resource: Resource;
  outcome: UpstreamOutcome;
  /** Duration of the attempt (0 for fail-fast rejections), ms by the injected clock. */
  ms: number;
}

export interface UpstreamMetricsSink {
  upstream(event: UpstreamOutcomeEvent): void;
}

/** Budget events per vendor (mdqs_upstream_budget_*: registry.ts budgetMetrics). */
export interface BudgetMetricsSink {
  taken(adapter: string, scope: 'fleet' | 'local'): void;
  waited(adapter: string, seconds: number): void;
  refused(adapter: string, reason: 'deadline' | 'paused'): void;
}

export interface UpstreamHttpOptions {
  adapterId: string;
  /** Deadline per call when the caller passes no signal, ms; also the Agent's socket timeouts. */
  timeoutMs: number;
  /** Upper bound for a per-call `deadlineMs` override. Default timeoutMs. */
  maxDeadlineMs?: number;
  /** Keep-alive sockets per origin. */
  connections: number;
  /** Keep below the vendor's idle-socket timeout (undici default 4000). */
  keepAliveTimeoutMs?: number;
  retry: { maxRetries: 0 | 1; baseDelayMs: number };
  budget: { max: number; windowMs: number };
  /**
   * Redis shared by every process: the budget holds for all of them together. `processes`
   * (redis.instances × server.workers): without Redis or while it is down, each keeps max ÷ processes.
   */
  shared?: { redis?: Redis; health?: RedisHealth; timeoutMs?: number; processes: number };
  budgetMetrics?: BudgetMetricsSink;
  now?: () => number;
  fetch?: typeof fetch;
  metrics?: UpstreamMetricsSink;
  random?: () => number;
}

/** The budget as /readyz shows it: its state and this process's counts since start. */
export interface BudgetDetail extends BudgetState {
  /** Requests this process sent under the budget. */
  taken: number;
  /** Requests that waited for room. */
  waits: number;
  /** Requests refused: no room within their deadline, or the vendor's pause. */
  refused: number;
}

export interface UpstreamClient extends UpstreamHttp {
  budgetRemaining(): number;
  budgetState(): BudgetDetail;
  close(): Promise<void>;
}

/** Longest vendor Retry-After we honour by pausing the budget; a bogus huge value must not stall us for hours. */
const RETRY_AFTER_CAP_S = 300;

const UNDICI_TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
const RETRYABLE_STATUS = new Set([502, 503, 504]);

interface Attempt {
  outcome: UpstreamOutcome;
  retryable: boolean;
  error?: AppError;
  response?: UpstreamResponse;
}

export function createUpstreamHttp(options: UpstreamHttpOptions): UpstreamClient {
  const adapter = options.adapterId;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const maxDeadlineMs = Math.max(options.timeoutMs, options.maxDeadlineMs ?? options.timeoutMs);
  const budget = createFleetBudget({
    ...options.budget, adapterId: adapter, now,
    redis: options.shared?.redis, health: options.shared?.health, timeoutMs: options.shared?.timeoutMs, processes: options.shared?.processes,
  });
  const counts = { taken: 0, waits: 0, refused: 0 };
  // The vendor's recent latency (EWMA of answered attempts): a budget wait must leave room for it.
  let latencyMs = 0;
  const agent: Agent = new (load('undici') as typeof import('undici')).Agent({
    connections: options.connections,
    // Backstops only: the per-call deadline signal is what normally ends a slow call.
    headersTimeout: maxDeadlineMs,
    bodyTimeout: maxDeadlineMs,
    connectTimeout: maxDeadlineMs,
    ...(options.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeout: options.keepAliveTimeoutMs }),
  });

  const report = (resource: Resource, outcome: UpstreamOutcome, ms: number): void => {
    options.metrics?.upstream({ adapter, resource, outcome, ms });
  };

  /**
   * One slot of the budget, waiting for room while a slot frees before `deadlineAt` with the
   * vendor's recent latency still to spare; else UPSTREAM_UNAVAILABLE with Retry-After, at once.
   */
  async function acquire(req: UpstreamRequest, signal: AbortSignal, deadlineAt: number): Promise<void> {
    let waitedFrom: number | undefined;
    for (;;) {
      const decision = await budget.take();
      if (decision.ok) {
        counts.taken += 1;
        options.budgetMetrics?.taken(adapter, decision.scope);
        if (waitedFrom !== undefined) options.budgetMetrics?.waited(adapter, (now() - waitedFrom) / 1000);
        return;
      }
      const reserveMs = Math.max(50, latencyMs);
      if (now() + decision.waitMs + reserveMs > deadlineAt) {
        counts.refused += 1;
        options.budgetMetrics?.refused(adapter, decision.paused ? 'paused' : 'deadline');
        if (waitedFrom !== undefined) options.budgetMetrics?.waited(adapter, (now() - waitedFrom) / 1000);
        report(req.resource, 'budget_exhausted', 0);
        throw budgetError(decision.waitMs, decision.paused);
      }
      if (waitedFrom === undefined) {
        waitedFrom = now();
        counts.waits += 1;
      }
      // A little jitter: waiters woken together do not all hit the budget in the same instant.
      await sleep(decision.waitMs + Math.floor(random() * 20), signal);
    }
  }

  async function call(req: UpstreamRequest): Promise<UpstreamResponse> {
    const started = now();
    if (req.signal?.aborted) throw callerAbort(req.signal);
    const deadlineMs = Math.min(req.deadlineMs ?? options.timeoutMs, maxDeadlineMs);
    const deadline = AbortSignal.timeout(deadlineMs);
    const signal = req.signal ? AbortSignal.any([deadline, req.signal]) : deadline;
    const deadlineAt = Math.min(started + deadlineMs, req.deadlineAt ?? Number.POSITIVE_INFINITY);
    try {
      await acquire(req, signal, deadlineAt);
    } catch (error) {
      if (error instanceof AppError && error.reason === 'UPSTREAM_UNAVAILABLE') throw error;
      throw abortError(req, deadline);
    }

    for (let retries = 0; ; retries++) {
      const attemptStarted = now();
      const result = await attempt(req, signal, deadline);
      const tookMs = now() - attemptStarted;
      report(req.resource, result.outcome, tookMs);
      if (result.outcome === 'ok') latencyMs = latencyMs === 0 ? tookMs : 0.8 * latencyMs + 0.2 * tookMs;
      if (!result.error) return result.response as UpstreamResponse;

      if (!result.retryable || retries >= options.retry.maxRetries) throw result.error;
      const backoffMs = Math.round(options.retry.baseDelayMs * (0.5 + random()));
      const leftMs = deadlineMs - (now() - started);
      if (leftMs <= backoffMs || !(await takeNow())) throw result.error;
      try {
        await sleep(backoffMs, signal);
      } catch {
        throw abortError(req, deadline);
      }
    }
  }

  async function attempt(req: UpstreamRequest, signal: AbortSignal, deadline: AbortSignal): Promise<Attempt> {
    let res: Response;
    try {
      const fetchImpl = options.fetch ?? globalThis.fetch;
      res = await fetchImpl(req.url, {
        method: req.method ?? 'GET',
        headers: req.headers,
        body: req.body,
        signal,
        dispatcher: agent,
      } as RequestInit);
    } catch (cause) {
      return transportFailure(req, signal, deadline, cause);
    }

    const { status } = res;
    if (status === 429) {
      discard(res);
      const retryAfterSeconds = parseRetryAfter(res.headers.get('retry-after'), now());
      await budget.pauseFor(Math.min(retryAfterSeconds, RETRY_AFTER_CAP_S) * 1000);
      return {
        outcome: 'rate_limited', retryable: false,
        error: new AppError('UPSTREAM_UNAVAILABLE', 'The upstream data source is rate-limiting this service', {
          details: { adapter, status }, retryAfterSeconds,
        }),
      };
    }
    const accepted = res.ok || (req.acceptStatus?.includes(status) ?? false);
    if (!accepted) {
      discard(res);
      return {
        outcome: 'error', retryable: RETRYABLE_STATUS.has(status),
        error: new AppError('UPSTREAM_ERROR', 'The upstream data source answered with an error', {
          details: { adapter, status },
        }),
      };
    }

    let text: string;
    try {
      text = await readText(res, signal);
    } catch (cause) {
      return transportFailure(req, signal, deadline, cause);
    }
    return { outcome: 'ok', retryable: false, response: { status, headers: res.headers, text } };
  }

  function transportFailure(req: UpstreamRequest, signal: AbortSignal, deadline: AbortSignal, cause: unknown): Attempt {
    if (signal.aborted) {
      const error = abortError(req, deadline);
      return { outcome: 'timeout', retryable: false, error };
    }
    if (isUndiciTimeout(cause)) {
      return { outcome: 'timeout', retryable: false, error: timeoutError(cause) };
    }
    return {
      outcome: 'error', retryable: true,
      error: new AppError('UPSTREAM_ERROR', 'The upstream data source could not be reached', {
        details: { adapter }, cause,
      }),
    };
  }

  function timeoutError(cause?: unknown): AppError {
    return new AppError('UPSTREAM_TIMEOUT', 'The upstream data source did not answer in time', {
      details: { adapter }, cause,
    });
  }

  function abortError(req: UpstreamRequest, deadline: AbortSignal): AppError {
    if (deadline.aborted || !req.signal?.aborted) return timeoutError();
    return callerAbort(req.signal);
  }

  function callerAbort(signal: AbortSignal): AppError {
    // The service's own deadline (CallContext.signal) may carry an AppError; keep it.
    return signal.reason instanceof AppError ? signal.reason : timeoutError(signal.reason);
  }

  /** A retry's slot: now or never (no wait inside a retry's backoff). */
  async function takeNow(): Promise<boolean> {
    const decision = await budget.take();
    if (!decision.ok) return false;
    counts.taken += 1;
    options.budgetMetrics?.taken(adapter, decision.scope);
    return true;
  }

  function budgetError(waitMs: number, paused: boolean): AppError {
    return new AppError('UPSTREAM_UNAVAILABLE', paused ? 'The upstream data source asked this service to wait' : 'The upstream request budget is spent for now', {
      details: { adapter, budget: paused ? 'paused' : 'exhausted' },
      retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
    });
  }

  return {
    request: call,
    budgetRemaining: () => budget.state().remaining,
    budgetState: () => ({ ...budget.state(), ...counts }),
    close: () => agent.close(),
  };
}

/** Delta-seconds or an HTTP date; missing, unparseable or past → 1. Whole seconds, ≥ 1. */
export function parseRetryAfter(header: string | null, nowMs: number): number {
  if (header === null) return 1;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Math.max(1, Number(value));
  const date = Date.parse(value);
  if (Number.isNaN(date)) return 1;
  return Math.max(1, Math.ceil((date - nowMs) / 1000));
}

function isUndiciTimeout(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === 'string' && UNDICI_TIMEOUT_CODES.has(cause.code);
}

/** Reads the body, but gives up when the signal fires even if the body stream ignores it. */
async function readText(res: Response, signal: AbortSignal): Promise<string> {
  if (signal.aborted) throw signal.reason;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      res.body?.cancel().catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([res.text(), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort as () => void);
  }
}

/** Frees the socket of a response whose body we do not want. */
function discard(res: Response): void {
  res.body?.cancel().catch(() => {});
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
