// The response cache (DESIGN.md 5): finished bytes per canonical request (route + normalised
// parameters, never the key), with an ETag and a gzip variant above `gzipMinBytes`, so a hit costs
// one lookup and one write: no serialisation, no compression. Access has already been checked by
// the route. An entry lives as long as the earliest-expiring data in it (the result's DataStatus);
// a response built from stale data, or with any symbol that failed upstream, is never stored.
// Concurrent identical misses build it once.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createSingleFlight } from '../cache/batch-loader.ts';
import type { ByteCache } from '../cache/byte-cache.ts';
import { cacheOutcome, type CacheOutcome } from '../data/status.ts';
import type { Metrics } from '../metrics.ts';
import { applyOutcomeHeaders, outcomeHeaders, type OutcomeHeaders, type Produced, type Responder, type ResponseSpec } from './respond.ts';

export interface CachedResponse {
  body: Buffer;
  gzip: Buffer | undefined;
  etag: string;
  headers: OutcomeHeaders;
  /** Age of the oldest data inside when it was built, ms. */
  dataAgeMs: number;
  storedAt: number;
  xCache: CacheOutcome;
}

export interface ResponseCacheOptions {
  cache: ByteCache<CachedResponse>;
  gzipMinBytes: number;
  now: () => number;
  metrics?: Metrics;
}

function unpooled(buffer: Buffer): Buffer {
  if (buffer.byteOffset === 0 && buffer.buffer.byteLength === buffer.length) return buffer;
  const copy = Buffer.allocUnsafeSlow(buffer.length);
  buffer.copy(copy);
  return copy;
}

function build(produced: Produced, gzipMinBytes: number, now: number): CachedResponse {
  // Exact-size, unpooled copies: a small pooled Buffer would pin its whole 64 KiB pool slab in
  // the cache and the byte bound would undercount it.
  const body = unpooled(Buffer.from(JSON.stringify(produced.body)));
  const etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
  return {
    body,
    gzip: body.length > gzipMinBytes ? unpooled(gzipSync(body, { level: 6 })) : undefined,
    etag,
    headers: outcomeHeaders(produced),
    dataAgeMs: produced.status.maxAgeMs,
    storedAt: now,
    xCache: cacheOutcome(produced.status),
  };
}

function acceptsGzip(request: FastifyRequest): boolean {
  const raw = request.headers['accept-encoding'];
  if (typeof raw !== 'string') return false;
  const header = raw.toLowerCase();
  return header.includes('gzip') && !/gzip;\s*q=0(?:\.0*)?(?:,|$)/.test(header);
}

/** If-None-Match uses the weak comparison (RFC 9110 13.1.2): W/"x" matches "x". */
function etagMatches(header: string, etag: string): boolean {
  if (header === etag) return true;
  for (const part of header.split(',')) {
    const tag = part.trim();
    if (tag === '*' || tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true;
  }
  return false;
}

function send(request: FastifyRequest, reply: FastifyReply, entry: CachedResponse, xCache: string, tier: string | undefined, ageSeconds: number): FastifyReply {
  applyOutcomeHeaders(reply, entry.headers);
  reply
    .header('x-cache', xCache)
    .header('age', String(ageSeconds))
    .header('vary', 'accept-encoding');
  if (tier !== undefined) reply.header('x-cache-tier', tier);
  // The gzip variant is another representation, so it carries its own validator.
  const gzip = entry.gzip !== undefined && acceptsGzip(request);
  const etag = gzip ? `${entry.etag.slice(0, -1)}-gz"` : entry.etag;
  reply.header('etag', etag);
  const match = request.headers['if-none-match'];
  if (match !== undefined && (etagMatches(match, etag) || etagMatches(match, entry.etag))) {
    return reply.code(304).send();
  }
  reply.header('content-type', 'application/json; charset=utf-8');
  if (gzip) return reply.header('content-encoding', 'gzip').send(entry.gzip);
  return reply.send(entry.body);
}

export function createCachingResponder(options: ResponseCacheOptions): Responder {
  const flight = createSingleFlight();
  return {
    async respond(request, reply, spec: ResponseSpec, produce) {
      const now = options.now();
      const hit = options.cache.get(spec.key, now);
      if (hit !== undefined && hit.state === 'fresh') {
        options.metrics?.cacheLookups.inc({ layer: 'response', resource: spec.resource, result: 'hit' });
        const entry = hit.value;
        return send(request, reply, entry, 'HIT', 'memory', Math.floor((hit.age + entry.dataAgeMs) / 1000));
      }
      options.metrics?.cacheLookups.inc({ layer: 'response', resource: spec.resource, result: 'miss' });
      const entry = await flight.run(spec.key, async () => {
        const produced = await produce();
        const builtAt = options.now();
        const built = build(produced, options.gzipMinBytes, builtAt);
        const ttlMs = produced.status.freshUntil - builtAt;
        const partial = (produced.failed?.length ?? 0) > 0;
        if (!produced.status.stale && !partial && ttlMs >= 1 && Number.isFinite(ttlMs)) {
          options.cache.set(spec.key, built, { ttlMs, size: built.body.length + (built.gzip?.length ?? 0) + 256 }, builtAt);
        }
        return built;
      });
      return send(request, reply, entry, entry.xCache, entry.headers.tier, Math.floor(entry.dataAgeMs / 1000));
    },
  };
}
