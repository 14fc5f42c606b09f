// Logging: logger options, request ids, and the one line per request (written in onResponse;
// Fastify's own `incoming request`/`request completed` pair is turned off by OneLineLogController,
// which keeps Fastify's error lines).
// Keys never reach a log line (redact.ts); the line names the key id. JSON with ISO timestamps, or
// a coloured one-line form (pino-pretty) on a terminal or with LOG_FORMAT=pretty.
//
// The same onResponse hook counts requests and 429s per key id in /metrics, with a bounded number
// of key-id labels (the first MAX_KEY_LABELS ids seen; the rest are counted as "other").
import { randomUUID } from 'node:crypto';
import { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions, type RawRequestDefaultExpression } from 'fastify';
import { createRequire } from 'node:module';
import pino from 'pino';
import type { Registry } from 'prom-client';
import { SeriesCounter, type CounterSeries } from '../metrics.ts';
import type { Config } from '../../config/schema.ts';
import { redactUrl } from './redact.ts';
import { writeSync } from 'node:fs';
import { hostname } from 'node:os';

// pino-pretty only for a terminal or LOG_FORMAT=pretty: a service's JSON logs never load it.
const load = createRequire(import.meta.url);
const pinoPretty = (options: import('pino-pretty').PrettyOptions) => (load('pino-pretty') as typeof import('pino-pretty').PinoPretty)(options);

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export type LogFormat = 'json' | 'pretty';

/** LOG_FORMAT=json|pretty wins; otherwise pretty on a terminal, JSON when piped or collected. */
export function logFormat(env: Record<string, string | undefined> = process.env, isTty = process.stdout.isTTY === true): LogFormat {
  if (env.LOG_FORMAT === 'pretty' || env.LOG_FORMAT === 'json') return env.LOG_FORMAT;
  return isTty ? 'pretty' : 'json';
}

const REQUEST_FIELDS = ['reqId', 'req', 'route', 'status', 'duration_ms', 'key_id', 'error', 'cache', 'cache_tier', 'upstream', 'symbols'];

/**
 * The pretty request line: `GET /v1/quotes 200 1.2ms key=demo cache=HIT/memory upstream=sim symbols=3 <reqId>`,
 * with `error=<REASON>` on a refusal. Only the access line (it has a duration) is laid out so; any
 * other line keeps its message (and its status, which the request fields' ignore list would hide).
 */
function prettyMessage(log: Record<string, unknown>, messageKey: string): string {
  const msg = String(log[messageKey] ?? '');
  if (log.duration_ms === undefined || typeof log.req !== 'object' || log.req === null) {
    return log.status === undefined ? msg : `${msg} ${String(log.status)}`;
  }
  const req = log.req as { method?: string; url?: string };
  const parts = [req.method, log.route ?? req.url, log.status, `${String(log.duration_ms)}ms`];
  if (log.key_id !== undefined) parts.push(`key=${String(log.key_id)}`);
  if (log.error !== undefined) parts.push(`error=${String(log.error)}`);
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
    timestamp: () => `,"time":"${isoTime(Date.now())}"`,
    serializers: {
      req: (req) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
      err: serializeError,
    },
    redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', 'req.headers.authorization', 'headers.authorization', 'api_key', '*.api_key'], censor: '[redacted]' },
    ...(stream !== undefined ? { stream } : {}),
  } as FastifyServerOptions['logger'];
}

/**
 * Errors in log lines: pino's form (type, message, stack, own fields), except for an error that
 * lists `problems` (a ConfigError: a keys file that does not validate on SIGHUP, a config): that is
 * the operator's input, not a fault of the code, so its first line and the problems, once each,
 * without a stack (the message itself repeats the problems, and the stack repeats the message).
 */
function serializeError(error: unknown): unknown {
  const problems = (error as { problems?: unknown } | null)?.problems;
  if (error instanceof Error && Array.isArray(problems) && problems.every((p) => typeof p === 'string')) {
    return { type: error.name, message: error.message.split('\n')[0], problems };
  }
  return pino.stdSerializers.err(error as Error);
}

let lastMs = -1;
let lastIso = '';

/** `new Date(ms).toISOString()`, memoised for the last millisecond: a busy server logs many lines in one. */
function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/**
 * Writes one access line for a fast-path hit. `memo` stands for (url, route): the escaped part of
 * the line they make is built once per memo object. `reqId` is already checked against REQUEST_ID
 * (or generated) and needs no escaping; `url` is the raw URL, which never holds a key (the fast
 * path never serves such a URL: fast-path.ts record()).
 */
