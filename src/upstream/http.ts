// The HTTP layer of one vendor: implements `UpstreamHttp` (adapters/types.ts).
//
//   createUpstreamHttp(options: UpstreamHttpOptions): UpstreamClient
//   client.request(req) / client.json(req)   see UpstreamHttp
//   client.breakerState(): 'closed' | 'open' | 'half_open'
//   client.close(): Promise<void>            closes the keep-alive sockets
//
// One call, in order:
//   1. breaker admission: open → UPSTREAM_UNAVAILABLE (retryAfterSeconds until half-open), no I/O;
//   2. outbound budget: spent → UPSTREAM_UNAVAILABLE (retryAfterSeconds until a slot frees), no I/O;
//   3. one deadline for the whole call (req.deadlineMs ?? timeoutMs), merged with req.signal,
//      covering connect, headers, body and any backoff; expiry → UPSTREAM_TIMEOUT;
//   4. at most `retry.maxRetries` (0|1) retry, on network errors and 502/503/504 only, after a
//      jittered backoff of baseDelayMs × [0.5, 1.5), and only if the backoff fits in what is left
//      of the deadline, the circuit did not open meanwhile, and the budget has a slot;
//   5. a vendor 429 is never retried: → UPSTREAM_UNAVAILABLE with the vendor's Retry-After (or 1 s),
//      and the whole budget pauses for that long (capped at RETRY_AFTER_CAP_S), so the following
//      calls fail fast instead of hammering a vendor that asked us to wait;
//   6. other non-2xx not in acceptStatus → UPSTREAM_ERROR { details: { adapter, status } }; the
//      vendor's text is never put in a message;
//   7. json(): an unparseable body → UPSTREAM_BAD_RESPONSE. An accepted non-2xx (e.g. 404) with an
//      empty body gives `body: undefined`.
//
// Breaker verdicts and metrics are per ATTEMPT (a retry is a second upstream request): timeouts,
// network errors, 5xx and unparseable bodies are failures; any other answer (2xx, accepted or not,
// 4xx) is a success; a 429 or the caller's own abort gives no verdict. Each attempt, and each
// fail-fast rejection, reports one event to `metrics.upstream()`.
//
// The global fetch is resolved at call time, so msw (which patches globalThis.fetch) intercepts it;
// the undici 7 Agent goes in as `dispatcher` (Node 24's fetch accepts undici 7 Agents).

import { Agent } from 'undici';
import type { Resource, UpstreamHttp, UpstreamRequest, UpstreamResponse } from '../../adapters/types.ts';
import { AppError } from '../errors.ts';
import { createBreaker, type BreakerOptions, type BreakerState, type BreakerTicket } from './breaker.ts';
import { createBudget } from './budget.ts';

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
  /** Default deadline per call, ms (covers headers, body and a retry). */
  timeoutMs: number;
  /** Upper bound for a per-call `deadlineMs` override; also the Agent's socket timeouts. Default timeoutMs. */
  maxDeadlineMs?: number;
  /** Keep-alive sockets per origin. */
  connections: number;
  /** Keep below the vendor's idle-socket timeout (undici default 4000). */
  keepAliveTimeoutMs?: number;
  retry: { maxRetries: 0 | 1; baseDelayMs: number };
  breaker: BreakerOptions;
  budget: { max: number; windowMs: number };
  now?: () => number;
  fetch?: typeof fetch;
  metrics?: UpstreamMetricsSink;
  random?: () => number;
  /** Called on every circuit transition, e.g. to log it. */
  onBreakerStateChange?: (state: BreakerState) => void;
}

export interface UpstreamClient extends UpstreamHttp {
  breakerState(): BreakerState;
  close(): Promise<void>;
}

/** Longest vendor Retry-After we honour by pausing the budget; a bogus huge value must not stall us for hours. */
export const RETRY_AFTER_CAP_S = 300;

const UNDICI_TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
const RETRYABLE_STATUS = new Set([502, 503, 504]);

type Verdict = 'success' | 'failure' | 'none';

interface Attempt {
  outcome: UpstreamOutcome;
  verdict: Verdict;
  retryable: boolean;
  error?: AppError;
  response?: UpstreamResponse;
  body?: unknown;
}

