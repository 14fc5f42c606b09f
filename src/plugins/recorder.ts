// The recorder (src/recorder/), when `history.record.jobs` lists any job and the store is on:
// started once the server listens, stopped (its lock released) on close. Its runner lock: the
// Redis lease with a shared PostgreSQL store and Redis, a PostgreSQL advisory lock without Redis,
// none for the instance's own SQLite store.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config/schema.ts';
import { createRecorderMetrics } from '../recorder/metrics.ts';
import { Recorder } from '../recorder/recorder.ts';
import { localRunnerLock, postgresRunnerLock, redisRunnerLock, type RunnerLock } from '../recorder/runner-lock.ts';
import { historySettings } from '../store/settings.ts';
import { budgetOf } from '../upstream/registry.ts';

declare module 'fastify' {
  interface FastifyInstance {
    recorder: Recorder | undefined;
  }
}

/** A killed runner's Redis lease lapses within this, and a standby takes over at its next try (every third of it). */
export const RUNNER_LEASE_MS = 6000;

export const recorderPlugin = fp(async (app: FastifyInstance, options: { config: Config; now: () => number }) => {
  const settings = historySettings(options.config);
  const store = app.history.store;
  if (store === undefined || settings.record.jobs.length === 0) {
    app.decorate('recorder', undefined);
    return;
  }
  let lock: RunnerLock;
  if (settings.backend === 'postgres') {
    lock = app.sharedRedis !== undefined
      ? redisRunnerLock(app.sharedRedis.client, { scope: settings.postgresSchema, leaseMs: RUNNER_LEASE_MS, now: options.now })
      : await postgresRunnerLock(settings.databaseUrl as string, settings.postgresSchema);
  } else lock = localRunnerLock();
  const recorder = new Recorder({
    store, router: app.upstream.router, settings: settings.record, lock, now: options.now,
    log: { info: (o, m) => app.log.info(o, m), warn: (o, m) => app.log.warn(o, m) },
    metrics: createRecorderMetrics(app.metrics.registry),
    offFor: app.history.offFor,
    budgetOf: (adapter) => budgetOf(adapter),
    holdEveryMs: Math.round(RUNNER_LEASE_MS / 3),
  });
  app.decorate('recorder', recorder);
  app.addHook('onListen', async () => {
    recorder.start();
    app.log.info({ jobs: settings.record.jobs.map((j) => j.id), runner_lock: lock.mechanism }, 'recorder started');
  });
  app.addHook('onClose', async () => {
    await recorder.stop();
  });
}, { name: 'recorder', dependencies: ['history', 'upstream', 'metrics', 'shared-redis'] });