export type HitLogger = (memo: object, url: string, route: string, status: number, reqId: string, durationMs: number, keyId: string, wallMs?: number) => void;

/**
 * The fast path's access line: the JSON pino would write for `logger[level]({...}, 'request
 * completed')` (debug under config log.hits: summary, info under lines) with the default base
 * (pid, hostname), built as one string and handed to the logger's own destination. Through pino the same line costs ~15 µs of a ~20 µs hit (its
 * redaction pass, serialisers and stringify; BENCHMARKS.md), directly ~1 µs; with the escaped URL,
 * route and key id remembered, less. A destination that is not a plain stream (none, or a logger
 * without `streamSym`) gets the line through pino.
 */
export function createHitLogger(logger: FastifyBaseLogger, level: 'info' | 'debug' = 'info'): HitLogger {
  const pinoLogger = logger as unknown as pino.Logger & Record<symbol, unknown>;
  const stream = pinoLogger[pino.symbols.streamSym] as { write?: (chunk: string) => unknown } | undefined;
  const value = pino.levels.values[level];
  const head = `{"level":${value},"time":"`;
  const base = `","pid":${process.pid},"hostname":${JSON.stringify(hostname())},"reqId":"`;
  if (typeof stream?.write !== 'function' || pinoLogger.levels?.values?.[level] !== value) {
    return (_memo, url, route, status, reqId, durationMs, keyId) => {
      if ((logger as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.(level) === false) return;
      logger[level]({
        reqId, req: { method: 'GET', url }, route, status,
        duration_ms: durationMs, key_id: keyId, cache: 'HIT', cache_tier: 'memory', fast_path: true,
      }, 'request completed');
    };
  }
  const lines = typeof (stream as Partial<LineBuffer>).room === 'function' ? stream as LineBuffer : undefined;
  const write = stream.write.bind(stream);
  // The parts that repeat, as strings (any other stream) and as UTF-8 bytes (a LineBuffer).
  const middles = new WeakMap<object, { text: string; bytes: Buffer }>();
  // Key ids are few (the keys file); the bound only guards against a reload loop growing it.
  const tails = new Map<string, { text: string; bytes: Buffer }>();
  const headBytes = Buffer.from(head);
  const baseBytes = Buffer.from(base);
  const durationBytes = Buffer.from(',"duration_ms":');
  return (memo, url, route, status, reqId, durationMs, keyId, wallMs) => {
    if (pinoLogger.levelVal > value) return;
    let middle = middles.get(memo);
    if (middle === undefined) {
      const text = `","req":{"method":"GET","url":${JSON.stringify(url)}},"route":${JSON.stringify(route)},"status":`;
      middle = { text, bytes: Buffer.from(text) };
      middles.set(memo, middle);
    }
    let tail = tails.get(keyId);
    if (tail === undefined) {
      if (tails.size >= 10_000) tails.clear();
      const text = `,"key_id":${JSON.stringify(keyId)},"cache":"HIT","cache_tier":"memory","fast_path":true,"msg":"request completed"}\n`;
      tail = { text, bytes: Buffer.from(text) };
      tails.set(keyId, tail);
    }
    const time = isoTime(wallMs ?? Date.now());
    // In place: the request id and the time are ASCII (REQUEST_ID, toISOString), the numbers are
    // written digit by digit, the rest was encoded once. 24 bytes cover any duration's digits.
    const bytes = lines?.room(headBytes.length + time.length + baseBytes.length + reqId.length + middle.bytes.length + 3 + durationBytes.length + 24 + tail.bytes.length);
    if (bytes === undefined || !(status >= 100 && status <= 999) || !(durationMs >= 0 && durationMs < 1e15)) {
      write(`${head}${time}${base}${reqId}${middle.text}${status}${durationBytes.toString()}${durationMs}${tail.text}`);
      return;
    }
    let at = lines!.used;
    bytes.set(headBytes, at);
    at = ascii(bytes, at + headBytes.length, time);
    bytes.set(baseBytes, at);
    at = ascii(bytes, at + baseBytes.length, reqId);
    bytes.set(middle.bytes, at);
    at = digits(bytes, at + middle.bytes.length, status);
    bytes.set(durationBytes, at);
    at += durationBytes.length;
    // durationMs has one decimal (Math.round(ms * 10) / 10): JSON writes 2.3, 2 and 0.1 so.
    const tenths = Math.round(durationMs * 10);
    at = digits(bytes, at, Math.floor(tenths / 10));
    if (tenths % 10 !== 0) {
      bytes[at++] = 0x2e;
      bytes[at++] = 0x30 + (tenths % 10);
    }
    bytes.set(tail.bytes, at);
    lines!.commit(at + tail.bytes.length);
  };
}

/** Writes an ASCII string's codes from `at`; returns the end. */
function ascii(bytes: Buffer, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) bytes[at + i] = text.charCodeAt(i);
  return at + text.length;
}

