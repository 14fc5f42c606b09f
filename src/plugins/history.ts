// The history store (src/store/), when `history.enabled`: a tier of the loader in front of the
// router (candles, ex-factors, instruments; the descriptors give the loader its store tier). Opened at boot (a store that cannot be
// opened refuses the boot), closed with the app; its health is part of /readyz. A shared
// PostgreSQL store locks each series fleet-wide while filling a gap (store/series-lock.ts).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config/schema.ts';
import { BootError } from '../errors.ts';
import { createFillLock } from '../cache/fill-lock.ts';
import { openHistoryStore, type HistoryStore } from '../store/index.ts';
import { redisSeriesLock, type SeriesLock } from '../store/series-lock.ts';
import { historySettings } from '../store/settings.ts';

export interface History {
  store?: HistoryStore;
  /** Adapter ids whose candles bypass the store. */
  offFor: ReadonlySet<string>;
}

declare module 'fastify' {
  interface FastifyInstance {
    history: History;
  }
}

export const historyPlugin = fp(async (app: FastifyInstance, options: { config: Config; now: () => number; history?: HistoryStore }) => {
  const settings = historySettings(options.config);
  let store = options.history;
  if (store === undefined && settings.enabled) {
    const seriesLock = settings.backend === 'postgres' ? fleetSeriesLock(app, options.config, options.now) : undefined;
    try {
      store = await openHistoryStore({
        seriesLock, lockWaitMs: options.config.upstream.deadlineMs,
        backend: settings.backend, sqlitePath: settings.sqlitePath, databaseUrl: settings.databaseUrl, postgresSchema: settings.postgresSchema, now: options.now,
        revision: settings.revision, retentionDays: settings.retentionDays, recordedRetentionDays: settings.record.retentionDays, registry: app.metrics.registry,
        log: { warn: (fields, message) => app.log.warn(fields, message), error: (fields, message) => app.log.error(fields, message) },
      });
    } catch (error) {
      await seriesLock?.close();
      throw new BootError('store', (error as Error).message, { cause: error });
    }
    const opened = store;
    app.addHook('onClose', async () => {
      await opened.close();
      await seriesLock?.close();
    });
  }
  const blocks = store;
  if (blocks?.blockCacheBytes !== undefined) app.metrics.trackCacheBytes('store_blocks', () => blocks.blockCacheBytes?.() ?? 0);
  app.decorate('history', { store, offFor: new Set(settings.disabledAdapters) });
}, { name: 'history', dependencies: ['metrics', 'shared-redis'] });

/**
 * With Redis, a shared store's fills lock their series with the Redis fill lock (its renewed
 * lease; one lock mechanism with the caches'), on a subscriber of its own; without Redis the
 * store opens a PostgreSQL advisory lock itself (undefined here).
 */
function fleetSeriesLock(app: FastifyInstance, config: Config, now: () => number): SeriesLock | undefined {
  const shared = app.sharedRedis;
  if (shared === undefined) return undefined;
  const subscriber = shared.client.duplicate({ enableOfflineQueue: true, commandTimeout: undefined, autoResubscribe: true });
  subscriber.on('error', () => undefined);
  const lock = createFillLock({ redis: shared.client, subscriber, prefix: 'mdqs:store:', leaseMs: config.redis.fillLockLeaseMs ?? 1_000, now, health: shared.health });
  const series = redisSeriesLock(lock, now);
  return {
    mechanism: series.mechanism,
    run: series.run,
    async close() {
      await series.close();
      subscriber.disconnect();
    },
  };
}
