// The access plugin on its own (src/access/plugin.ts) with the config keys it reads: while Redis is
// down each instance admits max ÷ redis.instances and says so in X-RateLimit-Limit.
import Fastify from 'fastify';
import { afterAll, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { registerAccess } from '../../src/access/plugin.ts';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { sendError, toAppError } from '../../src/http/error-handler.ts';
import { createMetrics } from '../../src/metrics.ts';
import { connectedClient, describeRedis, startPrivateRedis } from './support.ts';

const clients: Redis[] = [];
afterAll(() => {
  for (const c of clients) c.disconnect();
});

async function instance(redis: Redis, config: { instances: number; failuresPerMinute: number }) {
  const app = Fastify({ logger: false });
  app.setErrorHandler((error, request, reply) => sendError(request, reply, toAppError(error)));
  const keys = new KeyStore(parseKeysFile({
    plans: { p: { markets: ['CN'], features: ['quotes'], rate_limit: { max: 9, window_ms: 60_000 }, max_symbols: 1 } },
    keys: [{ id: 'k', plan: 'p', sha256: sha256Hex('plugin-key') }],
  }));
  await registerAccess(app, {
    keys, metrics: createMetrics(), redis, now: Date.now,
    config: { redis: { url: 'x', instances: config.instances, commandTimeoutMs: 250 }, auth: { failuresPerMinute: config.failuresPerMinute } },
  });
  app.get('/v1/thing', async () => ({ ok: true }));
  app.get('/open', { config: { public: true } }, async () => ({ ok: true }));
  await app.ready();
  return app;
}

describeRedis('access plugin', () => {
  it('Redis down: max ÷ instances per instance, with the share in X-RateLimit-Limit; config budget for wrong keys', async () => {
    const server = await startPrivateRedis();
    try {
      const app = await instance(await connectedClient(server.url, clients, 250), { instances: 3, failuresPerMinute: 2 });
      const get = (key: string) => app.inject({ url: '/v1/thing', headers: { 'x-api-key': key } });
      expect((await get('plugin-key')).headers['x-ratelimit-limit']).toBe('9');
      await server.kill();
      const statuses: number[] = [];
      let limit: unknown;
      for (let i = 0; i < 5; i += 1) {
        const res = await get('plugin-key');
        statuses.push(res.statusCode);
        limit = res.headers['x-ratelimit-limit'];
      }
      // 9 ÷ 3 = 3 on this instance's own counter (the one shared admission is not known to it).
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(limit).toBe('3');
      // failuresPerMinute 2 (÷ 3 → at least 1 while degraded).
      expect([(await get('nope')).statusCode, (await get('nope')).statusCode]).toEqual([401, 429]);
      expect((await app.inject({ url: '/open' })).statusCode).toBe(200);
      await app.close();
    } finally {
      await server.kill();
    }
  });
});

describeRedis('access plugin: the synchronous decision for the cache-hit fast path', () => {
  it('counts in the same bucket, remembers the address, and steps aside while an address is blocked', async () => {
    const app = Fastify({ logger: false });
    app.setErrorHandler((error, request, reply) => sendError(request, reply, toAppError(error)));
    const keys = new KeyStore(parseKeysFile({
      plans: { p: { markets: ['CN'], features: ['quotes'], rate_limit: { max: 9, window_ms: 60_000 }, max_symbols: 1 } },
      keys: [{ id: 'k', plan: 'p', sha256: sha256Hex('plugin-key') }],
    }));
    const access = await registerAccess(app, { keys, metrics: createMetrics(), now: () => 1_000_000, config: { redis: { url: '' }, auth: { failuresPerMinute: 1 } } });
    app.get('/v1/thing', async () => ({ ok: true }));
    await app.ready();
    try {
      const entry = keys.lookup('plugin-key')!;
      expect(access.limitSync(entry, '192.0.2.9')?.remaining).toBe(8);
      const viaHook = await app.inject({ url: '/v1/thing', remoteAddress: '192.0.2.50', headers: { 'x-api-key': 'plugin-key' } });
      expect(viaHook.headers['x-ratelimit-remaining']).toBe('7');
      // 192.0.2.9 gets blocked for wrong keys: the fast path now steps aside...
      for (const expected of [401, 429]) {
        expect((await app.inject({ url: '/v1/thing', remoteAddress: '192.0.2.9', headers: { 'x-api-key': 'wrong' } })).statusCode).toBe(expected);
      }
      expect(access.limitSync(entry, '192.0.2.9')).toBeUndefined();
      // ...and the normal path still serves the key the fast path saw from that address.
      expect((await app.inject({ url: '/v1/thing', remoteAddress: '192.0.2.9', headers: { 'x-api-key': 'plugin-key' } })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
