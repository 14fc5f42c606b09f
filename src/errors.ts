// One error type for the whole service. Every error body is shaped from an AppError by the one
// Fastify error handler (src/app.ts). Branch on `reason`, never on message text.

export const REASONS = {
  INVALID_PARAMETER: 400,
  // A query parameter the route does not take (src/http/strict-query.ts).
  UNKNOWN_PARAMETER: 400,
  INVALID_SYMBOL: 400,
  INVALID_PERIOD: 400,
  INVALID_ADJUST: 400,
  INVALID_COUNT: 400,
  INVALID_TIME_RANGE: 400,
  TOO_MANY_SYMBOLS: 400,
  // bars × symbols over the plan's per-request budget (plans: max_bars).
  REQUEST_TOO_LARGE: 400,
  INVALID_UNIVERSE: 400,
  MISSING_API_KEY: 401,
  INVALID_API_KEY: 401,
  MARKET_NOT_PERMITTED: 403,
  // NO_<FEATURE>_PERMISSION reasons are built from the feature name (see featureReason).
  SYMBOL_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  // WebSocket routes: a plain GET without the upgrade; too many open streams for one key.
  UPGRADE_REQUIRED: 426,
  TOO_MANY_CONNECTIONS: 429,
  // Malformed HTTP answered before routing (src/http/error-handler.ts clientErrorHandler).
  REQUEST_TIMEOUT: 408,
  EXPECTATION_FAILED: 417,
  HEADERS_TOO_LARGE: 431,
  RATE_LIMITED: 429,
  UPSTREAM_ERROR: 502,
  UPSTREAM_BAD_RESPONSE: 502,
  UPSTREAM_UNAVAILABLE: 503,
  SHUTTING_DOWN: 503,
  UPSTREAM_TIMEOUT: 504,
  // Only for bugs: never produced on purpose, kept so the handler has a last resort.
  INTERNAL_ERROR: 500,
} as const;

export type Reason = keyof typeof REASONS | `NO_${string}_PERMISSION`;

export interface AppErrorOptions {
  details?: unknown;
  cause?: unknown;
  retryable?: boolean;
  /** Seconds for `Retry-After` (503/429). */
  retryAfterSeconds?: number;
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly status: number;
  readonly reason: Reason;
  readonly details: unknown;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(reason: Reason, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.reason = reason;
    this.status = statusOf(reason);
    this.details = options.details;
    this.retryable = options.retryable ?? (this.status === 502 || this.status === 503 || this.status === 504);
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers;
  }
}

function statusOf(reason: Reason): number {
  if (reason in REASONS) return REASONS[reason as keyof typeof REASONS];
  if (/^NO_[A-Z_]+_PERMISSION$/.test(reason)) return 403;
  return 500;
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** `klines_minute` → `NO_KLINES_MINUTE_PERMISSION`. */
export function featureReason(feature: string): Reason {
  return `NO_${feature.toUpperCase()}_PERMISSION`;
}

/**
 * The service refuses to start with this configuration (told apart by `kind`, never by message
 * text): `routing` (sim after a real vendor, a capability gap under routing.strict, an adapter
 * without a declared resource's method), `store` (the history store cannot be opened or is of a
 * newer schema).
 */
export class BootError extends Error {
  readonly kind: 'routing' | 'store';

  constructor(kind: 'routing' | 'store', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BootError';
    this.kind = kind;
  }
}

/** The routing is refused at boot (a BootError of kind `routing`). */
export class RoutingError extends BootError {
  constructor(message: string) {
    super('routing', message);
    this.name = 'RoutingError';
  }
}
