// The one error handler: every error body in the service is shaped here (DESIGN.md 4.6):
// {code, message, error, request_id, details?} (+ retry_after_ms on 429), Cache-Control: no-store.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError, type Reason } from '../errors.ts';

const PARAM_REASON: Record<string, Reason> = {
  symbol: 'INVALID_SYMBOL',
  symbols: 'INVALID_SYMBOL',
  period: 'INVALID_PERIOD',
  adjust: 'INVALID_ADJUST',
  count: 'INVALID_COUNT',
  universes: 'INVALID_UNIVERSE',
  ids: 'INVALID_UNIVERSE',
};

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Map Fastify/AJV validation errors to our reasons by the parameter that failed. */
export function validationToAppError(issues: ValidationIssue[], context: string | undefined): AppError {
  const issue = issues[0];
  const missing = issue.keyword === 'required' ? String(issue.params.missingProperty ?? '') : '';
  const param = missing || issue.instancePath.split('/').filter(Boolean)[0] || '';
  const where = context === 'body' ? 'body field' : 'parameter';
  if (missing) {
    return new AppError('INVALID_PARAMETER', `${where} '${param}' is required`, { details: { parameter: param } });
  }
  if (issue.keyword === 'type' && context === 'body' && param === '') {
    return new AppError('INVALID_PARAMETER', 'the request body must be a JSON object');
  }
  const reason = PARAM_REASON[param] ?? 'INVALID_PARAMETER';
  let message = `${where} '${param}' ${issue.message ?? 'is invalid'}`;
  if (reason === 'INVALID_PERIOD') message = `period must be one of 1m, 5m, 10m, 15m, 30m, 60m, 1d, 1w, 1M, 1Q, 1Y`;
  else if (reason === 'INVALID_ADJUST') message = 'adjust must be one of none, forward, backward, forward_additive, backward_additive';
  else if (reason === 'INVALID_COUNT') message = 'count must be an integer from 1 to 10000';
  else if (param === 'start_time' || param === 'end_time') message = `${param} must be an integer (epoch milliseconds)`;
  return new AppError(reason, message, { details: { parameter: param } });
}

/** Fastify's own errors (body parsing, media type, size) → our reasons. Never a 500 for input. */
function fastifyToAppError(error: FastifyError): AppError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'the request body must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'the request body is too large');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('INVALID_PARAMETER', 'the request body is empty; send a JSON object');
    case 'FST_ERR_BAD_URL':
      return new AppError('INVALID_PARAMETER', 'the URL is not valid percent-encoding');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('INVALID_PARAMETER', 'the request body is not valid JSON');
    default:
      break;
  }
  if (error instanceof SyntaxError) return new AppError('INVALID_PARAMETER', 'the request body is not valid JSON');
  const status = error.statusCode ?? 500;
  if (status === 404) return new AppError('NOT_FOUND', 'route not found');
  if (status >= 400 && status < 500) return new AppError('INVALID_PARAMETER', 'the request is malformed');
  return undefined;
}

export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  const fastifyError = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (Array.isArray(fastifyError?.validation) && fastifyError.validation.length > 0) {
    return validationToAppError(fastifyError.validation, fastifyError.validationContext);
  }
  return fastifyToAppError(fastifyError) ?? new AppError('INTERNAL_ERROR', 'internal error', { cause: error });
}

export function errorBody(error: AppError, requestId: string, retryAfterMs?: number): Record<string, unknown> {
  const body: Record<string, unknown> = {
    code: error.status,
    message: error.message,
    error: error.reason,
    request_id: requestId,
  };
  if (error.details !== undefined) body.details = error.details;
  if (retryAfterMs !== undefined) body.retry_after_ms = retryAfterMs;
  return body;
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  const status = error.status;
  if (status >= 500 && error.reason !== 'SHUTTING_DOWN') {
    if (error.retryable && status !== 500) request.log.warn({ err: error, reason: error.reason }, 'upstream failure');
    else request.log.error({ err: error, reason: error.reason }, 'request failed');
  } else {
    request.log.info({ reason: error.reason, status }, 'request rejected');
  }
  let retryAfterMs: number | undefined;
  if (error.retryAfterSeconds !== undefined) {
    reply.header('retry-after', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
  }
  if (status === 429) {
    retryAfterMs = Math.max(0, Math.round((error.retryAfterSeconds ?? 1) * 1000));
  }
  if (error.headers) for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify(errorBody(error, String(request.id), retryAfterMs)));
}
