// Logging: logger options, request ids, and the one line per request (written in onResponse;
// Fastify's own `incoming request`/`request completed` pair is turned off by OneLineLogController,
// which keeps Fastify's error lines).
// Keys never reach a log line (redact.ts); the line names the key id. JSON with ISO timestamps, or
// a coloured one-line form (pino-pretty) on a terminal or with LOG_FORMAT=pretty.
//
// The same onResponse hook counts requests and 429s per key id in /metrics, with a bounded number
// of key-id labels (the first MAX_KEY_LABELS ids seen; the rest are counted as "other").
import { randomUUID } from 'node:crypto';
import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions, type RawRequestDefaultExpression } from 'fastify';
import pinoPretty from 'pino-pretty';
import pino from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Config } from '../../config/schema.ts';
import { redactUrl } from './redact.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export type LogFormat = 'json' | 'pretty';

/** LOG_FORMAT=json|pretty wins; otherwise pretty on a terminal, JSON when piped or collected. */
export function logFormat(env: Record<string, string | undefined> = process.env, isTty = process.stdout.isTTY === true): LogFormat {
  if (env.LOG_FORMAT === 'pretty' || env.LOG_FORMAT === 'json') return env.LOG_FORMAT;
  return isTty ? 'pretty' : 'json';
}

const REQUEST_FIELDS = ['reqId', 'req', 'route', 'status', 'duration_ms', 'key_id', 'cache', 'cache_tier', 'upstream', 'symbols'];

/** The pretty request line: `GET /v1/quotes 200 1.2ms key=demo cache=HIT/memory upstream=sim symbols=3 <reqId>`. */
function prettyMessage(log: Record<string, unknown>, messageKey: string): string {
  const msg = String(log[messageKey] ?? '');
  if (log.status === undefined) return msg;
  const req = (log.req ?? {}) as { method?: string; url?: string };
  const parts = [req.method, log.route ?? req.url, log.status, `${String(log.duration_ms)}ms`];
  if (log.key_id !== undefined) parts.push(`key=${String(log.key_id)}`);
  if (log.cache !== undefined) parts.push(`cache=${String(log.cache)}${log.cache_tier !== undefined ? `/${String(log.cache_tier)}` : ''}`);
  if (log.upstream !== undefined) parts.push(`upstream=${String(log.upstream)}`);
  if (log.symbols !== undefined) parts.push(`symbols=${String(log.symbols)}`);
  parts.push(String(log.reqId ?? ''));
  return parts.join(' ');
}

export interface LoggerExtras {
  format?: LogFormat;
  /** Where JSON lines go (tests capture them); default stdout. */
  stream?: NodeJS.WritableStream;
}

export function loggerOptions(config: Config, extras: LoggerExtras = {}): FastifyServerOptions['logger'] {
  const format = extras.format ?? logFormat();
  const stream = format === 'pretty'
    ? pinoPretty({
      colorize: true,
      destination: extras.stream ?? 1,
      sync: true,
      translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
      ignore: ['pid', 'hostname', ...REQUEST_FIELDS].join(','),
      messageFormat: prettyMessage as never,
    })
    // JSON to stdout through pino's asynchronous destination: one access line per request costs
    // its serialisation, not a blocking write (BENCHMARKS.md, cache hits at info).
    : extras.stream ?? asyncStdout();
  return {
    level: config.log.level,
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
    serializers: {
      req: (req) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
    },
    redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', 'api_key', '*.api_key'], censor: '[redacted]' },
    ...(stream !== undefined ? { stream } : {}),
  } as FastifyServerOptions['logger'];
}

let stdoutDestination: ReturnType<typeof pino.destination> | undefined;

/** One asynchronous stdout destination per process, flushed on exit so no line is lost. */
function asyncStdout(): ReturnType<typeof pino.destination> {
  if (stdoutDestination === undefined) {
    // Lines are gathered up to 4 KiB (or 250 ms) per write: a write per line would cost a thread
    // pool round trip each (~20 µs of CPU per cache hit, measured), gathered it is ~1 µs.
    const destination = pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 } as Parameters<typeof pino.destination>[0]);
    stdoutDestination = destination;
    process.once('exit', () => {
      try {
        destination.flushSync();
      } catch {
        // stdout already gone
      }
    });
  }
  return stdoutDestination;
}

