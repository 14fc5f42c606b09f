// A burst is served at the vendor's pace (issue 27.5): 600 distinct cold candle requests at once (600
// symbols, one past quarter each)
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
import type { Adapter, CandleQuery } from '../../adapters/types.ts';
import type { Candles, SymbolRef } from '../../src/domain.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { createMetrics } from '../../src/metrics.ts';
import { openHistoryStore, type HistoryStore } from '../../src/store/index.ts';
import { dropPostgresSchema } from '../../src/store/postgres.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';
import { connectedClient, describeRedis, startPrivateRedis, type PrivateRedis } from '../redis/support.ts';
import { PG_URL } from '../store/harness.ts';

// Real time: the deadlines run from when each request needed its data, as in production.
const now = () => Date.now();
const day = (iso: string) => Date.parse(`${iso}T00:00:00+08:00`);
/**
 * 600 distinct cold series (600000.SH … 600599.SH), one past quarter each. The sim knows 121 CN
 * instruments: the vendor answers each symbol with the bars of one of them (contention between
 * windows of one series is test/store/fleet-fill.test.ts's subject, not this one's).
 */
const SYMBOLS = Array.from({ length: 600 }, (_, i) => `${600000 + i}.SH`);
const CN = SIM_INSTRUMENTS.filter((i) => i.region === 'CN');
const QUARTER = { from: day('2024-04-01'), to: day('2024-06-30') + 86_399_999 };
const REQUESTS = SYMBOLS.map((symbol) => `/v1/klines?symbol=${symbol}&period=1d&adjust=none&count=10000&start_time=${QUARTER.from}&end_time=${QUARTER.to}`);
const schema = `cold_burst_${process.pid}_${Date.now()}`;
let redis: PrivateRedis;
let vendor: FakeAdapter;
const clients: Redis[] = [];
const apps: FastifyInstance[] = [];
const stores: HistoryStore[] = [];

describeRedis('a cold burst over three instances at a 300 ms vendor', () => {
  beforeAll(async () => {
    redis = await startPrivateRedis();
    // The sim computes each stand-in's quarter once (the vendor's own CPU is not what is
    // measured); the fake adds the 300 ms, records the call and honours the deadline signal.
    const sim = createSimAdapter({}, { now });
    const computed = new Map<string, Promise<Candles | undefined>>();
    const cheap: Adapter = Object.assign(Object.create(sim) as Adapter, {
      async getCandles(query: CandleQuery): Promise<Candles | undefined> {
        const standIn = CN[Number(query.symbol.code) % CN.length].symbol;
        let found = computed.get(standIn);
        if (found === undefined) {
          found = sim.getCandles!({ ...query, symbol: parseSymbol(standIn) as SymbolRef });
          computed.set(standIn, found);
        }
        const c = await found;
        return c === undefined ? undefined : Object.fromEntries(Object.entries(c).map(([k, v]) => [k, Array.isArray(v) ? [...v] : v])) as unknown as Candles;
      },
    });
    vendor = fakeAdapter(cheap, { delayMs: 300 });
    for (let i = 0; i < 3; i++) {
      const metrics = createMetrics();
      const history = await openHistoryStore({
        backend: 'postgres', databaseUrl: PG_URL, postgresSchema: schema, now,
        revision: { dailyBars: 2, minuteBars: 30 }, retentionDays: { '1m': 0, '1d': 0 }, registry: metrics.registry, lockWaitMs: 5000,
      });
      stores.push(history);
      const client = await connectedClient(redis.url, clients);
      const { app } = await buildTestApp({
        now, metrics, history, redis: client, adapters: new Map([['sim', vendor]]),
        // The default 16 slots: 200 calls per instance at 300 ms queue for 3.75 s of the 5 s deadline.
        configure: (c) => {
          c.redis.instances = 3;
          if (process.env.COLD_BURST_CONCURRENCY !== undefined) c.upstream.concurrency = Number(process.env.COLD_BURST_CONCURRENCY);
        },
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
    const burstStarted = performance.now();
    const answers = await Promise.all(REQUESTS.map((url, i) => apps[i % 3].inject({ url, headers: { 'x-api-key': KEYS.demo } })));
    const statuses = new Map<number, number>();
    for (const res of answers) statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    console.log(`FIGURE cold burst, 600 distinct windows over 3 instances at a 300 ms vendor: ${JSON.stringify(Object.fromEntries(statuses))} (success ${((statuses.get(200) ?? 0) / 6).toFixed(1)} %), ${vendor.calls.getCandles} vendor calls, ${Math.round(performance.now() - burstStarted)} ms`);
    const failures = new Map<string, number>();
    answers.forEach((res, i) => {
      if (res.statusCode === 200) return;
      const body = res.json() as { error?: string; message?: string };
      const what = `instance ${i % 3}: ${res.statusCode} ${body.error}: ${String(body.message).replace(/\d\d(?= ms)/g, 'NN')}`;
      failures.set(what, (failures.get(what) ?? 0) + 1);
    });
    if (failures.size > 0) console.log(`failures: ${JSON.stringify([...failures])}`);
    expect(Object.fromEntries(statuses)).toEqual({ 200: 600 });
    expect(vendor.calls.getCandles).toBe(600);
    for (const app of apps) expect(app.upstream.router.resilience('sim')?.health().circuit).toBe('closed');
  }, 60_000);
});
