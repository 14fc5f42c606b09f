// The error responses every /v1 route documents in OpenAPI (docs/contract.md#errors).
import { refs } from '../schemas.ts';

const described = (description: string) => ({ ...refs.Error, description });

export const ERROR_RESPONSES = {
  400: described('Invalid parameter (INVALID_PARAMETER, UNKNOWN_PARAMETER, INVALID_SYMBOL, INVALID_PERIOD, INVALID_ADJUST, INVALID_COUNT, INVALID_TIME_RANGE, TOO_MANY_SYMBOLS, INVALID_UNIVERSE)'),
  401: described('Missing or invalid API key (MISSING_API_KEY, INVALID_API_KEY)'),
  403: described('The plan lacks a market or feature (MARKET_NOT_PERMITTED, NO_<FEATURE>_PERMISSION)'),
  404: described('Unknown symbol (SYMBOL_NOT_FOUND) or route (NOT_FOUND)'),
  429: described('Rate limited (RATE_LIMITED); retry_after_ms and Retry-After say when to retry'),
  502: described('Upstream failed (UPSTREAM_ERROR, UPSTREAM_BAD_RESPONSE)'),
  503: described('Upstream unavailable or shutting down (UPSTREAM_UNAVAILABLE, SHUTTING_DOWN), with Retry-After'),
  504: described('Upstream timed out (UPSTREAM_TIMEOUT)'),
};

/** POST routes also answer 413 (body too large) and 415 (not JSON). */
export const POST_ERROR_RESPONSES = {
  ...ERROR_RESPONSES,
  413: described('The request body is too large (PAYLOAD_TOO_LARGE)'),
  415: described('The request body is not application/json (UNSUPPORTED_MEDIA_TYPE)'),
};

/**
 * What a keyless route without parameters (/v1/meta) can still refuse: a request node's HTTP
 * parser rejects, answered before routing (src/http/error-handler.ts clientErrorHandler).
 */
export const MALFORMED_REQUEST_RESPONSES = {
  400: described('The request is not valid HTTP/1.1 (INVALID_PARAMETER; details.parser names what the parser refused)'),
  431: described('The request line and headers exceed 16 KiB (HEADERS_TOO_LARGE)'),
};
