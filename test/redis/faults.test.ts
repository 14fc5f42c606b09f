// Issue 14.1 / 10.5: a Redis of the test's own (free port, stopped by PID). Frozen (SIGSTOP) or
// killed: keyed requests keep succeeding and none waits past the deadline, health and metrics say
// down; back: shared limits resume without a restart.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { redisHealth } from '../../src/redis/health.ts';
import { buildTestApp } from '../helpers/app.ts';
import { connectedClient, describeRedis, startPrivateRedis, waitUntil, type PrivateRedis } from './support.ts';

// What a keyed request may take while Redis misbehaves: one command timeout (250 ms) plus the
// request itself, with room for a loaded CI machine; far below the 5 s upstream deadline (a hang
// would be unbounded: before the fix it lasted until SIGCONT).
const DEADLINE_MS = 2000;
const URL = '/v1/quotes?symbols=600519.SH';

describeRedis('Redis faults', () => {
  let server: PrivateRedis;
  const clients: Redis[] = [];
  let apps: FastifyInstance[] = [];
  const plansMax = 5;
  beforeAll(async () => {
    server = await startPrivateRedis();
    const keys = new KeyStore(parseKeysFile({
      plans: { p: { markets: ['CN'], features: ['quotes'], rate_limit: { max: plansMax, window_ms: 60_000 }, max_symbols: 10 } },
      keys: [{ id: 'k', plan: 'p', sha256: sha256Hex('fault-key') }],
    }));
    apps = await Promise.all([0, 1].map(async () => (await buildTestApp({ keys, redis: await connectedClient(server.url, clients, 250) })).app));
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const c of clients) c.disconnect();
    await server.kill();
  });

  const timed = async (app: FastifyInstance, url: string, key?: string) => {
    const started = performance.now();
    const res = await app.inject({ url, headers: key ? { 'x-api-key': key } : {} });
    return { res, ms: performance.now() - started };
  };
  const redisUp = async (app: FastifyInstance) => /mdqs_redis_up 1\b/.test((await app.inject({ url: '/metrics' })).body);

  it('frozen (SIGSTOP): every request answers in time, counted per instance; readiness and metrics say so', async () => {
    expect(await redisUp(apps[0])).toBe(true);
    server.freeze();
    const results = await Promise.all([0, 1, 0, 1, 0, 1].map((i) => timed(apps[i], URL, 'fault-key')));
    for (const { res, ms } of results) {
      expect(res.statusCode).toBe(200);
      expect(ms).toBeLessThan(DEADLINE_MS);
    }
    const ready = await timed(apps[0], '/readyz');
    expect(ready.ms).toBeLessThan(DEADLINE_MS);
    expect(ready.res.json().redis).not.toBe('ok');
    // The readiness policy: Redis is shared by every instance, so its fault degrades, never 503.
    expect(ready.res.statusCode).toBe(200);
    expect(ready.res.json().status).toBe('degraded');
    expect(ready.res.json().degraded).toContainEqual(expect.objectContaining({ name: 'redis' }));
    expect(await redisUp(apps[0])).toBe(false);
    expect(redisHealth(clients[0])?.up).toBe(false);
    // Per instance: 5 more on each would be over a shared limit of 5 but each instance counts alone.
    const more = await Promise.all([0, 1, 0, 1].map((i) => timed(apps[i], URL, 'fault-key')));
    expect(more.map((r) => r.res.statusCode)).toEqual([200, 200, 200, 200]);
    for (const { ms } of more) expect(ms).toBeLessThan(DEADLINE_MS);
  });

  it('thawed: Redis is up again without a restart and the limit is shared again', async () => {
    server.thaw();
    await waitUntil(async () => (await redisUp(apps[0])) && (await redisUp(apps[1])), 'redis up again');
    const admin = await connectedClient(server.url, clients);
    await admin.flushall();
    const statuses = [];
    for (let i = 0; i < 7; i += 1) statuses.push((await apps[i % 2].inject({ url: URL, headers: { 'x-api-key': 'fault-key' } })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect((await apps[1].inject({ url: '/readyz' })).json().redis).toBe('ok');
  });

  it('killed: requests keep succeeding fast; restarted on the same port: shared again', async () => {
    await server.kill();
    const results = await Promise.all([0, 1, 0, 1].map((i) => timed(apps[i], URL, 'fault-key')));
    for (const { res, ms } of results) {
      expect(res.statusCode).not.toBe(500);
      expect([200, 429]).toContain(res.statusCode);
      expect(ms).toBeLessThan(DEADLINE_MS);
    }
    await waitUntil(async () => !(await redisUp(apps[0])), 'redis down');
    await server.restart();
    await waitUntil(async () => (await redisUp(apps[0])) && (await redisUp(apps[1])), 'redis back', 10_000);
    const statuses = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await apps[i % 2].inject({ url: URL, headers: { 'x-api-key': 'fault-key' } })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});
