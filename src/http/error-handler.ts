// The one error handler: every error body in the service is shaped here (docs/contract.md#errors):
// {code, message, error, request_id, details?} (+ retry_after_ms on 429), Cache-Control: no-store.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError, type Reason } from '../errors.ts';
import { attemptsOf } from '../upstream/attempts.ts';
import { noteErrorReason, requestId } from './logging.ts';

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

/** The part of JSON Schema the route schemas use for parameters and bodies (TypeBox's output). */
interface ParamSchema {
  type?: string | string[];
  anyOf?: ParamSchema[];
  const?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  description?: string;
  items?: ParamSchema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, ParamSchema>;
}

/** What the parameters' schemas allow, per validation context (a route's `schema` option). */
export type RouteSchemas = Partial<Record<'querystring' | 'body' | 'params' | 'headers', unknown>>;

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The enumerated values a schema allows (an enum, a const, or a union of them), else undefined. */
function enumerated(schema: ParamSchema): unknown[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum;
  if ('const' in schema) return [schema.const];
  if (Array.isArray(schema.anyOf)) {
    const values = schema.anyOf.map(enumerated);
    if (values.every((v) => v !== undefined)) return values.flat();
  }
  return undefined;
}

function numberBounds(schema: ParamSchema, what: string): string {
  const low = schema.minimum ?? (schema.exclusiveMinimum === undefined ? undefined : `${schema.exclusiveMinimum} (exclusive)`);
  const high = schema.maximum ?? (schema.exclusiveMaximum === undefined ? undefined : `${schema.exclusiveMaximum} (exclusive)`);
  if (low !== undefined && high !== undefined) return `${what} from ${low} to ${high}`;
  if (low !== undefined) return `${what} of at least ${low}`;
  if (high !== undefined) return `${what} of at most ${high}`;
  return what;
}

function sizeBounds(min: number | undefined, max: number | undefined, unit: string): string {
  if (min !== undefined && max !== undefined) return min === max ? ` of ${plural(min, unit)}` : ` of ${min} to ${max} ${unit}s`;
  if (min !== undefined) return min === 1 ? ` of at least 1 ${unit}` : ` of at least ${min} ${unit}s`;
  if (max !== undefined) return ` of at most ${plural(max, unit)}`;
  return '';
}

/** "one of CN, HK, US", "an integer from 1 to 10000", "a string matching …": what `schema` allows. */
function describeAllowed(schema: ParamSchema): string | undefined {
  const values = enumerated(schema);
  if (values !== undefined) return values.length === 1 ? String(values[0]) : `one of ${values.map(String).join(', ')}`;
  if (Array.isArray(schema.anyOf)) {
    const parts = schema.anyOf.map(describeAllowed);
    return parts.every((p) => p !== undefined) ? parts.join(', or ') : undefined;
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'integer': return numberBounds(schema, 'an integer');
    case 'number': return numberBounds(schema, 'a number');
    case 'boolean': return 'true or false';
    case 'string': {
      const nonEmpty = schema.minLength === 1 && schema.maxLength === undefined;
      let text = nonEmpty ? 'a non-empty string' : 'a string';
      if (schema.pattern !== undefined) text += ` matching ${schema.pattern}${schema.description === undefined ? '' : ` (${schema.description})`}`;
      else if (schema.format !== undefined) text += ` in ${schema.format} format`;
      return nonEmpty ? text : text + sizeBounds(schema.minLength, schema.maxLength, 'character');
    }
    case 'array': {
      const item = schema.items === undefined ? undefined : describeAllowed(schema.items);
      const of = item === undefined ? '' : ` whose items are each ${item}`;
      const simple = schema.items?.type === 'string' && schema.items.pattern === undefined && enumerated(schema.items) === undefined && schema.items.minLength === undefined;
      return `${simple ? 'an array of strings' : `an array${of}`}${sizeBounds(schema.minItems, schema.maxItems, 'item')}`;
    }
    case 'object': return 'an object';
    default: return undefined;
  }
}

/** Without the schema: what the failed checks themselves say (a union's branches, a bound, a type). */
function allowedFromIssues(issues: ValidationIssue[]): string | undefined {
  const values = issues.flatMap((i) => (i.keyword === 'const' ? [i.params.allowedValue] : i.keyword === 'enum' ? (i.params.allowedValues as unknown[] ?? []) : []));
  if (values.length > 0) return values.length === 1 ? String(values[0]) : `one of ${values.map(String).join(', ')}`;
  const issue = issues[0];
  const limit = issue.params.limit;
  switch (issue.keyword) {
    case 'minimum': case 'exclusiveMinimum': return `${String(issue.params.comparison ?? '>=')} ${String(limit)}`;
    case 'maximum': case 'exclusiveMaximum': return `${String(issue.params.comparison ?? '<=')} ${String(limit)}`;
    case 'minLength': return `a string of at least ${plural(Number(limit), 'character')}`;
    case 'maxLength': return `a string of at most ${plural(Number(limit), 'character')}`;
    case 'minItems': return `an array of at least ${plural(Number(limit), 'item')}`;
    case 'maxItems': return `an array of at most ${plural(Number(limit), 'item')}`;
    case 'pattern': return `a string matching ${String(issue.params.pattern)}`;
    case 'type': return `of type ${String(issue.params.type)}`;
    default: return undefined;
  }
}

