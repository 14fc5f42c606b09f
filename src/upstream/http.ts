// The HTTP layer of one vendor: implements `UpstreamHttp` (adapters/types.ts).
//
//   createUpstreamHttp(options: UpstreamHttpOptions): UpstreamClient
//   client.request(req)            see UpstreamHttp
//   client.budgetRemaining()       requests the outbound budget still allows in its window
//   client.close(): Promise<void>  closes the keep-alive sockets (on shutdown)
//
// The deadline and the circuit breaker are the adapter's resilience layer's (resilience.ts): the
// deadline arrives as req.signal; this layer owns what only HTTP knows:
//   1. outbound budget: spent → UPSTREAM_UNAVAILABLE (retryAfterSeconds until a slot frees), no I/O;
//   2. the signal (the caller's deadline) bounds connect, headers, body and any backoff; the
//      Agent's own timeouts (timeoutMs) are only a backstop for a caller without a signal;
//   3. at most `retry.maxRetries` (0|1) retry, on network errors and 502/503/504 only, after a
//      jittered backoff of baseDelayMs × [0.5, 1.5), only if the backoff fits in what is left of
//      the deadline and the budget has a slot;
//   4. a vendor 429 is never retried: → UPSTREAM_UNAVAILABLE with the vendor's Retry-After (or 1 s),
//      and the whole budget pauses for that long (capped at RETRY_AFTER_CAP_S), so the following
//      calls fail fast instead of hammering a vendor that asked us to wait;
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
import { createBudget } from './budget.ts';

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
  now?: () => number;
  fetch?: typeof fetch;
  metrics?: UpstreamMetricsSink;
  random?: () => number;
}

export interface UpstreamClient extends UpstreamHttp {
  budgetRemaining(): number;
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
  const budget = createBudget(options.budget, now);
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

  async function call(req: UpstreamRequest): Promise<UpstreamResponse> {
    const started = now();
    if (req.signal?.aborted) throw callerAbort(req.signal);
    if (!budget.tryTake()) {
      report(req.resource, 'budget_exhausted', 0);
      throw budgetError();
    }
    const deadlineMs = Math.min(req.deadlineMs ?? options.timeoutMs, maxDeadlineMs);
    const deadline = AbortSignal.timeout(deadlineMs);
    const signal = req.signal ? AbortSignal.any([deadline, req.signal]) : deadline;

    for (let retries = 0; ; retries++) {
      const attemptStarted = now();
      const result = await attempt(req, signal, deadline);
      report(req.resource, result.outcome, now() - attemptStarted);
      if (!result.error) return result.response as UpstreamResponse;

      if (!result.retryable || retries >= options.retry.maxRetries) throw result.error;
      const backoffMs = Math.round(options.retry.baseDelayMs * (0.5 + random()));
      const leftMs = deadlineMs - (now() - started);
      if (leftMs <= backoffMs || !budget.tryTake()) throw result.error;
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
      budget.pauseFor(Math.min(retryAfterSeconds, RETRY_AFTER_CAP_S) * 1000);
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

  function budgetError(): AppError {
    return new AppError('UPSTREAM_UNAVAILABLE', 'The upstream request budget is spent for now', {
      details: { adapter, budget: 'exhausted' },
      retryAfterSeconds: budget.retryAfterSeconds(),
    });
  }

  return {
    request: call,
    budgetRemaining: () => budget.remaining(),
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
