// Cold requests on the embedded sim (issue 15): CPU per cold 1000-bar request (daily and 1m) and
// the base bars fetched for aggregated periods, in one process (app.inject: no socket cost), each
// request for a symbol nothing has touched yet. History store off: this is the vendor path.
//   node bench/cold.ts
import { createAdapters } from '../adapters/registry.ts';
import { buildTestApp, KEYS } from '../test/helpers/app.ts';
import { countingAdapter } from '../test/helpers/counting-adapter.ts';

const now = Date.UTC(2025, 5, 20, 8, 0, 0);
const { app, adapters } = await buildTestApp({
  now: () => now,
  configure: (config) => {
    config.adapters.sim = { ...config.adapters.sim, syntheticUniverse: 400 };
  },
  adapters: new Map([['sim', countingAdapter(createAdapters({ markets: { CN: ['sim'], HK: ['sim'], US: ['sim'] }, overrides: {} }, { sim: { syntheticUniverse: 400 } }, () => ({ now: () => now })).get('sim')!)]]),
});
const sim = adapters.get('sim') as ReturnType<typeof countingAdapter>;
let next = 1;
const symbol = () => `SIM${String(next++).padStart(4, '0')}.US`;

async function measure(label: string, query: (s: string) => string, n: number): Promise<void> {
  // Warm the code paths (JIT) on other symbols first.
  for (let i = 0; i < 5; i++) await app.inject({ url: query(symbol()), headers: { 'x-api-key': KEYS.demo } });
  const before = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const res = await app.inject({ url: query(symbol()), headers: { 'x-api-key': KEYS.demo } });
    if (res.statusCode !== 200) throw new Error(`${label}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  }
  const used = process.cpuUsage(before);
  console.log(`| ${label} | ${n} | ${((used.user + used.system) / 1000 / n).toFixed(1)} ms | ${((performance.now() - t0) / n).toFixed(1)} ms |`);
}

console.log('| cold request (each on a new symbol) | requests | CPU per request | wall per request |\n|---|---|---|---|');
await measure('1000 daily bars, adjust none', (s) => `/v1/klines?symbol=${s}&period=1d&count=1000&adjust=none`, 40);
await measure('1000 daily bars, adjust forward', (s) => `/v1/klines?symbol=${s}&period=1d&count=1000&adjust=forward`, 40);
await measure('1000 one-minute bars', (s) => `/v1/klines?symbol=${s}&period=1m&count=1000&adjust=none`, 40);
await measure('1000 60m bars', (s) => `/v1/klines?symbol=${s}&period=60m&count=1000&adjust=none`, 10);
const fetched = sim.log.filter((c) => c.method === 'getCandles').length;
console.log(`\nadapter getCandles calls: ${fetched}`);
await app.close();

// What a newest-N request asks the vendor for: base bars per output bar, then the shared bucket.
const { baseFetchFor } = await import('../src/service/candle-plan.ts');
const { bucketCount } = await import('../src/data/resources.ts');
console.log('\n| period × 1000 bars | base bars needed | fetched (bucket) | ratio |\n|---|---|---|---|');
for (const period of ['1m', '5m', '15m', '30m', '60m', '1d', '1w'] as const) {
  const need = baseFetchFor(period, { count: 1000 }).count;
  const fetch = bucketCount(need);
  console.log(`| ${period} | ${need} | ${fetch} | ${(fetch / need).toFixed(3)} |`);
}
