// The response cache (docs/architecture.md#caching): finished bytes per canonical request (route + normalised
// parameters, never the key), with an ETag and a gzip variant above `gzipMinBytes`, so a hit costs
// one lookup and one write: no serialisation, no compression. Access has already been checked by
// the route. An entry lives as long as the earliest-expiring data in it (the result's DataStatus);
// a response built from stale data, or with any symbol that failed upstream, is never stored.
// Concurrent identical misses build it once.
//
// Table routes (issue 26) cache each negotiated format's bytes beside the JSON ones: the format is
// part of the key here, in the Redis tier and in the fast path's index (keyWithFormat), each format
// has its own ETag, and every answer of such a route says `Vary: Accept, Accept-Encoding`. JSON, CSV
// and Arrow get the gzip variant; Parquet is compressed inside (ZSTD pages), so it never does.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createSingleFlight } from '../data/single-flight.ts';
import type { ByteCache } from '../cache/byte-cache.ts';
import type { StoredResponse } from '../cache/redis-tier.ts';
import type { Tier } from '../cache/tier.ts';
import { cacheOutcome, type CacheOutcome } from '../data/status.ts';
import type { Metrics } from '../metrics.ts';
import { keyWithFormat, type Format } from './formats/negotiate.ts';
import type { Encoder } from './formats/offload.ts';
import {
  applyOutcomeHeaders, contentTypeOf, formatFor, outcomeHeaders, varyOf,
  type OutcomeHeaders, type Produced, type Responder, type ResponseSpec,
} from './respond.ts';

export interface CachedResponse {
  body: Buffer;
  gzip: Buffer | undefined;
  etag: string;
  headers: OutcomeHeaders;
  /** Age of the oldest data inside when it was built, ms. */
  dataAgeMs: number;
  storedAt: number;
  /** How long it lives in the cache (0: not stored). */
  ttlMs: number;
  xCache: CacheOutcome;
  /** The representation these bytes are (Content-Type). */
  format: Format;
  /** The Vary header of the route's answers. */
  vary: string;
}

export interface ResponseCacheOptions {
  cache: ByteCache<CachedResponse>;
  /** Encodes and gzips answers (large ones off the event loop). */
  encoder: Encoder;
  gzipMinBytes: number;
  now: () => number;
  metrics?: Metrics;
  /** Told about every stored answer, so the fast path can serve its URL next time. */
  onStored?(request: FastifyRequest, key: string): void;
  /** The shared tier behind this one (Redis): finished bytes other instances built. */
  shared?: Tier<StoredResponse>;
}

/** A cached response as the shared tier stores it: bytes as they are, the rest in `meta`. */
function toStored(entry: CachedResponse): StoredResponse {
  const meta: Record<string, string> = {
    upstream: entry.headers.upstream,
    data_age_ms: String(entry.dataAgeMs),
    x_cache: entry.xCache,
  };
  if (entry.headers.simulated) meta.simulated = '1';
  if (entry.headers.missing !== undefined) meta.missing = entry.headers.missing;
  if (entry.format !== 'json') meta.format = entry.format;
  if (entry.vary !== 'accept-encoding') meta.vary = entry.vary;
  if (entry.headers.nextEndTime !== undefined) meta.next_end_time = entry.headers.nextEndTime;
  if (entry.headers.link !== undefined) meta.link = entry.headers.link;
  if (entry.headers.truncated !== undefined) meta.truncated = entry.headers.truncated;
  if (entry.headers.limitedBy !== undefined) meta.limited_by = entry.headers.limitedBy;
  return { body: entry.body, ...(entry.gzip !== undefined ? { gzip: entry.gzip } : {}), etag: entry.etag, meta };
}

