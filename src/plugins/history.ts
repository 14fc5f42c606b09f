// The candle history store (src/store/), when `history.enabled`: a tier in front of the vendors
// (the candles descriptor reads it before any vendor call). Opened at boot (a store that cannot be
// opened refuses the boot), closed with the app; its health is part of /readyz.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config/schema.ts';
import { BootError } from '../errors.ts';
import { createHistoryTier, type HistoryTier } from '../store/index.ts';
import { historySettings } from '../store/settings.ts';

export interface History {
  store?: HistoryTier;
  /** Adapter ids whose candles bypass the store. */
  offFor: ReadonlySet<string>;
}

declare module 'fastify' {
  interface FastifyInstance {
    history: History;
  }
}

export const historyPlugin = fp(async (app: FastifyInstance, options: { config: Config; now: () => number; history?: HistoryTier }) => {
  const settings = historySettings(options.config);
  let store = options.history;
  if (store === undefined && settings.enabled) {
    try {
      store = await createHistoryTier({
        backend: settings.backend, sqlitePath: settings.sqlitePath, databaseUrl: settings.databaseUrl, now: options.now,
        revision: settings.revision, retentionDays: settings.retentionDays, registry: app.metrics.registry,
        log: { warn: (fields, message) => app.log.warn(fields, message), error: (fields, message) => app.log.error(fields, message) },
      });
    } catch (error) {
      throw new BootError('store', (error as Error).message, { cause: error });
    }
    const opened = store;
    app.addHook('onClose', async () => opened.close());
  }
  app.decorate('history', { store, offFor: new Set(settings.disabledAdapters) });
}, { name: 'history', dependencies: ['metrics'] });
