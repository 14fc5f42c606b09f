// The one entry point: load config → keys → adapters → buildApp → listen; signals; graceful close.
import { ConfigError, loadConfig } from '../config/load.ts';
import { createAdapters, productionDeps } from '../adapters/registry.ts';
import { createMetrics, upstreamSink } from './metrics.ts';
import { KeyStore } from './access/keys.ts';
import { buildApp } from './app.ts';
import { createRedisClient } from './redis.ts';

async function main(): Promise<void> {
  let loaded;
  let keys: KeyStore;
  try {
    loaded = loadConfig(process.env);
    keys = KeyStore.fromFile(loaded.config.keys.file);
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : (error as Error).message}\n`);
    process.exit(1);
  }
  const { config } = loaded;
  const now = () => Date.now();
  const metrics = createMetrics({ processMetrics: true });
  const adapters = createAdapters(config.routing, config.adapters, productionDeps(now, upstreamSink(metrics)));
  const redis = config.redis.url ? createRedisClient(config.redis.url) : undefined;
  const app = await buildApp({ config, keys, adapters, now, redis, metrics });

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

  process.on('SIGHUP', () => {
    try {
      keys.reload();
      app.log.info({ keys: keys.size }, 'keys reloaded');
      warnDemo(keys.demoKeyIds);
    } catch (error) {
      app.log.error({ err: error }, 'keys reload failed; keeping the previous keys');
    }
  });

  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    app.log.info({ signal }, 'shutting down: draining in-flight requests');
    app.markClosing();
    const timer = setTimeout(() => {
      app.log.error('drain timed out; exiting');
      process.exit(1);
    }, config.server.shutdownGraceMs);
    timer.unref();
    // Sockets that went idle after their last response would hold close() open; shut them as they do.
    const idle = setInterval(() => app.server.closeIdleConnections(), 100);
    idle.unref();
    try {
      await app.close();
      for (const adapter of adapters.values()) await adapter.close?.();
      redis?.disconnect();
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'error while closing');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ host: config.server.host, port: config.server.port });
}

main().catch((error) => {
  process.stderr.write(`fatal: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