/**
 * Fastify's per-request lines without the two that registerRequestLog replaces: `incoming request`
 * only at debug, no `request completed` and no `Route … not found` (the one line says all of it), but
 * `request errored`, 5xx error logs, stream and serializer errors stay. (Fastify's
 * `disableRequestLogging: true` would drop those too, and is deprecated in Fastify 5.)
 */
export class OneLineLogController extends LogController {
  // At debug only (a no-op call otherwise): when a request hangs, this says it arrived.
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (error) super.requestCompleted(error, request, reply, metadata);
  }

  override routeNotFound(): void {}
}

/** A client's X-Request-Id when it is a sane token, else a new id. */
export function requestId(req: RawRequestDefaultExpression): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** Symbols a request names explicitly: `symbols` (comma list), `symbol`, or a body's `symbols` array. */
export function symbolsCount(request: FastifyRequest): number | undefined {
  const query = request.query as Record<string, unknown> | undefined;
  const listed = query?.symbols;
  if (typeof listed === 'string') return listed === '' ? 0 : listed.split(',').length;
  if (typeof query?.symbol === 'string') return 1;
  const body = request.body as { symbols?: unknown } | undefined;
  if (body !== null && typeof body === 'object' && Array.isArray(body.symbols)) return body.symbols.length;
  return undefined;
}

function header(reply: FastifyReply, name: string): string | undefined {
  const value = reply.getHeader(name);
  return value === undefined ? undefined : String(value);
}

export const MAX_KEY_LABELS = 50;

/** Requests and 429s per key id; key ids past the first `maxLabels` share the label "other". */
export class KeyUsage {
  readonly requests: Counter<'key_id'>;
  readonly rateLimited: Counter<'key_id'>;
  readonly #labels = new Set<string>();
  readonly #max: number;

  constructor(registry: Registry, maxLabels = MAX_KEY_LABELS) {
    this.#max = maxLabels;
    this.requests = new Counter({
      name: 'mdqs_key_requests_total', help: `Requests by API key id (at most ${maxLabels} ids; the rest as "other"; "none" without a valid key).`,
      labelNames: ['key_id'], registers: [registry],
    });
    this.rateLimited = new Counter({
      name: 'mdqs_key_rate_limited_total', help: 'Requests answered 429 by API key id (same labels as mdqs_key_requests_total).',
      labelNames: ['key_id'], registers: [registry],
    });
  }

  label(keyId: string | undefined): string {
    if (keyId === undefined) return 'none';
    if (this.#labels.has(keyId)) return keyId;
    if (this.#labels.size < this.#max) {
      this.#labels.add(keyId);
      return keyId;
    }
    return 'other';
  }

  record(keyId: string | undefined, status: number): void {
    const label = this.label(keyId);
    this.requests.inc({ key_id: label });
    if (status === 429) this.rateLimited.inc({ key_id: label });
  }
}

export interface RequestLogOptions {
  /** The app's metrics registry (metrics.registry); per-key usage is registered on it. */
  registry: Registry;
  maxKeyLabels?: number;
}

/**
 * One info line per request, written when the response is done, and the per-key usage counters.
 * Call once in buildApp, after the access plugin; pass `logController: new OneLineLogController()`
 * to Fastify() so its own request lines are not written as well.
 */
export function registerRequestLog(app: FastifyInstance, options: RequestLogOptions): KeyUsage {
  const usage = new KeyUsage(options.registry, options.maxKeyLabels);
  app.addHook('onResponse', async (request, reply) => {
    const keyId = request.keyEntry?.id;
    usage.record(keyId, reply.statusCode);
    if ((request.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info') === false) return;
    const line: Record<string, unknown> = {
      req: { method: request.method, url: redactUrl(request.url) },
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (keyId !== undefined) line.key_id = keyId;
    const cache = header(reply, 'x-cache');
    if (cache !== undefined) line.cache = cache;
    const tier = header(reply, 'x-cache-tier');
    if (tier !== undefined) line.cache_tier = tier;
    const upstream = header(reply, 'x-upstream');
    if (upstream !== undefined) line.upstream = upstream.split(',').map((s) => s.trim());
    const symbols = symbolsCount(request);
    if (symbols !== undefined) line.symbols = symbols;
    request.log.info(line, 'request completed');
  });
  return usage;
}
