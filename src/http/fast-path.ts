// The cache-hit fast path (issue 15): a request whose exact URL was answered from the response
// cache before, whose key (X-API-Key header) is valid, whose plan permits what that answer needed,
// whose rate limit admits it and whose cached bytes are still fresh is answered here, before
// Fastify routes it, with one synchronous lookup and one write: no promise, no hook, no
// serialisation, and a header block prebuilt per cached entry (sendPrebuilt). Everything else (any
// check failing, any doubt) goes to the normal path, which produces the same answer or the
// documented error: the fast path never answers an error itself.
//
// What it keeps from the normal path: authentication (same KeyStore lookup), authorisation (the
// needs the route recorded with requireAccess, and the bars budget), the rate limit (the same
// limiter, synchronously), the same headers (X-Request-Id, X-Upstream, X-Simulated,
// X-Missing-Symbols, X-Cache: HIT, X-Cache-Tier, Age, ETag, Vary, X-RateLimit-*), 304 on
// If-None-Match, the gzip variant, and the request metrics.
//
// Table routes negotiate their format (issue 26): the index holds one entry per URL, and a table
// route's entry holds a route per format answered; a hit negotiates the request's format exactly
// as the normal path does (the URL's `format` parameter, else Accept) and takes that format's
// route, so a CSV request is never answered with JSON bytes cached for the same URL, nor the
// reverse. One index lookup per request either way (issue 30).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import { bearerKey, type AccessNeeds } from '../access/guard.ts';
import type { KeyEntry, KeyStore } from '../access/keys.ts';
import type { LimitDecision } from '../access/rate-limit.ts';
import type { ByteCache } from '../cache/byte-cache.ts';
import { marketOf } from '../markets/symbols.ts';
import { acceptsGzip, etagMatches, gzips, type CachedResponse } from './response-cache.ts';
import { MEDIA_TYPE, formatFromAccept, formatOfKey, formatParam, type Format } from './formats/negotiate.ts';

/** What the normal path learned about a cacheable URL (recorded when its answer was stored). */
export interface FastRoute {
  /** The response-cache key. */
  key: string;
  /** Route pattern, for metrics and logs. */
  route: string;
  needs: AccessNeeds;
  /** Base bars the request needs (0 when not a candle request). */
  bars: number;
}

export interface FastPathOptions {
  keys: KeyStore;
  cache: ByteCache<CachedResponse>;
  /** Bodies above this have a gzip variant (built by the normal path on first demand). */
  gzipMinBytes: number;
  now: () => number;
  /** A synchronous rate-limit decision; undefined sends the request the normal way. */
  limit(entry: KeyEntry, address: string | undefined, now: number): LimitDecision | undefined;
  isClosing(): boolean;
  requestId(req: IncomingMessage): string;
  /**
   * Told after each answer; `startedAt` is performance.now() when the hit was taken, `wallMs` the
   * wall clock (Date.now()) read once for the hit's Date header.
   */
  onServed(route: FastRoute, status: 200 | 304, entry: KeyEntry, startedAt: number, req: IncomingMessage, requestId: string, wallMs: number): void;
  /** The client address as the normal path sees it (trustProxy honoured). */
  address(req: IncomingMessage): string | undefined;
  /** Bound of the URL index, bytes (default: an eighth of the response cache's bound, ≥ 1 MiB). */
  indexMaxBytes?: number;
}

export interface FastPath {
  record(url: string, route: FastRoute): void;
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Hits served by the fast path. */
  readonly served: number;
  /** The URL index: entries, bytes charged, byte bound. */
  readonly index: { entries: number; bytes: number; maxBytes: number };
}

/** The plan grants every feature and market the recorded answer needed. */
function permits(entry: KeyEntry, route: FastRoute): boolean {
  const plan = entry.plan;
  const needs = route.needs;
  if (needs.explicitCount !== undefined && needs.explicitCount > plan.maxSymbols) return false;
  for (const feature of needs.features) if (!plan.features.has(feature)) return false;
  for (const region of needs.regions ?? []) if (!plan.markets.has(region)) return false;
  for (const ref of needs.symbols ?? []) if (!plan.markets.has(marketOf(ref))) return false;
  return route.bars <= plan.maxBars;
}

/**
 * What never changes in a cached entry's answer, built once per entry: its header pairs (for
 * writeHead) and the same headers as one block of wire text (for the prebuilt header block below).
 * `block` is undefined when a value holds a character node:http would refuse: such an entry is
 * always sent through writeHead, which validates it.
 */
