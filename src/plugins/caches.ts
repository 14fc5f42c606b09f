// The caches: the data tiers (in-process memory, then Redis when configured) the loader reads in
// order, and the response cache (finished bytes per canonical request, a Redis tier behind it)
// the routes answer through. With caching off, every request goes to the adapters.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config/schema.ts';
import { createByteCache } from '../cache/byte-cache.ts';
import { createMemoryTier } from '../cache/memory-tier.ts';
import { createRedisTier, jsonCodec, responseCodec } from '../cache/redis-tier.ts';
import type { Tier } from '../cache/tier.ts';
import type { DataEntry } from '../data/loader.ts';
import { createCachingResponder, type CachedResponse } from '../http/response-cache.ts';
import { directResponder, type Responder } from '../http/respond.ts';
import { createEncoder } from '../http/formats/offload.ts';

/** A response stored in the response cache under `key` (the fast path indexes it). */
export type StoredListener = (request: FastifyRequest, key: string) => void;

export interface Caches {
  /** The loader's tiers, in order; empty: no caching at all. */
  dataTiers: Tier<DataEntry>[];
  /** The in-process response cache, when caching is on. */
  responseCache?: ReturnType<typeof createByteCache<CachedResponse>>;
  responder: Responder;
  /** Tell `listener` of every response stored in the in-process response cache. */
  onStored(listener: StoredListener): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    caches: Caches;
  }
}

export interface CachesOptions {
  config: Config;
  now: () => number;
  /** false: no caching (tests that count every upstream call). */
  cache: boolean;
  responder?: Responder;
  /** Extra data tiers after the in-process one, in order (tests). */
  dataTiers?: Tier<DataEntry>[];
}

export const cachesPlugin = fp(async (app: FastifyInstance, options: CachesOptions) => {
  const { config, now } = options;
  const listeners: StoredListener[] = [];
  const onStored = (listener: StoredListener) => void listeners.push(listener);
  // Encoding and gzip of large answers run off the event loop (its workers stop with the app).
  const encoder = createEncoder();
  app.addHook('onClose', async () => encoder.close());
  if (!options.cache) {
    app.decorate('caches', { dataTiers: [], responder: options.responder ?? directResponder(encoder), onStored });
    return;
  }
  const shared = app.sharedRedis;
  const memory = createMemoryTier<DataEntry>({ maxBytes: config.cache.dataMaxBytes, now });
  const responseCache = createByteCache<CachedResponse>({ maxSize: config.cache.responseMaxBytes, now });
  app.metrics.trackCacheBytes('data', () => memory.bytes);
  app.metrics.trackCacheBytes('response', () => responseCache.calculatedSize);
  const redisTier = <T>(prefix: string, codec: Parameters<typeof createRedisTier<T>>[0]['codec']) => (shared === undefined ? undefined
    : createRedisTier<T>({ redis: shared.client, prefix, codec, now, timeoutMs: shared.timeoutMs, health: shared.health, log: app.log }));
  const dataTiers: Tier<DataEntry>[] = [memory, ...(options.dataTiers ?? [])];
  const sharedData = redisTier<DataEntry>('mdqs:data:', jsonCodec());
  if (sharedData !== undefined) dataTiers.push(sharedData);
  const responder = options.responder ?? createCachingResponder({
    cache: responseCache, encoder, gzipMinBytes: config.cache.gzipMinBytes, now, metrics: app.metrics,
    shared: redisTier('mdqs:resp:', responseCodec),
    onStored: (request, key) => {
      for (const listener of listeners) listener(request, key);
    },
  });
  app.decorate('caches', { dataTiers, responseCache, responder, onStored });
}, { name: 'caches', dependencies: ['metrics', 'shared-redis'] });
