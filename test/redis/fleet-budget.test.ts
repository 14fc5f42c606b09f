// The fleet-wide vendor quota (issue 27): three app instances on one Redis, each with the real
// TickFlow adapter on the real HTTP layer (productionDeps), in front of one fake vendor: a local
// HTTP server that answers with a captured TickFlow quotes response and records the arrival time of
// every request. Budget 30 per 10 s, 300 cold requests over 20 s → the vendor never sees more than
// 30 in any 10 s, although each instance alone would allow 30; a vendor 429 with Retry-After
// pauses every instance; without Redis (or while it is down) each process keeps max ÷ processes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixture } from '../../mocks/handlers/support.ts';
import { loadDefaultConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { createMetrics, upstreamSink } from '../../src/metrics.ts';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { createFleetBudget, fleetGuardMs } from '../../src/upstream/budget.ts';
import { createRedisClient } from '../../src/redis/connection.ts';
import { trackRedisHealth } from '../../src/redis/health.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { connectedClient, describeRedis, startPrivateRedis, waitUntil, type PrivateRedis } from './support.ts';

/** The fleet's Redis: a redis-server of this test's own. */
let shared: PrivateRedis | undefined;
const MAX = 30;
const WINDOW_MS = 10_000;
const clients: Redis[] = [];
const apps: FastifyInstance[] = [];

interface Vendor {
  baseUrl: string;
  /** Arrival times (Date.now()) of every request. */
  arrivals: number[];
  /** Answer the next n requests with 429 and this Retry-After. */
  throttleNext(n: number, retryAfterSeconds: number): void;
  close(): Promise<void>;
}

async function startVendor(): Promise<Vendor> {
  // A real TickFlow answer (mocks/fixtures/tickflow/quotes-ok.json); symbols it does not list are
  // unknown to the adapter, which does not matter here: every request is counted at arrival.
  const body = JSON.stringify(fixture('tickflow', 'quotes-ok'));
  const arrivals: number[] = [];
  let throttled = 0;
  let retryAfter = 1;
  const server: Server = createServer((req, res) => {
    arrivals.push(Date.now());
    req.resume();
    if (throttled > 0) {
      throttled -= 1;
      res.writeHead(429, { 'retry-after': String(retryAfter), 'content-type': 'application/json' });
      res.end(JSON.stringify(fixture('tickflow', 'error-rate-limited')));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    throttleNext(n, seconds) {
      throttled = n;
      retryAfter = seconds;
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** The most requests that arrived within any `windowMs` (a window starting at each arrival). */
function busiestWindow(arrivals: number[], windowMs: number): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let best = 0;
  let j = 0;
  for (let i = 0; i < sorted.length; i += 1) {
    while (sorted[i] - sorted[j] >= windowMs) j += 1;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

async function instance(vendor: Vendor, processes: number): Promise<{ app: FastifyInstance; metrics: ReturnType<typeof createMetrics> }> {
  const redis = await connectedClient(shared!.url, clients);
  const metrics = createMetrics();
  const now = Date.now;
  const deps = productionDeps(now, upstreamSink(metrics), undefined, { redis, registry: metrics.registry, processes });
  const configure = (config: Config) => {
    config.routing.markets.CN = ['tickflow'];
    config.adapters.tickflow = {
      baseUrl: vendor.baseUrl, apiKey: 'k',
      http: { timeoutMs: 2000, retry: { maxRetries: 0, baseDelayMs: 20 }, budget: { max: MAX, windowMs: WINDOW_MS }, breaker: { failureThreshold: 1000, openMs: 1000 } },
    };
    config.redis.instances = processes;
  };
  const config = loadDefaultConfig();
  configure(config);
  const adapters = createAdapters(config.routing, config.adapters, deps);
  const { app } = await buildTestApp({ now, redis, metrics, upstreamClients: deps.clients, configure, adapters });
  apps.push(app);
  return { app, metrics };
}

function metricSum(text: string, name: string, filter = ''): number {
  return [...text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))]
    .filter((m) => m[1].includes(filter))
    .reduce((sum, m) => sum + Number(m[2]), 0);
}

afterAll(async () => {
  for (const app of apps) await app.close();
  for (const c of clients) c.disconnect();
});

describeRedis('the vendor quota holds for the fleet', () => {
  let vendor: Vendor;
  let fleet: Array<{ app: FastifyInstance; metrics: ReturnType<typeof createMetrics> }>;
  beforeAll(async () => {
    shared = await startPrivateRedis();
    vendor = await startVendor();
    fleet = [await instance(vendor, 3), await instance(vendor, 3), await instance(vendor, 3)];
  });
  afterAll(async () => {
    await vendor?.close();
    for (const app of apps.splice(0)) await app.close();
    for (const c of clients.splice(0)) c.disconnect();
    await shared?.kill();
  });

  it('budget 30 per 10 s, 300 cold requests over 20 s on three instances: never more than 30 in any 10 s at the vendor', async () => {
    const started = Date.now();
    const statuses: number[] = [];
    const pending: Array<Promise<void>> = [];
    for (let i = 0; i < 300; i += 1) {
      // 15 a second, round robin; each symbol asked once: every request is cold.
      const due = started + Math.floor(i * (20_000 / 300));
      await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
      const { app } = fleet[i % 3];
      pending.push(app.inject({ url: `/v1/quotes?symbols=${600000 + i}.SH`, headers: { 'x-api-key': KEYS.demo } }).then((res) => {
        statuses.push(res.statusCode);
        if (res.statusCode === 503) {
          expect(res.json()).toMatchObject({ error: 'UPSTREAM_UNAVAILABLE' });
          expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        }
      }));
    }
    await Promise.all(pending);
    const busiest = busiestWindow(vendor.arrivals, WINDOW_MS);
    process.stdout.write(`QUOTA FIGURE: busiest 10 s window ${busiest} of budget ${MAX} (${(busiest / MAX).toFixed(2)}); ${vendor.arrivals.length} vendor requests for 300 cold requests over 20 s on 3 instances, ${statuses.filter((x) => x === 503).length} answered 503 with Retry-After\n`);
    expect(busiest).toBeLessThanOrEqual(MAX);
    // The fleet spent its budget in both windows (so the limit, not idleness, kept it at 30) …
    expect(vendor.arrivals.length).toBeGreaterThan(MAX + MAX / 2);
    expect(busiest).toBe(MAX);
    // … and every request that did not reach the vendor was refused, not lost.
    expect(statuses.filter((s) => s === 503).length).toBe(300 - vendor.arrivals.length);
    const texts = await Promise.all(fleet.map(async ({ metrics }) => metrics.registry.metrics()));
    const taken = texts.map((t) => metricSum(t, 'mdqs_upstream_budget_taken_total', 'scope="fleet"'));
    // Each instance sent some; together exactly what the vendor saw.
    for (const n of taken) expect(n).toBeGreaterThan(0);
    expect(taken.reduce((a, b) => a + b, 0)).toBe(vendor.arrivals.length);
    expect(texts.reduce((sum, t) => sum + metricSum(t, 'mdqs_upstream_budget_refused_total', 'reason="deadline"'), 0)).toBe(300 - vendor.arrivals.length);
    // Some requests found the window full and waited (within their 2 s deadline) for a slot.
    expect(texts.reduce((sum, t) => sum + metricSum(t, 'mdqs_upstream_budget_wait_seconds_count', 'adapter="tickflow"'), 0)).toBeGreaterThan(0);
    // /readyz shows the fleet budget per adapter.
    const ready = (await fleet[0].app.inject({ url: '/readyz' })).json();
    expect(ready.adapters.tickflow.budget).toMatchObject({ scope: 'fleet', max: MAX, window_ms: WINDOW_MS });
    expect(ready.adapters.tickflow.budget.taken).toBe(taken[0]);
  }, 60_000);

  it('a vendor 429 with Retry-After pauses every instance', async () => {
    // A fresh window for this test.
    await new Promise((r) => setTimeout(r, WINDOW_MS + fleetGuardMs(WINDOW_MS)));
    const before = vendor.arrivals.length;
    vendor.throttleNext(1, 3);
    const first = await fleet[0].app.inject({ url: '/v1/quotes?symbols=601000.SH', headers: { 'x-api-key': KEYS.demo } });
    expect(first.statusCode).toBe(503);
    expect(first.headers['retry-after']).toBe('3');
    // The other instances do not call the vendor while it asked us to wait.
    for (const [i, { app }] of fleet.entries()) {
      const res = await app.inject({ url: `/v1/quotes?symbols=${601001 + i}.SH`, headers: { 'x-api-key': KEYS.demo } });
      expect(res.statusCode).toBe(503);
      expect(res.json().details).toMatchObject({ adapter: 'tickflow', budget: 'paused' });
    }
    expect(vendor.arrivals.length).toBe(before + 1);
    const ready = (await fleet[2].app.inject({ url: '/readyz' })).json();
    expect(ready.adapters.tickflow.budget.paused_until).toBeDefined();
    await waitUntil(async () => (await fleet[1].app.inject({ url: '/v1/quotes?symbols=601010.SH', headers: { 'x-api-key': KEYS.demo } })).statusCode === 200, 'the pause to end', 6000);
    expect(vendor.arrivals.length).toBe(before + 2);
  }, 30_000);
});

describeRedis('without Redis, or while it is down, each process keeps its share', () => {
  it('max ÷ processes per process, local scope; the fleet budget again once Redis is back', async () => {
    const alone = createFleetBudget({ adapterId: 'v', max: MAX, windowMs: WINDOW_MS, now: Date.now, processes: 3 });
    const decisions = await Promise.all(Array.from({ length: 12 }, () => alone.take()));
    expect(decisions.filter((d) => d.ok)).toHaveLength(10);
    expect(decisions.every((d) => d.scope === 'local')).toBe(true);
    expect(alone.state()).toMatchObject({ scope: 'local', max: 10, remaining: 0 });

    const own = await startPrivateRedis();
    const redis = createRedisClient(own.url, { commandTimeoutMs: 500 });
    clients.push(redis);
    const health = trackRedisHealth(redis, { probeIntervalMs: 100 });
    try {
      await health.settled(5000);
      const budget = createFleetBudget({ adapterId: 'v', max: MAX, windowMs: WINDOW_MS, now: Date.now, redis, health, timeoutMs: 500, processes: 3 });
      expect((await budget.take()).scope).toBe('fleet');
      await own.kill();
      await waitUntil(async () => !health.up, 'Redis known down');
      const down = await Promise.all(Array.from({ length: 12 }, () => budget.take()));
      expect(down.filter((d) => d.ok)).toHaveLength(10);
      expect(down.every((d) => d.scope === 'local')).toBe(true);
      await own.restart();
      await waitUntil(async () => health.up, 'Redis back', 10_000);
      const back = await budget.take();
      expect(back).toMatchObject({ ok: true, scope: 'fleet' });
    } finally {
      health.stop();
      await own.kill();
    }
  }, 30_000);
});