interface Fixed {
  plain: string[];
  gzip: string[] | undefined;
  plainBlock: string | undefined;
  gzipBlock: string | undefined;
  gzipEtag: string;
}
const FIXED = new WeakMap<CachedResponse, Fixed>();
/** What node:http accepts in a header value (its checkInvalidHeaderChar, inverted). */
const VALID_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

function toBlock(pairs: string[]): string | undefined {
  let block = '';
  for (let i = 0; i < pairs.length; i += 2) {
    if (!VALID_VALUE.test(pairs[i + 1])) return undefined;
    block += `${pairs[i]}: ${pairs[i + 1]}\r\n`;
  }
  return block;
}

function fixedHeaders(entry: CachedResponse): Fixed {
  let fixed = FIXED.get(entry);
  if (fixed !== undefined && (fixed.gzip !== undefined || entry.gzip === undefined)) return fixed;
  const common = ['content-type', MEDIA_TYPE[entry.format], 'x-upstream', entry.headers.upstream, 'x-cache', 'HIT', 'x-cache-tier', 'memory', 'vary', entry.vary];
  if (entry.headers.simulated) common.push('x-simulated', 'true');
  if (entry.headers.missing !== undefined) common.push('x-missing-symbols', entry.headers.missing);
  if (entry.headers.nextEndTime !== undefined) common.push('x-next-end-time', entry.headers.nextEndTime);
  if (entry.headers.link !== undefined) common.push('link', entry.headers.link);
  if (entry.headers.truncated !== undefined) common.push('x-truncated-symbols', entry.headers.truncated);
  if (entry.headers.limitedBy !== undefined) common.push('x-limited-by', entry.headers.limitedBy);
  const gzipEtag = `${entry.etag.slice(0, -1)}-gz"`;
  const plain = [...common, 'etag', entry.etag, 'content-length', String(entry.body.length)];
  const gzip = entry.gzip === undefined ? undefined : [...common, 'etag', gzipEtag, 'content-encoding', 'gzip', 'content-length', String(entry.gzip.length)];
  fixed = { plain, gzip, plainBlock: toBlock(plain), gzipBlock: gzip === undefined ? undefined : toBlock(gzip), gzipEtag };
  FIXED.set(entry, fixed);
  return fixed;
}

/**
 * The fields of node:http's ServerResponse (OutgoingMessage) that writeHead's header
 * serialisation sets and end() reads. The prebuilt block is used only when they have the shape
 * Node 24 gives them (checked on every use); anything else goes through writeHead.
 */
interface RawResponse {
  _header: string | null;
  _headerSent: boolean;
  _hasBody: boolean;
  _last: boolean;
  _keepAliveTimeout: unknown;
  _defaultKeepAlive: unknown;
  shouldKeepAlive: boolean;
  maxRequestsOnConnectionReached: unknown;
  sendDate: boolean;
  chunkedEncoding: boolean;
  useChunkedEncodingByDefault: boolean;
  _expect_continue: unknown;
  _maxRequestsPerSocket: unknown;
  _sent100: unknown;
  statusCode: number;
  statusMessage: string;
}

/** node:http's Date header, one string per second as node:http keeps it. */
let dateSecond = -1;
let dateLine = '';
function currentDateLine(ms: number): string {
  const second = ms - (ms % 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateLine = `Date: ${new Date(second).toUTCString()}\r\n`;
  }
  return dateLine;
}

/**
 * Sends `status` with headers `block` + `varying` (wire text) the way writeHead would have, minus
 * its per-header validation and matching (the block was checked when it was built, and the varying
 * values are digits and a checked request id): node:http's Date, Connection and Keep-Alive lines
 * are added exactly as its _storeHeader adds them for a keep-alive response. Returns false, having
 * written nothing, when the response is not in the state that covers (not keep-alive, or the
 * fields are not what Node 24 has); the caller then uses writeHead.
 */
