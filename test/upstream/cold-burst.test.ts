// A burst is served at the vendor's pace (issue 27.5): 600 distinct cold candle requests at once
// over three app instances sharing one Redis and one PostgreSQL history store, behind a vendor
// that takes 300 ms per call (the sim behind a fake adapter with a delay). Every request is
// answered 200, every window reached the vendor once, and every instance's circuit is closed at
// the end: no call was started with less deadline left than the vendor needs, no lock wait ran
// inside a vendor call's deadline, and nothing our own queue delayed counted against the vendor.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { SIM_INSTRUMENTS } from '../../adapters/sim/instruments.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createHistoryTier, type HistoryTier } from '../../src/store/index.ts';
import { dropPostgresSchema } from '../../src/store/postgres.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';
import { connectedClient, describeRedis, startPrivateRedis, type PrivateRedis } from '../redis/support.ts';
import { PG_URL } from '../store/harness.ts';

// Real time: the deadlines run from when each request needed its data, as in production.
const now = () => Date.now();
const day = (iso: string) => Date.parse(`${iso}T00:00:00+08:00`);
/** Three disjoint past quarters of each instrument the sim knows: 600 distinct cold windows. */
const QUARTERS = [['2024-01-01', '2024-03-31'], ['2024-04-01', '2024-06-30'], ['2024-07-01', '2024-09-30']].map(([a, b]) => ({ from: day(a), to: day(b) + 86_399_999 }));
const REQUESTS = Array.from({ length: 600 }, (_, i) => {
  const inst = SIM_INSTRUMENTS[i % SIM_INSTRUMENTS.length];
  const q = QUARTERS[Math.floor(i / SIM_INSTRUMENTS.length)];
  return `/v1/klines?symbol=${inst.symbol}&period=1d&adjust=none&count=10000&start_time=${q.from}&end_time=${q.to}`;
});
const schema = `cold_burst_${process.pid}_${Date.now()}`;
let redis: PrivateRedis;
let vendor: FakeAdapter;
const clients: Redis[] = [];
const apps: FastifyInstance[] = [];
const stores: HistoryTier[] = [];

describeRedis('a cold burst over three instances at a 300 ms vendor', () => {
  beforeAll(async () => {
    redis = await startPrivateRedis();
    vendor = fakeAdapter(createSimAdapter({}, { now }), { delayMs: 300 });
    for (let i = 0; i < 3; i++) {
      const metrics = createMetrics();
      const history = await createHistoryTier({
        backend: 'postgres', databaseUrl: PG_URL, postgresSchema: schema, now,
        revision: { dailyBars: 2, minuteBars: 30 }, retentionDays: { '1m': 0, '1d': 0 }, registry: metrics.registry, lockWaitMs: 5000,
      });
      stores.push(history);
      const client = await connectedClient(redis.url, clients);
      const { app } = await buildTestApp({
        now, metrics, history, redis: client, adapters: new Map([['sim', vendor]]),
        configure: (c) => { c.redis.instances = 3; },
      });
      apps.push(app);
    }
  }, 60_000);
  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const store of stores) await store.close();
    for (const c of clients) c.disconnect();
    await redis?.kill();
    await dropPostgresSchema(PG_URL, schema).catch(() => undefined);
  });

  it('600 distinct cold windows at once: all 200, each fetched once, circuits closed', async () => {
    const answers = await Promise.all(REQUESTS.map((url, i) => apps[i % 3].inject({ url, headers: { 'x-api-key': KEYS.demo } })));
    const statuses = new Map<number, number>();
    for (const res of answers) statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    if (process.env.COLD_BURST_PRINT) console.log(JSON.stringify({ statuses: Object.fromEntries(statuses), vendorCalls: vendor.calls.getCandles }));
    expect(Object.fromEntries(statuses)).toEqual({ 200: 600 });
    expect(vendor.calls.getCandles).toBe(600);
    for (const app of apps) expect(app.upstream.router.resilience('sim')?.health().circuit).toBe('closed');
  }, 60_000);
});
