// One fetch per missing range across the fleet (issue 27.3): three app instances on one
// PostgreSQL store (a schema of this run's own) ask at once for overlapping, different windows of
// one series. Each closed bar reaches the vendor once: the fill that holds the series' fleet-wide
// lock fetches its gap, the others re-read the coverage under the lock and fetch only what is
// still missing. Without Redis the lock is a PostgreSQL advisory lock; with Redis it is the Redis
// fill lock with its lease. The control run (no fleet lock) shows the test sees the difference:
// there the instances fetch the same bars several times. Lock waits are in /metrics.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import type { CandleQuery } from '../../adapters/types.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { createFillLock } from '../../src/cache/fill-lock.ts';
import { createMetrics, type Metrics } from '../../src/metrics.ts';
import { trackRedisHealth } from '../../src/redis/health.ts';
import { openHistoryStore, type HistoryStore } from '../../src/store/index.ts';
import { dropPostgresSchema } from '../../src/store/postgres.ts';
import { redisSeriesLock, type SeriesLock } from '../../src/store/series-lock.ts';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';
import { connectedClient, describeRedis, startPrivateRedis, type PrivateRedis } from '../redis/support.ts';
import { PG_URL } from './harness.ts';

const now = () => CN_MORNING;
const day = (iso: string) => Date.parse(`${iso}T00:00:00+08:00`);
const endOf = (iso: string) => day(iso) + 86_400_000 - 1;
/** Overlapping windows of 600519.SH daily bars, all closed (the clock is 2025-06-18). */
const WINDOWS = [
  { from: day('2024-01-01'), to: endOf('2024-12-31') },
  { from: day('2024-07-01'), to: endOf('2025-05-30') },
  { from: day('2023-07-01'), to: endOf('2024-09-30') },
];

/** The vendor behind every instance: the sim, 200 ms slow, recording the bars of each candle call. */
interface RecordingVendor {
  adapter: FakeAdapter;
  fetched: { query: CandleQuery; timestamps: number[] }[];
}

