// TickFlow error envelope → our reasons (docs/vendors.md#tickflow-errors). TickFlow answers
// `{code: 'UPPER_SNAKE', message, details?}` with the HTTP status carrying the class, sometimes a
// plain-text 4xx, and sometimes a rate-limit notice inside a 200. None of its codes reach our
// clients: a vendor 401/403 means OUR credentials or plan are wrong, which is our upstream
// failure (502), not the client's.

import type { UpstreamResponse } from '../types.ts';
import { AppError, type Reason } from '../../src/errors.ts';
import { isRecord, type PayloadReader } from '../common/validate.ts';

export const ADAPTER_ID = 'tickflow';

/** A vendor answer that means "unknown symbol / universe": the caller returns undefined or omits it. */
export const NOT_FOUND = Symbol('tickflow.not_found');
type Verdict = Reason | typeof NOT_FOUND;

/** Vendor code → our verdict; consulted before the status table. */
const CODE_TABLE: Record<string, Verdict> = {
  SYMBOL_NOT_FOUND: NOT_FOUND,
  // [verify] chose: the universe-miss code is not documented; treat the likely names as a miss.
  UNIVERSE_NOT_FOUND: NOT_FOUND,
  NOT_FOUND: NOT_FOUND,
  RATE_LIMITED: 'UPSTREAM_UNAVAILABLE',
  RATE_LIMIT_EXCEEDED: 'UPSTREAM_UNAVAILABLE',
};

const STATUS_TABLE: Record<number, Reason> = {
  400: 'UPSTREAM_ERROR', // we sent something it refuses: our bug, not the client's
  401: 'UPSTREAM_ERROR', // our key is wrong or missing
  403: 'UPSTREAM_ERROR', // our plan lacks the feature (NO_*_PERMISSION, FREE_TIER_RESTRICTED)
  404: 'UPSTREAM_ERROR',
  429: 'UPSTREAM_UNAVAILABLE',
};

const RATE_LIMIT_TEXT = '请求频率超限';
const RETRY_HINT = /请\s*(\d+)\s*ms\s*后重试/;

/** Seconds to wait from a "请 N ms 后重试" hint, rounded up; undefined when there is none. */
export function retryHintSeconds(message: string): number | undefined {
  const m = RETRY_HINT.exec(message);
  return m ? Math.max(1, Math.ceil(Number(m[1]) / 1000)) : undefined;
}

function rateLimited(message: string, headers: Headers, status: number): AppError {
  const header = Number(headers.get('retry-after'));
  const retryAfterSeconds = retryHintSeconds(message) ?? (Number.isFinite(header) && header > 0 ? Math.ceil(header) : 1);
  return new AppError('UPSTREAM_UNAVAILABLE', 'The upstream data source is rate-limiting this service', {
    details: { adapter: ADAPTER_ID, status }, retryAfterSeconds,
  });
}

/**
 * The `data` of a TickFlow answer, or NOT_FOUND. Throws AppError for every error form:
 * `notFoundOn404` treats any 404 as a miss (the universe route has no symbol to be unknown).
 */
export function readTickflow(
  res: UpstreamResponse, reader: PayloadReader, options: { notFoundOn404?: boolean } = {},
): unknown {
  const ok = res.status >= 200 && res.status < 300;
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    // Plain-text 4xx (axum query rejections): classify by status alone.
    if (ok) reader.fail('body');
    body = undefined;
  }
  const message = isRecord(body) && typeof body.message === 'string' ? body.message : typeof body === 'string' ? body : res.text;
  if (message.includes(RATE_LIMIT_TEXT) || RETRY_HINT.test(message)) {
    if (!(ok && isRecord(body) && 'data' in body)) throw rateLimited(message, res.headers, res.status);
  }
  if (ok && isRecord(body) && 'data' in body) return body.data;
  const code = isRecord(body) && typeof body.code === 'string' ? body.code : undefined;
  // A 2xx without `data` is an error only when it carries an error code; otherwise it is garbage.
  if (ok && code === undefined) reader.fail('data');
  const error = mapError(res, code, options);
  if (error === NOT_FOUND) return NOT_FOUND;
  throw error;
}

function mapError(res: UpstreamResponse, code: string | undefined, options: { notFoundOn404?: boolean }): AppError | typeof NOT_FOUND {
  const byCode = code !== undefined && Object.hasOwn(CODE_TABLE, code) ? CODE_TABLE[code] : undefined;
  const verdict: Verdict = (res.status === 404 && options.notFoundOn404) ? NOT_FOUND : byCode ?? STATUS_TABLE[res.status] ?? 'UPSTREAM_ERROR';
  if (verdict === NOT_FOUND) return NOT_FOUND;
  if (verdict === 'UPSTREAM_UNAVAILABLE') return rateLimited('', res.headers, res.status);
  const credentials = res.status === 401 || res.status === 403;
  return new AppError(verdict, credentials
    ? 'The upstream data source refused this service\'s credentials or plan'
    : 'The upstream data source answered with an error', {
    details: { adapter: ADAPTER_ID, status: res.status, vendor_code: code },
    // Retrying cannot fix our key or plan; the router still moves on to the next adapter.
    retryable: !credentials,
  });
}