function sendPrebuilt(res: ServerResponse, status: 200 | 304, block: string, varying: string, body: Buffer | undefined, wall: number): boolean {
  const raw = res as unknown as RawResponse;
  if (raw._header !== null || raw._headerSent !== false || raw.shouldKeepAlive !== true || raw.maxRequestsOnConnectionReached === true
    || raw.sendDate !== true || raw.chunkedEncoding !== false || raw.useChunkedEncodingByDefault !== true
    || (raw._expect_continue === true && raw._sent100 !== true) || Number(raw._maxRequestsPerSocket ?? 0) > 0 || raw._defaultKeepAlive !== true || typeof raw._keepAliveTimeout !== 'number') return false;
  const keepAlive = raw._keepAliveTimeout > 0 ? `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(raw._keepAliveTimeout / 1000)}\r\n` : 'Connection: keep-alive\r\n';
  raw.statusCode = status;
  raw.statusMessage = status === 200 ? 'OK' : 'Not Modified';
  if (status === 304) raw._hasBody = false;
  const head = `${status === 200 ? 'HTTP/1.1 200 OK' : 'HTTP/1.1 304 Not Modified'}\r\n${block}${varying}${currentDateLine(wall)}${keepAlive}\r\n`;
  raw._header = head;
  if (body === undefined) res.end();
  else if (body.length <= JOINED_MAX_BYTES) {
    // Header and body as one buffer: one plain socket write instead of node:http's writev of a
    // header string (encoded again in C++) and the body. Every header character is latin1 (checked
    // when the block was built; the varying values are digits and a checked id), so its length is
    // its byte count. Marked sent, so end() writes the joined bytes as they are.
    const joined = Buffer.allocUnsafe(head.length + body.length);
    joined.write(head, 0, 'latin1');
    body.copy(joined, head.length);
    raw._headerSent = true;
    res.end(joined);
  } else res.end(body);
  return true;
}

/**
 * Bodies up to this are sent joined to their header: a quote or a small batch is, a candle series
 * (the 1000-bar answer is 72 KB) keeps node:http's two chunks rather than being copied per hit. A
 * chosen bound; the crossover was not measured (BENCHMARKS.md, issue 30, fourteenth session).
 */
const JOINED_MAX_BYTES = 16_384;

/** The per-request headers as writeHead pairs (the path taken when the prebuilt block is not). */
function varyingPairs(requestId: string, age: number, decision: LimitDecision, reset: number): string[] {
  return ['x-request-id', requestId, 'age', String(age), 'x-ratelimit-limit', String(decision.limit), 'x-ratelimit-remaining', String(decision.remaining), 'x-ratelimit-reset', String(reset)];
}

/** What an index entry weighs: the URL (key and copy in the entry's map slot) and the route's strings, two bytes a char, and its objects. */
function indexEntryBytes(route: FastRoute, url: string): number {
  return INDEX_ENTRY_OVERHEAD + 2 * (url.length + route.key.length + route.route.length);
}
const INDEX_ENTRY_OVERHEAD = 400;

/** An index entry: a route, or a table route's routes by the format each answered in. */
type IndexEntry = FastRoute | { formats: Map<Format, FastRoute> };

function entryBytes(entry: IndexEntry, url: string): number {
  if (!('formats' in entry)) return indexEntryBytes(entry, url);
  let bytes = 0;
  for (const route of entry.formats.values()) bytes += indexEntryBytes(route, url);
  return bytes;
}

/**
 * The format the normal path would negotiate for this request (formats/negotiate.ts), or
 * undefined when it would answer 400 (an unknown `format`): then the normal way.
 */
function requestFormat(url: string, accept: string | undefined): Format | undefined {
  const query = url.indexOf('?');
  if (query >= 0 && url.includes('format', query)) {
    // The first value, as the normal path's query parser keeps it (http/querystring.ts).
    const value = new URLSearchParams(url.slice(query + 1)).get('format');
    if (value !== null) {
      try {
        return formatParam(value);
      } catch {
        return undefined;
      }
    }
  }
  return formatFromAccept(accept);
}

