// The service for soak variant B: built like src/server.ts (same config loading from the
// environment, keys file, adapters, buildApp, listen), except that before listening it fills the
// sim adapter's own memos (per-symbol tails, the 64-history and 512-day LRUs) by calling the
// adapter directly. The service's caches start empty, so what grows during the soak is the service.
import { loadConfig } from '../../config/load.ts';
import { createAdapters } from '../../src/upstream/registry.ts';
import { KeyStore } from '../../src/access/keys.ts';
import { buildApp } from '../../src/app.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import type { BasePeriod, SymbolRef } from '../../src/domain.ts';

const { config } = loadConfig(process.env);
const keys = KeyStore.fromFile(config.keys.file);
const now = () => Date.now();
const adapters = createAdapters(config.routing, config.adapters, () => ({ now }));
const sim = adapters.get('sim');
if (sim === undefined) throw new Error('soak-server: the routing must use the sim adapter');

const universe = Number(config.adapters.sim?.syntheticUniverse ?? 0);
const ref = (n: number): SymbolRef => parseSymbol(`SIM${String(n).padStart(4, '0')}.US`)!;
for (let n = 1; n <= universe; n += 100) {
  await sim.getQuotes!(Array.from({ length: Math.min(100, universe - n + 1) }, (_, i) => ref(n + i)));
}
// Enough distinct symbols and minute days to fill both LRUs several times over.
for (let i = 0; i < 200; i++) {
  const period: BasePeriod = i % 2 === 0 ? '1m' : '1d';
  await sim.getCandles!({ symbol: ref(1 + Math.floor(Math.random() * universe)), period, count: period === '1m' ? 2000 + Math.floor(Math.random() * 6000) : 1000 });
}

const app = await buildApp({ config, keys, adapters, now });
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
await app.listen({ host: config.server.host, port: config.server.port });
