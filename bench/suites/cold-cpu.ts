// Cold requests on the embedded sim (issue 15): CPU per cold 1000-bar request (daily and 1m) and
// the base bars fetched for aggregated periods, in one process (app.inject: no socket cost), each
// request for a symbol nothing has touched yet. History store off: this is the vendor path.
//   node bench/suites/cold-cpu.ts [label filter, e.g. daily]   (profile: node --cpu-prof --cpu-prof-dir=/tmp/prof bench/suites/cold-cpu.ts daily)
import { createAdapters } from '../../src/upstream/registry.ts';
import { buildTestApp, KEYS } from '../../test/helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../../test/helpers/fake-adapter.ts';

const now = Date.UTC(2025, 5, 20, 8, 0, 0);
const { app, adapters } = await buildTestApp({
  now: () => now,
  configure: (config) => {
    config.adapters.sim = { ...config.adapters.sim, syntheticUniverse: 5000 };
  },
  adapters: new Map([['sim', fakeAdapter(createAdapters({ markets: { CN: ['sim'], HK: ['sim'], US: ['sim'] }, overrides: {} }, { sim: { syntheticUniverse: 5000 } }, () => ({ now: () => now })).get('sim')!)]]),
});
const sim = adapters.get('sim') as FakeAdapter;
let next = 1;
const symbol = () => `SIM${String(next++).padStart(4, '0')}.US`;

const only = process.argv[2];
/** BENCH_COLD_SCALE=5: five times the requests per case (a profile then shows requests, not startup). */
const scale = Number(process.env.BENCH_COLD_SCALE ?? 1);

interface Case {
  label: string;
  query: (s: string) => string;
  n: number;
}
const ALL: Case[] = [
  { label: '1000 daily bars, adjust none', query: (s) => `/v1/klines?symbol=${s}&period=1d&count=1000&adjust=none`, n: 40 },
  { label: '1000 daily bars, adjust forward', query: (s) => `/v1/klines?symbol=${s}&period=1d&count=1000&adjust=forward`, n: 40 },
  { label: '1000 one-minute bars', query: (s) => `/v1/klines?symbol=${s}&period=1m&count=1000&adjust=none`, n: 40 },
  { label: '1000 60m bars', query: (s) => `/v1/klines?symbol=${s}&period=60m&count=1000&adjust=none`, n: 10 },
];
const CASES = ALL.filter((c) => only === undefined || c.label.includes(only));

async function request(label: string, url: string): Promise<void> {
  const res = await app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
  if (res.statusCode !== 200) throw new Error(`${label}: ${res.statusCode} ${res.body.slice(0, 200)}`);
}

// Warm every case's code paths (JIT, heap sizing) on other symbols before measuring any, so the
// first case measured pays no more than the others.
for (let round = 0; round < 2; round++) for (const c of CASES) for (let i = 0; i < 10; i++) await request(c.label, c.query(symbol()));

console.log('| cold request (each on a new symbol) | requests | CPU per request | wall per request |\n|---|---|---|---|');
for (const { label, query, n: base } of CASES) {
  const n = Math.max(1, Math.round(base * scale));
  const before = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await request(label, query(symbol()));
  const used = process.cpuUsage(before);
  console.log(`| ${label} | ${n} | ${((used.user + used.system) / 1000 / n).toFixed(1)} ms | ${((performance.now() - t0) / n).toFixed(1)} ms |`);
}
const fetched = sim.log.filter((c) => c.method === 'getCandles').length;
console.log(`\nadapter getCandles calls: ${fetched}`);
await app.close();

// The sim alone (no service): what a cold symbol costs the simulated vendor itself.
const { createSimMarket } = await import('../../adapters/sim/market.ts');
const market = createSimMarket({ syntheticUniverse: 9999 });
let simNext = 6000;
const fresh = () => market.instrument(`SIM${String(simNext++).padStart(4, '0')}.US`)!;
console.log('\n| sim alone, each on a new symbol | calls | CPU per call |\n|---|---|---|');
for (const [label, run, n] of [
  ['full daily history (listing → now)', (inst: ReturnType<typeof fresh>) => market.history(inst, now), 200],
  ['newest 1000 one-minute bars (history included)', (inst: ReturnType<typeof fresh>) => market.minuteCandles(inst, { count: 1000 }, now), 200],
  ['newest 5000 one-minute bars (history included)', (inst: ReturnType<typeof fresh>) => market.minuteCandles(inst, { count: 5000 }, now), 50],
] as const) {
  for (let i = 0; i < 20; i++) run(fresh());
  const calls = Math.max(1, Math.round(n * scale));
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) run(fresh());
  const used = process.cpuUsage(before);
  console.log(`| ${label} | ${calls} | ${((used.user + used.system) / 1000 / calls).toFixed(2)} ms |`);
}

// What a newest-N request asks the vendor for: base bars per output bar, then the shared bucket.
const { baseFetchFor } = await import('../../src/service/candle-plan.ts');
const { bucketCount } = await import('../../src/data/resources/index.ts');
console.log('\n| period × 1000 bars | base bars needed | fetched (bucket) | ratio |\n|---|---|---|---|');
for (const period of ['1m', '5m', '15m', '30m', '60m', '1d', '1w'] as const) {
  const need = baseFetchFor(period, { count: 1000 }).count;
  const fetch = bucketCount(need);
  console.log(`| ${period} | ${need} | ${fetch} | ${(fetch / need).toFixed(3)} |`);
}