export function createFastPath(options: FastPathOptions): FastPath {
  // Bounded by bytes: an entry only helps while its answer is cached, and an answer is at least a
  // few hundred bytes, so an eighth of the response cache's bound covers every cached answer.
  const maxSize = options.indexMaxBytes ?? Math.max(1_048_576, Math.floor(options.cache.maxSize / 8));
  const index = new LRUCache<string, IndexEntry>({ maxSize, sizeCalculation: entryBytes });
  let served = 0;
  return {
    record(url, route) {
      // A key in the query string would make the URL a secret: such requests never take this path.
      if (url.length > 2048 || /api(?:_|%5f)key/i.test(url)) return;
      // Only the markets matter to the plan check: keep those, not up to 100 symbols per URL.
      const regions = new Set(route.needs.regions ?? []);
      for (const ref of route.needs.symbols ?? []) regions.add(ref.region);
      const kept: FastRoute = { ...route, needs: { features: route.needs.features, regions: [...regions], explicitCount: route.needs.explicitCount } };
      const format = formatOfKey(route.key);
      if (format === undefined) {
        index.set(url, kept);
        return;
      }
      const held = index.peek(url);
      const formats = held !== undefined && 'formats' in held ? new Map(held.formats) : new Map<Format, FastRoute>();
      formats.set(format, kept);
      // Set again (a new entry), so the index weighs every format's route.
      index.set(url, { formats });
    },
    handle(req, res) {
      if (req.method !== 'GET') return false;
      // A GET with a body (odd, but a client may send one) goes the normal way, which reads it:
      // answering before the body is consumed could lose the answer on a closing connection.
      if (req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0') return false;
      // No Host (the normal path's 400, error-handler.ts requireHost) or an upgrade: the normal way.
      if (req.headers.host === undefined || req.headers.upgrade !== undefined) return false;
      // A browser's cross-origin request (it sends Origin) goes the normal way, whose CORS hook
      // (server.cors) adds the Access-Control-* headers this prebuilt answer does not carry.
      if (req.headers.origin !== undefined) return false;
      const url = req.url;
      if (url === undefined) return false;
      const indexed = index.get(url);
      if (indexed === undefined) return false;
      let route: FastRoute | undefined;
      if ('formats' in indexed) {
        // A table route: the route of the format this request negotiates, if that one was answered.
        const format = requestFormat(url, req.headers.accept);
        if (format === undefined) return false;
        route = indexed.formats.get(format);
      } else route = indexed;
      if (route === undefined || options.isClosing()) return false;
      const presented = req.headers['x-api-key'] ?? bearerKey(req.headers.authorization);
      // No key (the free tier, limited per client address) goes the normal way, never with a key's limits.
      if (typeof presented !== 'string' || presented === '') return false;
      const startedAt = performance.now();
      const entry = options.keys.lookup(presented);
      if (entry === undefined || !permits(entry, route)) return false;
      const now = options.now();
      const hit = options.cache.get(route.key, now);
      if (hit === undefined || hit.state !== 'fresh') return false;
      const cached = hit.value;
      const gzip = cached.body.length > options.gzipMinBytes && gzips(cached.format) && acceptsGzip(req.headers['accept-encoding']);
      // The gzip variant is built by the normal path the first time a client asks for it.
      if (gzip && cached.gzip === undefined) return false;
      // Last: a refused request goes the normal way, which refuses it with the 429 body.
      const decision = options.limit(entry, options.address(req), now);
      if (decision === undefined || !decision.allowed) return false;

      const fixed = fixedHeaders(cached);
      // The wall clock for the Date header and the access line (`now` may be a test's clock).
      const wall = Date.now();
      const requestId = options.requestId(req);
      const age = Math.floor((hit.age + cached.dataAgeMs) / 1000);
      const reset = Math.ceil(decision.resetMs / 1000);
      const match = req.headers['if-none-match'];
      const etag = gzip ? fixed.gzipEtag : cached.etag;
      // The headers that vary per request, as wire text for the prebuilt block, as pairs for writeHead.
      const varying = `x-request-id: ${requestId}\r\nage: ${age}\r\nx-ratelimit-limit: ${decision.limit}\r\nx-ratelimit-remaining: ${decision.remaining}\r\nx-ratelimit-reset: ${reset}\r\n`;
      served += 1;
      if (match !== undefined && (etagMatches(match, etag) || etagMatches(match, cached.etag))) {
        if (!sendPrebuilt(res, 304, `etag: ${etag}\r\nvary: ${cached.vary}\r\nx-cache: HIT\r\n`, varying, undefined, wall)) {
          res.writeHead(304, [...varyingPairs(requestId, age, decision, reset), 'etag', etag, 'vary', cached.vary, 'x-cache', 'HIT']);
          res.end();
        }
        options.onServed(route, 304, entry, startedAt, req, requestId, wall);
        return true;
      }
      const block = gzip ? fixed.gzipBlock : fixed.plainBlock;
      const body = gzip ? cached.gzip : cached.body;
      if (block === undefined || !sendPrebuilt(res, 200, block, varying, body, wall)) {
        res.writeHead(200, (gzip ? fixed.gzip! : fixed.plain).concat(varyingPairs(requestId, age, decision, reset)));
        res.end(body);
      }
      options.onServed(route, 200, entry, startedAt, req, requestId, wall);
      return true;
    },
    get served() {
      return served;
    },
    get index() {
      return { entries: index.size, bytes: index.calculatedSize, maxBytes: maxSize };
    },
  };
}