export function createUpstreamHttp(options: UpstreamHttpOptions): UpstreamClient {
  const adapter = options.adapterId;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const maxDeadlineMs = Math.max(options.timeoutMs, options.maxDeadlineMs ?? options.timeoutMs);
  const breaker = createBreaker(options.breaker, { adapterId: adapter, now, onStateChange: options.onBreakerStateChange });
  const budget = createBudget(options.budget, now);
  const agent = new Agent({
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

  async function call(req: UpstreamRequest, parseJson: boolean): Promise<Attempt> {
    const started = now();
    if (req.signal?.aborted) throw callerAbort(req.signal);

    let ticket: BreakerTicket;
    try {
      ticket = breaker.admit();
    } catch (error) {
      report(req.resource, 'circuit_open', 0);
      throw error;
    }
    try {
      if (!budget.tryTake()) {
        report(req.resource, 'budget_exhausted', 0);
        throw budgetError();
      }
      const deadlineMs = Math.min(req.deadlineMs ?? options.timeoutMs, maxDeadlineMs);
      const deadline = AbortSignal.timeout(deadlineMs);
      const signal = req.signal ? AbortSignal.any([deadline, req.signal]) : deadline;

      for (let retries = 0; ; retries++) {
        const attemptStarted = now();
        const result = await attempt(req, signal, deadline, parseJson);
        report(req.resource, result.outcome, now() - attemptStarted);
        if (result.verdict === 'success') ticket.success();
        else if (result.verdict === 'failure') ticket.failure();
        if (!result.error) return result;

        if (!result.retryable || retries >= options.retry.maxRetries) throw result.error;
        const backoffMs = Math.round(options.retry.baseDelayMs * (0.5 + random()));
        const leftMs = deadlineMs - (now() - started);
        if (leftMs <= backoffMs || breaker.state() === 'open' || !budget.tryTake()) throw result.error;
        try {
          await sleep(backoffMs, signal);
        } catch {
          throw abortError(req, deadline);
        }
      }
    } finally {
      ticket.release();
    }
  }

  async function attempt(
    req: UpstreamRequest, signal: AbortSignal, deadline: AbortSignal, parseJson: boolean,
  ): Promise<Attempt> {
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
        outcome: 'rate_limited', verdict: 'none', retryable: false,
        error: new AppError('UPSTREAM_UNAVAILABLE', 'The upstream data source is rate-limiting this service', {
          details: { adapter, status }, retryAfterSeconds,
        }),
      };
    }
    const accepted = res.ok || (req.acceptStatus?.includes(status) ?? false);
    if (!accepted) {
      discard(res);
      return {
        outcome: 'error', verdict: status >= 500 ? 'failure' : 'success', retryable: RETRYABLE_STATUS.has(status),
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
    const response: UpstreamResponse = { status, headers: res.headers, text };
    if (!parseJson) return { outcome: 'ok', verdict: 'success', retryable: false, response };
    if (text === '' && !res.ok) return { outcome: 'ok', verdict: 'success', retryable: false, response, body: undefined };
    try {
      return { outcome: 'ok', verdict: 'success', retryable: false, response, body: JSON.parse(text) };
    } catch (cause) {
      return {
        outcome: 'bad_response', verdict: 'failure', retryable: false,
        error: new AppError('UPSTREAM_BAD_RESPONSE', 'The upstream data source sent an unreadable response', {
          details: { adapter, status }, cause,
        }),
      };
    }
  }

  function transportFailure(req: UpstreamRequest, signal: AbortSignal, deadline: AbortSignal, cause: unknown): Attempt {
    if (signal.aborted) {
      const error = abortError(req, deadline);
      // The caller giving up says nothing about the vendor's health.
      const ours = deadline.aborted;
      return { outcome: 'timeout', verdict: ours ? 'failure' : 'none', retryable: false, error };
    }
    if (isUndiciTimeout(cause)) {
      return { outcome: 'timeout', verdict: 'failure', retryable: false, error: timeoutError(cause) };
    }
    return {
      outcome: 'error', verdict: 'failure', retryable: true,
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
    async request(req) {
      const result = await call(req, false);
      return result.response as UpstreamResponse;
    },
    async json(req) {
      const result = await call(req, true);
      const response = result.response as UpstreamResponse;
      return { status: response.status, headers: response.headers, body: result.body };
    },
    breakerState: () => breaker.state(),
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
