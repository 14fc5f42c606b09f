// The service process (loaded by src/server.ts, the entry point): load config → keys → adapters → buildApp → listen; signals; graceful close.
//
// Signals: `npm start` runs `exec node … src/server.ts`, so npm's child IS this process and the
// SIGTERM/SIGINT npm forwards reach it. npm does not forward SIGHUP (it dies of it), so the pid to
// signal is written to server.pidFile (`kill -HUP $(cat data/mdqs.pid)`, or `npm run cli -- reload`);
// and if the npm that started us dies, we drain and exit rather than hold the port as an orphan.
// With server.workers > 1 this process is the cluster primary (src/cluster.ts): it owns the pid
// file and passes signals to the workers, each of which runs startWorker().
import cluster from 'node:cluster';
import { resolve } from 'node:path';
import { ConfigError, loadConfig, type LoadedConfig } from '../config/load.ts';
import { createAdapters, productionDeps } from './upstream/registry.ts';
import { createMetrics, upstreamSink } from './metrics.ts';
import { KeyStore } from './access/keys.ts';
import { publishKeyReload, subscribeKeyReloads } from './access/revocation.ts';
import { BootError, buildApp } from './app.ts';
import { runClustered, workersProblem } from './cluster.ts';
import { createRedisClient, createSubscriber, redisConfigured } from './redis/connection.ts';
import { attachRedisLog } from './redis/health.ts';
import { serviceClock, type ServiceClock } from './process/clock.ts';
import { listenHost } from './process/listen-host.ts';
import { removePidFile, removeServerState, writePidFile, writeServerState } from './process/pidfile.ts';
import { applyHeapGrowing, HEAP_GROWING_IGNORED, heapGrowingPercent } from './process/heap-growing.ts';
import { memorySaverFlagGiven, memorySaverLine, memorySaverSwitch, watchMemory } from './process/memory-saver.ts';
import { BLOCK_CACHE_BYTES } from './store/candle-store.ts';
import { historySettings } from './store/settings.ts';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Write the pid file (removed at exit) and say which pid to signal. */
function ownPidFile(pidFile: string, keysFile: string, log: Logger): void {
  if (!pidFile) return;
  const other = writePidFile(pidFile);
  if (other === undefined) {
    // Beside the pid, the keys file this server reads: the key commands refuse to act on another.
    writeServerState(pidFile, keysFile);
    process.on('exit', () => {
      removeServerState(pidFile);
      removePidFile(pidFile);
    });
    log.info({ pid_file: pidFile, keys_file: resolve(keysFile) }, `pid ${process.pid} written to ${pidFile}: kill -HUP $(cat ${pidFile}) reloads the keys file ${resolve(keysFile)}`);
  } else {
    log.warn({ pid: process.pid, pid_file: pidFile, other }, `${pidFile} names another running server (pid ${other}); left as is: signal this one as pid ${process.pid}`);
  }
}

/** Under npm our parent is npm: if it goes (npm dies of SIGHUP), stop instead of living on as an orphan. */
function watchNpmParent(log: Logger, stop: () => void): void {
  if (process.env.npm_lifecycle_event !== 'start') return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    log.warn({ parent }, 'the npm process that started this server exited (npm does not forward SIGHUP; signal the pid in the pid file instead)');
    stop();
  }, 500);
  watch.unref();
}