/**
 * Map Fastify/AJV validation errors to our reasons by the parameter that failed. The message names
 * what is allowed, from the route's schema for the failed part (`schemas`, the route's `schema`
 * option) when given, else from the failed checks: every value of an enumeration (`details.allowed`
 * lists them too), both bounds of a number, the length, pattern or item type of a string or list.
 */
function validationToAppError(issues: ValidationIssue[], context: string | undefined, schemas?: RouteSchemas): AppError {
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
  const part = (schemas?.[(context ?? 'querystring') as keyof RouteSchemas] ?? undefined) as ParamSchema | undefined;
  const schema = param === '' ? undefined : part?.properties?.[param];
  const label = context === 'body' ? `body field '${param}'` : context === 'headers' ? `header '${param}'` : param;
  if ((param === 'start_time' || param === 'end_time') && context !== 'body') {
    return new AppError(reason, `${param} must be an integer (epoch milliseconds)`, { details: { parameter: param } });
  }
  const sameParam = issues.filter((i) => i.instancePath.split('/').filter(Boolean)[0] === param);
  const allowed = (schema === undefined ? undefined : describeAllowed(schema)) ?? allowedFromIssues(sameParam.length > 0 ? sameParam : issues);
  const message = allowed === undefined ? `${label} ${issue.message ?? 'is invalid'}` : `${label} must be ${allowed}`;
  const values = schema === undefined ? undefined : enumerated(schema);
  return new AppError(reason, message, { details: { parameter: param, ...(values !== undefined && values.length > 1 ? { allowed: values } : {}) } });
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

type FastifyValidationError = FastifyError & { validation?: ValidationIssue[]; validationContext?: string };

/**
 * `schemas`: the route's `schema` option, for messages naming what is allowed. Without it (the
 * caller has no request) a validation message says what the failed checks say; sendError()
 * completes it from the request's route (the AppError keeps the validation error as its cause).
 */
export function toAppError(error: unknown, schemas?: RouteSchemas): AppError {
  if (isAppError(error)) return error;
  const fastifyError = error as FastifyValidationError;
  if (Array.isArray(fastifyError?.validation) && fastifyError.validation.length > 0) {
    const appError = validationToAppError(fastifyError.validation, fastifyError.validationContext, schemas);
    return new AppError(appError.reason, appError.message, { details: appError.details, cause: fastifyError });
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

export function sendError(request: FastifyRequest, reply: FastifyReply, appError: AppError): FastifyReply {
  let error = appError;
  // A schema-validation error: its message names what the route's schema allows.
  const cause = error.cause as FastifyValidationError | undefined;
  const routeSchema = request.routeOptions?.schema as RouteSchemas | undefined;
  if (routeSchema !== undefined && Array.isArray(cause?.validation) && cause.validation.length > 0) error = toAppError(cause, routeSchema);
  const status = error.status;
  // The reason goes on the request's one access line (`error`); a refusal gets no line of its own.
  noteErrorReason(request, error.reason);
  if (status >= 500 && error.reason !== 'SHUTTING_DOWN') {
    // A vendor failing is logged where it fails, one line per adapter and failure class per
    // interval (upstream/failure-log.ts): no line, and no stack trace, per request that it fails.
    if (attemptsOf(error) !== undefined) { /* logged by the failure log */ }
    else if (error.retryable && status !== 500) request.log.warn({ reason: error.reason, details: error.details }, 'upstream failure');
    else request.log.error({ err: error, reason: error.reason }, 'request failed');
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

// ---- malformed HTTP, answered before Fastify sees a request (issue 14.7) ----------------------

/**
 * The request line plus all header lines may take at most this many bytes (node's default, made
 * explicit). Past it node's parser fails with HPE_HEADER_OVERFLOW and the client gets 431
 * HEADERS_TOO_LARGE: a URL longer than about 16 KB, or a few thousand headers, gets that answer.
 */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * node:http options for `Fastify({ http: HTTP_SERVER_OPTIONS })`. node answers a missing Host
 * with an empty 400 of its own, without telling anyone; turning that off lets `requireHost`
 * (an onRequest hook) give the same 400 with our body.
 */
export const HTTP_SERVER_OPTIONS: ServerOptions = { requireHostHeader: false, maxHeaderSize: MAX_HEADER_BYTES };

interface ClientError extends Error {
  code?: string;
}

/** A complete HTTP/1.1 error response with our body, for when there is no FastifyReply. */
export function rawErrorResponse(error: AppError, id: string): string {
  const body = JSON.stringify(errorBody(error, id));
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n`
    + 'Content-Type: application/json; charset=utf-8\r\n'
    + `Content-Length: ${Buffer.byteLength(body)}\r\n`
    + 'Cache-Control: no-store\r\n'
    + 'Connection: close\r\n'
    + `X-Request-Id: ${id}\r\n`
    + `\r\n${body}`;
}

/** The AppError for a node:http parser or socket error (`clientError` event). */
export function clientErrorToAppError(err: ClientError): AppError {
  const code = err.code ?? '';
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new AppError('HEADERS_TOO_LARGE', `the request line and headers must not exceed ${MAX_HEADER_BYTES} bytes`, {
      details: { max_header_bytes: MAX_HEADER_BYTES },
    });
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new AppError('REQUEST_TIMEOUT', 'the request was not received in time');
  // The parser's code (HPE_INVALID_METHOD, HPE_UNEXPECTED_CONTENT_LENGTH, ...) says what was wrong
  // without echoing anything the client sent.
  return new AppError('INVALID_PARAMETER', 'the request is not valid HTTP/1.1', {
    details: code.startsWith('HPE_') ? { parser: code } : undefined,
  });
}

/**
 * Fastify's `clientErrorHandler` server option (Fastify binds it to the instance and listens to
 * node's `clientError`): answers a request node could not parse with our JSON error body and
 * closes the connection. Nothing is written when a response on this socket has already started
 * (a pipelined request behind it): that would corrupt the stream, so the socket is just closed.
 */
export function clientErrorHandler(this: FastifyInstance | undefined, err: ClientError, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || socket.destroyed) {
    socket.destroy();
    return;
  }
  const error = clientErrorToAppError(err);
  this?.log?.info({ reason: error.reason, status: error.status, parser: err.code }, 'malformed request rejected');
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!socket.writable || (inFlight && inFlight.headersSent)) {
    socket.destroy();
    return;
  }
  writeAndClose(socket, rawErrorResponse(error, randomUUID()));
}

/**
 * node's `checkExpectation` listener: any `Expect` other than 100-continue gets 417 with our body
 * (without a listener node sends an empty 417).
 */
function expectationFailedHandler(req: IncomingMessage, res: ServerResponse): void {
  const error = new AppError('EXPECTATION_FAILED', 'only Expect: 100-continue is supported');
  const body = JSON.stringify(errorBody(error, requestId(req)));
  res.shouldKeepAlive = false;
  res.writeHead(error.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    connection: 'close',
  });
  res.end(body);
}

/**
 * node's `connect` listener: without one node closes a CONNECT request's socket with no answer at
 * all. We are not a proxy: 405 with our body, then close.
 */
function connectMethodHandler(req: IncomingMessage, socket: Duplex): void {
  const error = new AppError('METHOD_NOT_ALLOWED', 'CONNECT is not supported');
  writeAndClose(socket, rawErrorResponse(error, requestId(req)));
}

/** end() flushes before closing; the timer bounds a peer that never reads. */
function writeAndClose(socket: Duplex, response: string): void {
  const timer = setTimeout(() => socket.destroy(), 1_000);
  timer.unref();
  socket.end(response, () => {
    clearTimeout(timer);
    socket.destroy();
  });
}

/**
 * onResponse hook for the root scope: a request that arrived through node's `upgrade` event
 * (`Upgrade: websocket`) but was answered as plain HTTP has a socket the HTTP server no longer
 * owns; nothing else ends it, and server.close() waits for it forever. A real WebSocket upgrade
 * hijacks its reply and never gets here. Sync and one property read: cheap on the hot path.
 */
function releaseUpgradeSocket(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  // node sets `upgrade` on requests it emitted through the `upgrade` event (absent from @types/node).
  if ((request.raw as IncomingMessage & { upgrade?: boolean }).upgrade === true) request.raw.socket?.destroy();
  done();
}

/** onRequest hook: an HTTP/1.1 request without Host is a 400 (RFC 9112 3.2), with our body. */
async function requireHost(request: FastifyRequest): Promise<void> {
  const raw = request.raw;
  if (raw.headers.host === undefined && raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1) {
    // The peer does not speak HTTP/1.1 as we do: do not keep its connection.
    throw new AppError('INVALID_PARAMETER', 'the Host header is required', { details: { header: 'host' }, headers: { connection: 'close' } });
  }
}

/**
 * Everything of issue 14.7 that is not a constructor option: the `checkExpectation` and `connect`
 * listeners, the Host check, and the release of upgrade sockets answered as plain HTTP. Call once
 * right after `Fastify({...})`, in the root scope (before other onRequest hooks).
 */
export function installClientErrorHandling(app: FastifyInstance): void {
  app.server.on('checkExpectation', expectationFailedHandler);
  app.server.on('connect', connectMethodHandler);
  app.addHook('onRequest', requireHost);
  app.addHook('onResponse', releaseUpgradeSocket);
}