/** Writes a non-negative integer's decimal digits from `at`; returns the end. */
function digits(bytes: Buffer, at: number, value: number): number {
  let length = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) length++;
  for (let i = length - 1, rest = value; i >= 0; i--, rest = Math.floor(rest / 10)) bytes[at + i] = 0x30 + (rest % 10);
  return at + length;
}

/** A line sink in front of pino's asynchronous destination (see asyncStdout). */
export interface LineBuffer {
  write(chunk: string): boolean;
  /**
   * For a writer that encodes a line in place (createHitLogger): makes room for `maxBytes` and
   * returns the Buffer to write into from `used`, or undefined when a line that long never fits
   * (write it as a string instead). Call commit() with the new `used` before anything else.
   */
  room(maxBytes: number): Buffer | undefined;
  readonly used: number;
  commit(used: number): void;
  /** Hands what is gathered to the destination. */
  flush(): void;
  /** Writes everything out before returning (at exit). */
  flushSync(): void;
}

/**
 * Gathers lines, as UTF-8 bytes, into chunks of `chunkBytes` before handing them to `destination`
 * (pino's asynchronous destination in buffer mode). Each line is encoded once, straight into a
 * preallocated Buffer, so nothing of it outlives the call: gathering strings instead (`pending +=
 * line`) kept ~50 ropes of ~10 parts alive across young-generation collections and cost the
 * shipped `info` level ~2.5 µs a cache hit (BENCHMARKS.md, fourth session). sonic-boom in its
 * default string mode would also measure and re-encode every chunk. Every line goes through here
 * (pino's and the fast path's), so their order is kept.
 */
export function lineBuffer(
  destination: { write(chunk: Buffer): boolean; flushSync(): void; on?(event: 'write', listener: (bytes: number) => void): unknown },
  writeSync: (chunk: Buffer) => void,
  chunkBytes = 65_536,
  flushMs = 250,
): LineBuffer {
  // Room for a chunk plus the longest ordinary line after it; a longer line is handed over alone.
  const capacity = chunkBytes + 16_384;
  let bytes: Buffer = Buffer.allocUnsafeSlow(capacity);
  let used = 0;
  // A destination that says how many bytes it has written (sonic-boom's 'write' event; it writes in
  // the order it was handed bytes) gives its chunk Buffers back once written: a busy server then
  // fills the same two Buffers, where a new 80 KiB one per chunk made malloc hand out fresh pages
  // (a page fault every few lines; measured in BENCHMARKS.md). Without that event, each chunk is new.
  const handed: Array<{ buffer: Buffer; end: number }> = [];
  const spare: Buffer[] = [];
  let handedBytes = 0;
  let writtenBytes = 0;
  const reuse = typeof destination.on === 'function';
  destination.on?.('write', (n) => {
    writtenBytes += n;
    while (handed.length > 0 && handed[0].end <= writtenBytes) {
      const { buffer } = handed.shift()!;
      if (spare.length < 2) spare.push(buffer);
    }
  });
  const hand = (chunk: Buffer, whole: Buffer | undefined): void => {
    handedBytes += chunk.length;
    if (reuse && whole !== undefined) handed.push({ buffer: whole, end: handedBytes });
    destination.write(chunk);
  };
  const take = (): { chunk: Buffer; whole: Buffer } | undefined => {
    if (used === 0) return undefined;
    const whole = bytes;
    const chunk = bytes.subarray(0, used);
    bytes = spare.pop() ?? Buffer.allocUnsafeSlow(capacity);
    used = 0;
    return { chunk, whole };
  };
  const buffer: LineBuffer = {
    write(line) {
      // UTF-8 takes at most 3 bytes per UTF-16 unit: only a line that might not fit is measured.
      if (line.length * 3 > capacity - used && Buffer.byteLength(line) > capacity - used) {
        buffer.flush();
        if (Buffer.byteLength(line) > capacity) {
          hand(Buffer.from(line), undefined);
          return true;
        }
      }
      used += bytes.write(line, used);
      if (used >= chunkBytes) buffer.flush();
      return true;
    },
    room(maxBytes) {
      if (maxBytes > capacity) return undefined;
      if (maxBytes > capacity - used) buffer.flush();
      return bytes;
    },
    get used() {
      return used;
    },
    commit(next) {
      used = next;
      if (used >= chunkBytes) buffer.flush();
    },
    flush() {
      const taken = take();
      if (taken !== undefined) hand(taken.chunk, taken.whole);
    },
    flushSync() {
      // Not through destination.write: that starts an asynchronous write, which an exiting
      // process never finishes. What the destination holds goes first, then what is gathered here.
      destination.flushSync();
      const taken = take();
      if (taken !== undefined) writeSync(taken.chunk);
    },
  };
  setInterval(() => buffer.flush(), flushMs).unref();
  return buffer;
}

