// What each adapter of a chain did when the whole chain failed (issue 43.5): the answer carries
// every adapter tried, in order, with the class of its failure, in `details.attempts`; the answer's
// own reason, message and Retry-After stay the last adapter's (as before), and so does
// `details.adapter`.
//
//   attemptOf(adapter, error): Attempt          one failed logical call, classified
//   chainFailure(attempts, last): AppError      the answer when every adapter of the chain failed
//   failureClass(error): { cause, status?, code?, host? }   the class alone (also for the logs)
//
// The class is read from our reasons and details, and from the error codes of the transport (the
// cause chain of a failed fetch), never from message text. Messages are ours: a vendor's text never
// reaches a client (docs/contract.md#errors).
import { AppError, isAppError } from '../errors.ts';

/**
 * Why one adapter's call failed:
 *   dns            the vendor's host name did not resolve (ENOTFOUND, EAI_AGAIN)
 *   connect        no connection: refused, reset, unreachable, TLS failure
 *   timeout        no answer within the deadline
 *   http_status    the vendor answered a non-2xx status other than 429
 *   rate_limited   the vendor asked us to slow down (429, or its rate-limit notice)
 *   vendor_error   an error verdict inside a 2xx answer
 *   bad_response   an answer that could not be read (wrong shape, no usable rows)
 *   circuit_open   not asked: the adapter's circuit is open after repeated failures
 *   budget         not asked: the vendor's outbound request budget is spent or paused
 *   queue          not asked: too many calls queued, or too little of the deadline left
 *   error          anything else (an unexpected failure of the adapter)
 */
export const ATTEMPT_CAUSES = [
  'dns', 'connect', 'timeout', 'http_status', 'rate_limited', 'vendor_error', 'bad_response', 'circuit_open', 'budget', 'queue', 'error',
] as const;

export type AttemptCause = (typeof ATTEMPT_CAUSES)[number];

export interface Attempt {
  /** The adapter id of the chain. */
  adapter: string;
  cause: AttemptCause;
  /** The vendor's HTTP status, for http_status and rate_limited (when it sent one). */
  status?: number;
  message: string;
}

export interface FailureClass {
  cause: AttemptCause;
  status?: number;
  /** The transport's error code (ENOTFOUND, ECONNREFUSED, …) for dns and connect. */
  code?: string;
  /** The host that did not resolve (dns): for the logs only, never in an answer. */
  host?: string;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);
const CONNECT_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EHOSTDOWN', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED',
  'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID', 'EPROTO',
]);
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

type Coded = { code?: unknown; hostname?: unknown; cause?: unknown; errors?: unknown };

/** The first transport error code in the cause chain (AggregateErrors included), with its host. */
function transportCode(error: unknown): { code: string; host?: string } | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.size < 16) {
    const next = queue.shift();
    if (next === null || typeof next !== 'object' || seen.has(next)) continue;
    seen.add(next);
    const coded = next as Coded;
    if (typeof coded.code === 'string' && (DNS_CODES.has(coded.code) || CONNECT_CODES.has(coded.code) || TIMEOUT_CODES.has(coded.code))) {
      return { code: coded.code, ...(typeof coded.hostname === 'string' ? { host: coded.hostname } : {}) };
    }
    if (coded.cause !== undefined) queue.push(coded.cause);
    if (Array.isArray(coded.errors)) queue.push(...coded.errors);
  }
  return undefined;
}

function detailsOf(error: AppError): Record<string, unknown> {
  return error.details !== null && typeof error.details === 'object' && !Array.isArray(error.details) ? error.details as Record<string, unknown> : {};
}

/** The class of one failed call. */
export function failureClass(error: unknown): FailureClass {
  const transport = transportCode(error);
  if (transport !== undefined) {
    if (DNS_CODES.has(transport.code)) return { cause: 'dns', ...transport };
    if (TIMEOUT_CODES.has(transport.code)) return { cause: 'timeout', code: transport.code };
    if (!isAppError(error) || error.reason === 'UPSTREAM_ERROR') return { cause: 'connect', code: transport.code };
  }
  if (!isAppError(error)) return { cause: 'error' };
  const details = detailsOf(error);
  const status = typeof details.status === 'number' ? details.status : undefined;
  switch (error.reason) {
    case 'UPSTREAM_TIMEOUT': return { cause: 'timeout' };
    case 'UPSTREAM_BAD_RESPONSE': return { cause: 'bad_response' };
    case 'UPSTREAM_UNAVAILABLE':
      if (details.circuit !== undefined) return { cause: 'circuit_open' };
      if (details.budget !== undefined) return { cause: 'budget' };
      if (status !== undefined) return { cause: 'rate_limited', status };
      return { cause: 'queue' };
    case 'UPSTREAM_ERROR':
      if (status !== undefined && (status < 200 || status >= 300)) return { cause: 'http_status', status };
      // A 2xx (or no HTTP at all) that still says "error": rc ≠ 0, an error code in the body.
      if (status !== undefined || details.rc !== undefined || details.code !== undefined || details.vendor_code !== undefined) return { cause: 'vendor_error' };
      return { cause: 'error' };
    default:
      return { cause: 'error' };
  }
}

/** The client's words for a class (our own: a vendor's text never reaches a client). */
function messageOf(cls: FailureClass, error: unknown): string {
  switch (cls.cause) {
    case 'dns': return `the vendor's host name did not resolve (${cls.code})`;
    case 'connect': return `no connection to the vendor (${cls.code})`;
    case 'http_status': return `the vendor answered HTTP ${cls.status}`;
    case 'rate_limited': return cls.status === 429 ? 'the vendor answered HTTP 429: it is rate-limiting this service' : 'the vendor is rate-limiting this service';
    default:
      return isAppError(error) ? error.message : 'the adapter failed unexpectedly';
  }
}

/** One failed logical call of `adapter` (its id in the chain), classified. */
export function attemptOf(adapter: string, error: unknown): Attempt {
  const cls = failureClass(error);
  return { adapter, cause: cls.cause, ...(cls.status === undefined ? {} : { status: cls.status }), message: messageOf(cls, error) };
}

/** An adapter's failure as the AppError the client gets (an unexpected exception: UPSTREAM_ERROR). */
export function asUpstreamError(error: unknown): AppError {
  return isAppError(error) ? error : new AppError('UPSTREAM_ERROR', 'the upstream vendor failed', { cause: error });
}

/**
 * The answer when every adapter of a chain failed: the last failure (its reason, message,
 * Retry-After and details, `details.adapter` included) with `details.attempts`, every adapter
 * tried in chain order.
 */
export function chainFailure(attempts: readonly Attempt[], last: unknown): AppError {
  const error = asUpstreamError(last);
  if (attempts.length === 0) return error;
  const details = detailsOf(error);
  return new AppError(error.reason, error.message, {
    details: { ...details, adapter: details.adapter ?? attempts.at(-1)!.adapter, attempts },
    cause: error.cause ?? error,
    retryable: error.retryable,
    retryAfterSeconds: error.retryAfterSeconds,
    headers: error.headers,
  });
}

/** The attempts an answer carries, if it is a chain failure. */
export function attemptsOf(error: unknown): Attempt[] | undefined {
  if (!isAppError(error)) return undefined;
  const attempts = detailsOf(error).attempts;
  return Array.isArray(attempts) ? attempts as Attempt[] : undefined;
}
