// The cache-hit fast path (issue 15): a request whose exact URL was answered from the response
// cache before, whose key (X-API-Key header) is valid, whose plan permits what that answer needed,
// whose rate limit admits it and whose cached bytes are still fresh is answered here, before
// Fastify routes it, with one synchronous lookup and one write: no promise, no hook, no
// serialisation. Everything else (any check failing, any doubt) goes to the normal path, which
// produces the same answer or the documented error: the fast path never answers an error itself.
//
// What it keeps from the normal path: authentication (same KeyStore lookup), authorisation (the
// needs the route recorded with requireAccess, and the bars budget), the rate limit (the same
// limiter, synchronously), the same headers (X-Request-Id, X-Upstream, X-Simulated,
// X-Missing-Symbols, X-Cache: HIT, X-Cache-Tier, Age, ETag, Vary, X-RateLimit-*), 304 on
// If-None-Match, the gzip variant, and the request metrics.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import type { AccessNeeds } from '../access/guard.ts';
import type { KeyEntry, KeyStore } from '../access/keys.ts';
import type { LimitDecision } from '../access/rate-limit.ts';
import type { ByteCache } from '../cache/byte-cache.ts';
import { acceptsGzip, etagMatches, type CachedResponse } from './response-cache.ts';

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
  limit(entry: KeyEntry, address: string | undefined): LimitDecision | undefined;
  isClosing(): boolean;
  requestId(req: IncomingMessage): string;
  onServed(route: string, status: number, entry: KeyEntry, startedAt: bigint, req: IncomingMessage, requestId: string): void;
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
  for (const ref of needs.symbols ?? []) if (!plan.markets.has(ref.region)) return false;
  return route.bars <= plan.maxBars;
}

/** Header name/value pairs of a cached entry that never change, built once per entry. */
const FIXED = new WeakMap<CachedResponse, { plain: string[]; gzip: string[] | undefined }>();

function fixedHeaders(entry: CachedResponse): { plain: string[]; gzip: string[] | undefined } {
  let fixed = FIXED.get(entry);
  if (fixed !== undefined && (fixed.gzip !== undefined || entry.gzip === undefined)) return fixed;
  const common = ['content-type', 'application/json; charset=utf-8', 'x-upstream', entry.headers.upstream, 'x-cache', 'HIT', 'x-cache-tier', 'memory', 'vary', 'accept-encoding'];
  if (entry.headers.simulated) common.push('x-simulated', 'true');
  if (entry.headers.missing !== undefined) common.push('x-missing-symbols', entry.headers.missing);
  fixed = {
    plain: [...common, 'etag', entry.etag, 'content-length', String(entry.body.length)],
    gzip: entry.gzip === undefined ? undefined : [...common, 'etag', `${entry.etag.slice(0, -1)}-gz"`, 'content-encoding', 'gzip', 'content-length', String(entry.gzip.length)],
  };
  FIXED.set(entry, fixed);
  return fixed;
}

/** What an index entry weighs: the URL (key and copy in the entry's map slot) and the route's strings, two bytes a char, and its objects. */
function indexEntryBytes(route: FastRoute, url: string): number {
  return INDEX_ENTRY_OVERHEAD + 2 * (url.length + route.key.length + route.route.length);
}
const INDEX_ENTRY_OVERHEAD = 400;

export function createFastPath(options: FastPathOptions): FastPath {
  // Bounded by bytes: an entry only helps while its answer is cached, and an answer is at least a
  // few hundred bytes, so an eighth of the response cache's bound covers every cached answer.
  const maxSize = options.indexMaxBytes ?? Math.max(1_048_576, Math.floor(options.cache.maxSize / 8));
  const index = new LRUCache<string, FastRoute>({ maxSize, sizeCalculation: indexEntryBytes });
  let served = 0;
  return {
    record(url, route) {
      // A key in the query string would make the URL a secret: such requests never take this path.
      if (url.length > 2048 || /api(?:_|%5f)key/i.test(url)) return;
      // Only the markets matter to the plan check: keep those, not up to 100 symbols per URL.
      const regions = new Set(route.needs.regions ?? []);
      for (const ref of route.needs.symbols ?? []) regions.add(ref.region);
      index.set(url, { ...route, needs: { features: route.needs.features, regions: [...regions], explicitCount: route.needs.explicitCount } });
    },
    handle(req, res) {
      if (req.method !== 'GET') return false;
      // A GET with a body (odd, but a client may send one) goes the normal way, which reads it:
      // answering before the body is consumed could lose the answer on a closing connection.
      if (req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0') return false;
      // No Host (the normal path's 400, error-handler.ts requireHost) or an upgrade: the normal way.
      if (req.headers.host === undefined || req.headers.upgrade !== undefined) return false;
      const url = req.url;
      if (url === undefined) return false;
      const route = index.get(url);
      if (route === undefined || options.isClosing()) return false;
      const presented = req.headers['x-api-key'];
      if (typeof presented !== 'string' || presented === '') return false;
      const startedAt = process.hrtime.bigint();
      const entry = options.keys.lookup(presented);
      if (entry === undefined || !permits(entry, route)) return false;
      const now = options.now();
      const hit = options.cache.get(route.key, now);
      if (hit === undefined || hit.state !== 'fresh') return false;
      const cached = hit.value;
      const gzip = cached.body.length > options.gzipMinBytes && acceptsGzip(req.headers['accept-encoding']);
      // The gzip variant is built by the normal path the first time a client asks for it.
      if (gzip && cached.gzip === undefined) return false;
      // Last: a refused request goes the normal way, which refuses it with the 429 body.
      const decision = options.limit(entry, options.address(req));
      if (decision === undefined || !decision.allowed) return false;

      const fixed = fixedHeaders(cached);
      const headers = (gzip ? fixed.gzip : fixed.plain) as string[];
      const requestId = options.requestId(req);
      const varying = [
        'x-request-id', requestId,
        'age', String(Math.floor((hit.age + cached.dataAgeMs) / 1000)),
        'x-ratelimit-limit', String(decision.limit),
        'x-ratelimit-remaining', String(decision.remaining),
        'x-ratelimit-reset', String(Math.ceil(decision.resetMs / 1000)),
      ];
      const match = req.headers['if-none-match'];
      served += 1;
      if (match !== undefined && (etagMatches(match, gzip ? `${cached.etag.slice(0, -1)}-gz"` : cached.etag) || etagMatches(match, cached.etag))) {
        res.writeHead(304, [...varying, 'etag', gzip ? `${cached.etag.slice(0, -1)}-gz"` : cached.etag, 'vary', 'accept-encoding', 'x-cache', 'HIT']);
        res.end();
        options.onServed(route.route, 304, entry, startedAt, req, requestId);
        return true;
      }
      res.writeHead(200, headers.concat(varying));
      res.end(gzip ? cached.gzip : cached.body);
      options.onServed(route.route, 200, entry, startedAt, req, requestId);
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