function recordingVendor(): RecordingVendor {
  const adapter = fakeAdapter(createSimAdapter({}, { now }), { delayMs: 200 });
  const fetched: RecordingVendor['fetched'] = [];
  const inner = adapter.getCandles!.bind(adapter);
  adapter.getCandles = async (query, ctx) => {
    const candles = await inner(query, ctx);
    fetched.push({ query, timestamps: candles?.timestamp ?? [] });
    return candles;
  };
  return { adapter, fetched };
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

interface Fleet {
  apps: FastifyInstance[];
  metrics: Metrics[];
  vendor: RecordingVendor;
}

async function fleet(name: string, lockFor?: (i: number, registry: Registry) => Promise<SeriesLock | null>): Promise<Fleet> {
  const schema = `fleet_fill_${name}_${process.pid}_${Date.now()}`;
  cleanups.push(() => dropPostgresSchema(PG_URL, schema));
  const vendor = recordingVendor();
  const apps: FastifyInstance[] = [];
  const metrics: Metrics[] = [];
  for (let i = 0; i < 3; i++) {
    const m = createMetrics();
    const seriesLock = lockFor === undefined ? undefined : await lockFor(i, m.registry);
    const history: HistoryStore = await openHistoryStore({
      backend: 'postgres', databaseUrl: PG_URL, postgresSchema: schema, now,
      revision: { dailyBars: 2, minuteBars: 30 }, retentionDays: { '1m': 0, '1d': 0 }, registry: m.registry,
      seriesLock, lockWaitMs: 5000,
    });
    const { app } = await buildTestApp({ now, metrics: m, history, adapters: new Map([['sim', vendor.adapter]]) });
    cleanups.push(async () => {
      await app.close();
      await history.close();
    });
    apps.push(app);
    metrics.push(m);
  }
  return { apps, metrics, vendor };
}

/** Every window on every instance at once (each instance in its own order). */
async function askAll({ apps }: Fleet): Promise<void> {
  const answers = await Promise.all(apps.flatMap((app, i) => WINDOWS.map((_, j) => {
    const w = WINDOWS[(i + j) % WINDOWS.length];
    return app.inject({
      url: `/v1/klines?symbol=600519.SH&period=1d&adjust=none&count=10000&start_time=${w.from}&end_time=${w.to}`,
      headers: { 'x-api-key': KEYS.demo },
    });
  })));
  for (const res of answers) expect(res.statusCode, res.body).toBe(200);
  // Every instance answers each window with the same bars.
  const byUrl = new Map<string, Set<string>>();
  for (const res of answers) {
    const key = JSON.stringify(res.json().data.timestamp.slice(0, 1));
    byUrl.set(key, (byUrl.get(key) ?? new Set()).add(res.body));
  }
  for (const bodies of byUrl.values()) expect(bodies.size).toBe(1);
}

/** Vendor bars fetched in total, distinct bars, and calls that fetched a bar some other call had. */
function tally(vendor: RecordingVendor): { calls: number; bars: number; distinct: number; repeated: number } {
  const seen = new Set<number>();
  let bars = 0;
  let repeated = 0;
  for (const { timestamps } of vendor.fetched) {
    bars += timestamps.length;
    if (timestamps.some((t) => seen.has(t))) repeated += 1;
    for (const t of timestamps) seen.add(t);
  }
  return { calls: vendor.fetched.length, bars, distinct: seen.size, repeated };
}

async function lockWaits(metrics: Metrics[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of metrics) {
    const text = await m.registry.metrics();
    for (const line of text.split('\n')) {
      const match = /^mdqs_history_lock_waits_total\{mechanism="(\w+)",outcome="(\w+)"\} (\d+)/.exec(line);
      if (match) out[`${match[1]}:${match[2]}`] = (out[`${match[1]}:${match[2]}`] ?? 0) + Number(match[3]);
    }
  }
  return out;
}

describe('overlapping fills on three instances sharing one PostgreSQL store', () => {
  it('without Redis (PostgreSQL advisory lock): each missing range is fetched once', async () => {
    const f = await fleet('pg');
    await askAll(f);
    const t = tally(f.vendor);
    console.log(`FIGURE overlapping fills on 3 instances, PostgreSQL advisory lock: ${t.calls} vendor requests, ${t.repeated} repeating bars; bars fetched ÷ distinct = ${t.bars} ÷ ${t.distinct} = ${(t.bars / t.distinct).toFixed(2)}; lock waits ${JSON.stringify(await lockWaits(f.metrics))}`);
    expect(t.repeated).toBe(0);
    expect(t.bars).toBe(t.distinct);
    // The union of the windows: 2023-07-01 .. 2025-05-30, about 470 trading days.
    expect(t.distinct).toBeGreaterThan(440);
    expect(t.calls).toBeLessThanOrEqual(WINDOWS.length);
    const waits = await lockWaits(f.metrics);
    expect(waits['postgres:acquired']).toBe(t.calls);
    expect((waits['postgres:filled_by_other'] ?? 0) + (waits['postgres:acquired'] ?? 0)).toBeGreaterThanOrEqual(t.calls);
    expect(waits['postgres:deadline'] ?? 0).toBe(0);
    // The store now answers every window on every instance without the vendor.
    await askAll(f);
    expect(f.vendor.fetched).toHaveLength(t.calls);
  });

  it('control, no fleet lock: the same bars are fetched more than once', async () => {
    const f = await fleet('control', async () => null);
    await askAll(f);
    const t = tally(f.vendor);
    console.log(`FIGURE overlapping fills on 3 instances, no fleet lock (control): ${t.calls} vendor requests, ${t.repeated} repeating bars; bars fetched ÷ distinct = ${t.bars} ÷ ${t.distinct} = ${(t.bars / t.distinct).toFixed(2)}; lock waits ${JSON.stringify(await lockWaits(f.metrics))}`);
    expect(t.repeated).toBeGreaterThan(0);
    expect(t.bars).toBeGreaterThan(t.distinct);
  });
});

describeRedis('overlapping fills on three instances with Redis: the Redis fill lock', () => {
  let redis: PrivateRedis;
  const clients: Redis[] = [];
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await redis?.kill();
  });

  it('each missing range is fetched once, the lock held through Redis', async () => {
    redis = await startPrivateRedis();
    const f = await fleet('redis', async () => {
      const client = await connectedClient(redis.url, clients);
      const subscriber = await connectedClient(redis.url, clients);
      const health = trackRedisHealth(client, { now });
      const lock = createFillLock({ redis: client, subscriber, prefix: 'mdqs:store:', leaseMs: 1000, now: () => Date.now(), health });
      cleanups.push(async () => health.stop());
      return redisSeriesLock(lock, () => Date.now());
    });
    await askAll(f);
    const t = tally(f.vendor);
    console.log(`FIGURE overlapping fills on 3 instances, Redis fill lock: ${t.calls} vendor requests, ${t.repeated} repeating bars; bars fetched ÷ distinct = ${t.bars} ÷ ${t.distinct} = ${(t.bars / t.distinct).toFixed(2)}; lock waits ${JSON.stringify(await lockWaits(f.metrics))}`);
    expect(t.repeated).toBe(0);
    expect(t.bars).toBe(t.distinct);
    const waits = await lockWaits(f.metrics);
    expect(waits['redis:acquired']).toBe(t.calls);
    expect(waits['redis:unavailable'] ?? 0).toBe(0);
  });
});