function fromStored(stored: StoredResponse, storedAt: number, ttlMs: number): CachedResponse {
  return {
    body: stored.body,
    gzip: stored.gzip,
    etag: stored.etag,
    headers: {
      upstream: stored.meta.upstream ?? '',
      simulated: stored.meta.simulated === '1',
      missing: stored.meta.missing,
      failed: undefined,
      tier: undefined,
      ...(stored.meta.next_end_time === undefined ? {} : { nextEndTime: stored.meta.next_end_time }),
      ...(stored.meta.link === undefined ? {} : { link: stored.meta.link }),
      ...(stored.meta.truncated === undefined ? {} : { truncated: stored.meta.truncated }),
      ...(stored.meta.limited_by === undefined ? {} : { limitedBy: stored.meta.limited_by }),
    },
    dataAgeMs: Number(stored.meta.data_age_ms ?? 0),
    storedAt,
    ttlMs,
    xCache: (stored.meta.x_cache ?? 'MISS') as CacheOutcome,
    format: (stored.meta.format ?? 'json') as Format,
    vary: stored.meta.vary ?? 'accept-encoding',
  };
}

/** Size charged to the cache for an entry. */
function sizeOf(entry: CachedResponse): number {
  return entry.body.length + (entry.gzip?.length ?? 0) + 256;
}

function unpooled(buffer: Buffer): Buffer {
  if (buffer.byteOffset === 0 && buffer.buffer.byteLength === buffer.length) return buffer;
  const copy = Buffer.allocUnsafeSlow(buffer.length);
  buffer.copy(copy);
  return copy;
}

async function build(encoder: Encoder, produced: Produced, spec: ResponseSpec, format: Format, now: number): Promise<CachedResponse> {
  // Exact-size, unpooled copies: a small pooled Buffer would pin its whole 64 KiB pool slab in
  // the cache and the byte bound would undercount it. (The columnar encoders' output is exact-size
  // already, so unpooled() keeps it as it is.)
  const body = unpooled(await encoder.encode(produced.body, format, spec.table));
  const hash = createHash('sha1').update(body).digest('base64url');
  // Each format has its own validator (the bytes differ; the prefix says which it is).
  const etag = format === 'json' ? `"${hash}"` : `"${format}-${hash}"`;
  return {
    body,
    // Built on the first request that accepts it (most API clients never ask): see withGzip.
    gzip: undefined,
    etag,
    headers: outcomeHeaders(produced, spec.table),
    dataAgeMs: produced.status.maxAgeMs,
    storedAt: now,
    ttlMs: 0,
    xCache: cacheOutcome(produced.status),
    format,
    vary: varyOf(spec),
  };
}

/** Formats that get a gzip variant (Parquet compresses its own pages). */
export function gzips(format: Format): boolean {
  return format !== 'parquet';
}

export function acceptsGzip(raw: string | string[] | undefined): boolean {
  if (typeof raw !== 'string') return false;
  const header = raw.toLowerCase();
  return header.includes('gzip') && !/gzip;\s*q=0(?:\.0*)?(?:,|$)/.test(header);
}

