// The service for the store-hit suite (bench/suites/store-hit.ts): built like src/main.ts (config
// from the environment, keys file, production adapter deps, metrics, buildApp, listen), except that
// the history store is opened here so a PostgreSQL run gets a schema of its own
// (STORE_HIT_PG_SCHEMA), dropped by the suite afterwards; the SQLite store is the fresh file the
// suite names in MDQS__history__sqlitePath. STORE_HIT_BLOCK_CACHE_BYTES=0 turns the store's hot
// blocks off.
import { loadConfig } from '../../config/load.ts';
import { KeyStore } from '../../src/access/keys.ts';
import { buildApp } from '../../src/app.ts';
import { createMetrics, upstreamSink } from '../../src/metrics.ts';
import { openHistoryStore } from '../../src/store/index.ts';
import { historySettings } from '../../src/store/settings.ts';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';

const { config } = loadConfig(process.env);
const keys = KeyStore.fromFile(config.keys.file);
const now = () => Date.now();
const metrics = createMetrics({ processMetrics: true });
const deps = productionDeps(now, upstreamSink(metrics), () => {});
const adapters = createAdapters(config.routing, config.adapters, deps);
const settings = historySettings(config);
const history = await openHistoryStore({
  backend: settings.backend, sqlitePath: settings.sqlitePath, databaseUrl: settings.databaseUrl, now,
  postgresSchema: process.env.STORE_HIT_PG_SCHEMA, revision: settings.revision, retentionDays: settings.retentionDays,
  registry: metrics.registry,
  blockCacheBytes: process.env.STORE_HIT_BLOCK_CACHE_BYTES === undefined ? undefined : Number(process.env.STORE_HIT_BLOCK_CACHE_BYTES),
});
const app = await buildApp({ config, keys, adapters, now, metrics, upstreamClients: deps.clients, history });
app.addHook('onClose', async () => history.close());
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
await app.listen({ host: config.server.host, port: config.server.port });