async function startWorker(loaded: LoadedConfig, keys: KeyStore, primary: boolean, heapGrowing: { percent?: number; flagGiven?: boolean }): Promise<void> {
  const { config } = loaded;
  let clock: ServiceClock;
  try {
    clock = serviceClock(process.env.MDQS_CLOCK_START);
  } catch (error) {
    fail((error as Error).message);
  }
  const now = clock.now;
  const metrics = createMetrics({ processMetrics: true });
  // Dropped vendor rows: counted always, logged once the app (and its logger) exists.
  let log: { warn(fields: object, message: string): void } | undefined;
  const redisOptions = { commandTimeoutMs: config.redis.commandTimeoutMs };
  const redis = redisConfigured(config.redis) ? createRedisClient(config.redis, redisOptions) : undefined;
  const deps = productionDeps(now, upstreamSink(metrics), (event) => {
    metrics.invalidRows.inc({ adapter: event.adapter, resource: event.resource, reason: event.reason });
    log?.warn(event, 'invalid vendor rows dropped');
  }, { redis, registry: metrics.registry, processes: (config.redis.instances ?? 1) * (config.server.workers ?? 1) });
  const adapters = createAdapters(config.routing, config.adapters, deps);
  const app = await buildApp({
    config, keys, adapters, now, redis, metrics, upstreamClients: deps.clients,
  });
  log = app.log;
  if (redis) attachRedisLog(redis, app.log);
  if (clock.startedAt !== undefined) {
    app.log.warn({ clock_start: new Date(clock.startedAt).toISOString() }, 'MDQS_CLOCK_START: the service clock is not the real time (for tests and demonstrations only)');
  }

  app.log.info({ config_file: loaded.file, keys_file: config.keys.file, keys: keys.size, routing: config.routing.markets }, 'configuration loaded');
  const simulated = Object.entries(config.routing.markets).filter(([, chain]) => chain[0] === 'sim').map(([market]) => market);
  if (simulated.length > 0) {
    app.log.warn({ markets: simulated }, 'SIMULATED MARKET DATA: the embedded sim adapter answers these markets; prices are not real');
  }
  const warnDemo = (ids: string[]) => {
    if (ids.length > 0) {
      app.log.warn({ key_ids: ids }, '!!! DEMO API KEY ENABLED (`demo-key`): for local use only; remove it from the keys file before exposing this service !!!');
    }
  };
  warnDemo(keys.demoKeyIds);
  const bind = listenHost(config.server.host, keys.demoKeyIds);
  if (bind.reason !== undefined) app.log.warn({ host: bind.host }, `listening on ${bind.host}: ${bind.reason}`);

  // Instances sharing Redis reload their keys when any one of them (or revoke-key) publishes.
  const subscriber = redisConfigured(config.redis) ? createSubscriber(config.redis, redisOptions) : undefined;
  const unsubscribe = subscriber ? subscribeKeyReloads({ subscriber, keys, log: app.log }) : undefined;

  process.on('SIGHUP', () => {
    try {
      keys.reload();
      app.log.info({ keys: keys.size, keys_file: resolve(config.keys.file) }, 'keys reloaded');
      warnDemo(keys.demoKeyIds);
      if (redis) void publishKeyReload(redis).catch((error: unknown) => app.log.warn({ err: error }, 'could not tell other instances to reload their keys'));
    } catch (error) {
      app.log.error({ err: error }, 'keys reload failed; keeping the previous keys');
    }
  });

  const CLOSE_BACKSTOP_MS = 5_000;
  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    app.log.info({ signal }, 'shutting down: draining in-flight requests');
    app.markClosing();
    // app.close() itself ends by the grace deadline; this backstop covers its onClose steps
    // (the history store, adapters) hanging after that.
    const timer = setTimeout(() => {
      app.log.error('drain timed out; exiting');
      process.exit(1);
    }, config.server.shutdownGraceMs + CLOSE_BACKSTOP_MS);
    timer.unref();
    // app.close() drains: connections without a complete request in flight (idle keep-alive, or
    // headers that never finished) close now and as they go idle; responses still running end with
    // Connection: close; anything left at the grace deadline is destroyed (http/drain.ts).
    try {
      await app.close();
      for (const adapter of adapters.values()) await adapter.close?.();
      await unsubscribe?.();
      subscriber?.disconnect();
      redis?.disconnect();
      app.log.info({ signal }, 'stopped');
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'error while closing');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  try {
    await app.listen({ host: bind.host, port: config.server.port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      fail(`cannot listen: port ${config.server.port} on ${bind.host} is already in use (another mdqs still running? see: ss -ltnp 'sport = :${config.server.port}'). `
        + `Pick another port: PORT=${config.server.port === 65_535 ? 8081 : config.server.port + 1} npm start, or server.port in your CONFIG_FILE.`);
    }
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') fail(`cannot listen on ${bind.host}: no such local address (server.host / HOST)`);
    if (code === 'EACCES') fail(`cannot listen on port ${config.server.port}: permission denied (ports below 1024 need privileges; use 8080)`);
    throw error;
  }
  // Boot at V8's own growing factor, serve at npm start's (src/process/heap-growing.ts).
  applyHeapGrowing(heapGrowing.percent);
  if (heapGrowing.flagGiven === true && primary) app.log.warn({}, HEAP_GROWING_IGNORED);
  // V8's memory-saver mode while resident memory is above its line (src/process/memory-saver.ts).
  const headroom = config.server.memorySaverHeadroomBytes;
  if (headroom > 0 && !memorySaverFlagGiven(process.env)) {
    const bounds = config.cache.dataMaxBytes + config.cache.responseMaxBytes + (historySettings(config).enabled ? BLOCK_CACHE_BYTES : 0);
    const line = memorySaverLine(process.memoryUsage.rss(), bounds, headroom);
    const saver = memorySaverSwitch({ saverPercent: config.server.memorySaverHeapGrowingPercent, servingPercent: heapGrowing.percent });
    // Its timer is unref'd: it never holds the process open, and it ends with it.
    watchMemory({
      ...line, rss: process.memoryUsage.rss, set: saver.set,
      onChange: (on, rss) => app.log.info(
        { rssBytes: rss, lineBytes: line.lineBytes, heapGrowingPercent: (on ? saver.growingWhenOn : heapGrowing.percent) ?? null },
        on ? 'memory saver on: resident memory above its line' : 'memory saver off: resident memory back under its line',
      ),
    });
  }
  if (primary) {
    ownPidFile(config.server.pidFile ?? '', config.keys.file, app.log);
    watchNpmParent(app.log, () => void shutdown('parent exited'));
  }
}

async function main(): Promise<void> {
  let loaded: LoadedConfig;
  let keys: KeyStore;
  try {
    loaded = loadConfig(process.env);
    keys = KeyStore.fromFile(loaded.config.keys.file);
  } catch (error) {
    fail(error instanceof ConfigError ? error.message : `cannot start: ${(error as Error).message}`);
  }
  const heapGrowing = heapGrowingPercent(process.env);
  if (heapGrowing.problem !== undefined) fail(`cannot start: ${heapGrowing.problem}`);
  const workers = loaded.config.server.workers ?? 1;
  const problem = workersProblem(workers, loaded.config.redis);
  if (problem !== undefined) fail(problem);
  if (workers > 1 && cluster.isPrimary) {
    const log: Logger = {
      info: (_obj, msg) => process.stdout.write(`${JSON.stringify({ level: 30, time: new Date().toISOString(), pid: process.pid, msg })}\n`),
      warn: (_obj, msg) => process.stdout.write(`${JSON.stringify({ level: 40, time: new Date().toISOString(), pid: process.pid, msg })}\n`),
    };
    ownPidFile(loaded.config.server.pidFile ?? '', loaded.config.keys.file, log);
    watchNpmParent(log, () => process.kill(process.pid, 'SIGTERM'));
    if (heapGrowing.flagGiven === true) log.warn({}, HEAP_GROWING_IGNORED);
    // The primary only forks and passes signals on; each worker process sets its own after it listens.
    applyHeapGrowing(heapGrowing.percent);
  }
  await runClustered(workers, () => startWorker(loaded, keys, !cluster.isWorker, heapGrowing));
}

main().catch((error) => {
  // Refusals of the configuration at boot (routing, the history store) are messages, not crashes.
  if (error instanceof BootError) {
    process.stderr.write(`cannot start: ${(error as Error).message}\n`);
  } else {
    process.stderr.write(`fatal: ${(error as Error).stack ?? String(error)}\n`);
  }
  process.exit(1);
});