/** If-None-Match uses the weak comparison (RFC 9110 13.1.2): W/"x" matches "x". */
export function etagMatches(header: string, etag: string): boolean {
  if (header === etag) return true;
  for (const part of header.split(',')) {
    const tag = part.trim();
    if (tag === '*' || tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true;
  }
  return false;
}

/**
 * The gzip variant, built on the first request that accepts it (level 6 costs ~2.8 ms for a
 * 92 KB body: never paid for clients that do not ask; large bodies are compressed on the thread
 * pool, see formats/offload.ts). Concurrent requests for one entry share one compression. A stored
 * entry is charged again for it.
 */
function withGzip(entry: CachedResponse, options: ResponseCacheOptions, key: string, pending: WeakMap<CachedResponse, Promise<void>>): Promise<void> | undefined {
  // Already built (every hit after the first), or never built: nothing to wait for, no promise on the hit path.
  if (entry.gzip !== undefined || entry.body.length <= options.gzipMinBytes || !gzips(entry.format)) return undefined;
  let building = pending.get(entry);
  if (building === undefined) {
    building = options.encoder.gzip(entry.body).then((gzip) => {
      entry.gzip = unpooled(gzip);
      if (entry.ttlMs > 0) options.cache.set(key, entry, { ttlMs: entry.ttlMs, size: sizeOf(entry) }, entry.storedAt);
    }).finally(() => pending.delete(entry));
    pending.set(entry, building);
  }
  return building;
}

function send(request: FastifyRequest, reply: FastifyReply, entry: CachedResponse, xCache: string, tier: string | undefined, ageSeconds: number): FastifyReply {
  applyOutcomeHeaders(reply, entry.headers);
  reply
    .header('x-cache', xCache)
    .header('age', String(ageSeconds))
    .header('vary', entry.vary);
  if (tier !== undefined) reply.header('x-cache-tier', tier);
  // The gzip variant is another representation, so it carries its own validator.
  const gzip = entry.gzip !== undefined && acceptsGzip(request.headers['accept-encoding']);
  const etag = gzip ? `${entry.etag.slice(0, -1)}-gz"` : entry.etag;
  reply.header('etag', etag);
  const match = request.headers['if-none-match'];
  if (match !== undefined && (etagMatches(match, etag) || etagMatches(match, entry.etag))) {
    return reply.code(304).send();
  }
  reply.header('content-type', contentTypeOf(entry.format));
  if (gzip) return reply.header('content-encoding', 'gzip').send(entry.gzip);
  return reply.send(entry.body);
}

export function createCachingResponder(options: ResponseCacheOptions): Responder {
  const flight = createSingleFlight();
  const gzipping = new WeakMap<CachedResponse, Promise<void>>();
  return {
    async respond(request, reply, requested: ResponseSpec, produce) {
      // The negotiated format is part of the key (an unknown `format` is a 400 here, before any lookup).
      const format = formatFor(request, requested);
      const spec = requested.table === undefined ? requested : { ...requested, key: keyWithFormat(requested.key, format) };
      const now = options.now();
      const hit = options.cache.get(spec.key, now);
      if (hit !== undefined && hit.state === 'fresh') {
        options.metrics?.cacheLookups.inc({ layer: 'response', resource: spec.resource, result: 'hit' });
        const entry = hit.value;
        const compressing = acceptsGzip(request.headers['accept-encoding']) ? withGzip(entry, options, spec.key, gzipping) : undefined;
        if (compressing !== undefined) await compressing;
        return send(request, reply, entry, 'HIT', 'memory', Math.floor((hit.age + entry.dataAgeMs) / 1000));
      }
      if (options.shared !== undefined) {
        const remote = await options.shared.get(spec.key);
        if (remote !== undefined && remote.state === 'fresh') {
          options.metrics?.cacheLookups.inc({ layer: 'response', resource: spec.resource, result: 'hit' });
          const entry = fromStored(remote.value, remote.storedAt, remote.windows.ttlMs);
          // Another instance built it: this one keeps it for the rest of its life.
          if (options.cache.set(spec.key, entry, { ttlMs: entry.ttlMs, size: sizeOf(entry) }, entry.storedAt)) options.onStored?.(request, spec.key);
          const compressing = acceptsGzip(request.headers['accept-encoding']) ? withGzip(entry, options, spec.key, gzipping) : undefined;
          if (compressing !== undefined) await compressing;
          return send(request, reply, entry, 'HIT', options.shared.name, Math.floor((remote.age + entry.dataAgeMs) / 1000));
        }
      }
      options.metrics?.cacheLookups.inc({ layer: 'response', resource: spec.resource, result: 'miss' });
      const entry = await flight.run(spec.key, async () => {
        const produced = await produce(format);
        const builtAt = options.now();
        const built = await build(options.encoder, produced, spec, format, builtAt);
        const ttlMs = produced.status.freshUntil - builtAt;
        const partial = (produced.failed?.length ?? 0) > 0;
        if (!produced.status.stale && !partial && ttlMs >= 1 && Number.isFinite(ttlMs)) {
          built.ttlMs = ttlMs;
          if (options.cache.set(spec.key, built, { ttlMs, size: sizeOf(built) }, builtAt)) options.onStored?.(request, spec.key);
          await options.shared?.set(spec.key, toStored(built), { ttlMs, swrMs: 0, sieMs: 0, size: sizeOf(built), storedAt: builtAt });
        }
        return built;
      });
      const compressing = acceptsGzip(request.headers['accept-encoding']) ? withGzip(entry, options, spec.key, gzipping) : undefined;
      if (compressing !== undefined) await compressing;
      return send(request, reply, entry, entry.xCache, entry.headers.tier, Math.floor(entry.dataAgeMs / 1000));
    },
  };
}