let stdoutDestination: LineBuffer | undefined;

/** One asynchronous stdout destination per process, flushed on exit so no line is lost. */
function asyncStdout(): LineBuffer {
  if (stdoutDestination === undefined) {
    // sonic-boom writes (fs.write on the thread pool) whatever it holds when it is not already
    // writing; lineBuffer hands it 64 KiB at a time, so a busy server makes a write per ~200 lines.
    const sonic = pino.destination({ dest: 1, sync: false, contentMode: 'buffer' }) as unknown as Parameters<typeof lineBuffer>[0];
    const destination = lineBuffer(sonic, (chunk) => writeSync(1, chunk));
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
export type RequestIds = (req: { headers: RawRequestDefaultExpression['headers'] }) => string;

/**
 * The one request-id generator of an app, for the normal path (Fastify's genReqId) and the
 * cache-hit fast path alike: the caller's X-Request-Id when it is a safe token, else this process's
 * random prefix and a counter (cheaper than a UUID per request, unique across a fleet).
 */
export function createRequestIds(): RequestIds {
  const prefix = randomUUID().replaceAll('-', '').slice(0, 12);
  let n = 0;
  return (req) => {
    const incoming = req.headers['x-request-id'];
    return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : `${prefix}-${(++n).toString(36)}`;
  };
}

/** Ids for answers written before any app sees the request (malformed HTTP, CONNECT, Expect). */
export const requestId: RequestIds = createRequestIds();

/** Symbols a request names explicitly: `symbols` (comma list), `symbol`, or a body's `symbols` array. */
function symbolsCount(request: FastifyRequest): number | undefined {
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

/** The reason of an error answer (sendError notes it), written on the request's one access line. */
const errorReasons = new WeakMap<FastifyRequest, string>();

export function noteErrorReason(request: FastifyRequest, reason: string): void {
  errorReasons.set(request, reason);
}

const MAX_KEY_LABELS = 50;

/** Requests and 429s per key id; key ids past the first `maxLabels` share the label "other". */
export class KeyUsage {
  readonly requests: SeriesCounter<'key_id'>;
  readonly rateLimited: SeriesCounter<'key_id'>;
  readonly #labels = new Set<string>();
  readonly #max: number;

  constructor(registry: Registry, maxLabels = MAX_KEY_LABELS) {
    this.#max = maxLabels;
    this.requests = new SeriesCounter('mdqs_key_requests_total', `Requests by API key id (at most ${maxLabels} ids; the rest as "other"; "none" without a valid key).`, ['key_id'], registry);
    this.rateLimited = new SeriesCounter('mdqs_key_rate_limited_total', 'Requests answered 429 by API key id (same labels as mdqs_key_requests_total).', ['key_id'], registry);
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
    this.requests.series(label).value += 1;
    if (status === 429) this.rateLimited.series(label).value += 1;
  }

  /** The requests series of a key id, for a path that counts the same key many times. */
  requestsOf(keyId: string): CounterSeries {
    return this.requests.series(this.label(keyId));
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
    const reason = errorReasons.get(request);
    if (reason !== undefined) line.error = reason;
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
