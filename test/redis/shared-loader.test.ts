// Two app instances sharing one Redis behave as one service (issue 10): 100 concurrent cold
// requests spread over both make one upstream call in total; a fill on one is a Redis-tier hit on
// the other, for data entries and for finished responses.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';
import { connectedClient, describeRedis, sharedUrl } from './support.ts';

const url = sharedUrl(15);
const clients: Redis[] = [];
const apps: FastifyInstance[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
  for (const c of clients) c.disconnect();
});

async function instance(vendor: FakeAdapter): Promise<FastifyInstance> {
  const redis = await connectedClient(url, clients);
  const { app } = await buildTestApp({ now: () => CN_MORNING, redis, adapters: new Map([['sim', vendor]]) });
  apps.push(app);
  return app;
}

describeRedis('instances sharing Redis', () => {
  let vendor: FakeAdapter;
  let a: FastifyInstance;
  let b: FastifyInstance;
  beforeAll(async () => {
    const flush = await connectedClient(url, clients);
    await flush.flushdb();
    // One vendor behind both instances, so its call count is the total upstream traffic.
    vendor = fakeAdapter(createSimAdapter({}, { now: () => CN_MORNING }), { delayMs: 150 });
    a = await instance(vendor);
    b = await instance(vendor);
  });

  it('100 concurrent cold requests over two instances make one upstream call', async () => {
    const url = '/v1/klines?symbol=600036.SH&period=1d&count=20&adjust=none';
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) =>
      (i % 2 === 0 ? a : b).inject({ url, headers: { 'x-api-key': KEYS.demo } })));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(100).fill(200));
    expect(new Set(answers.map((r) => r.body)).size).toBe(1);
    expect(vendor.calls.getCandles).toBe(1);
  });

  it('a fill on one instance is a Redis-tier hit on the other', async () => {
    const before = vendor.count();
    const first = await a.inject({ url: '/v1/quotes?symbols=601988.SH', headers: { 'x-api-key': KEYS.demo } });
    expect(first.headers['x-cache']).toBe('MISS');
    const other = await b.inject({ url: '/v1/quotes?symbols=601988.SH', headers: { 'x-api-key': KEYS.demo } });
    expect(other.statusCode).toBe(200);
    expect(other.headers['x-cache']).toBe('HIT');
    expect(other.headers['x-cache-tier']).toBe('redis');
    expect(other.body).toBe(first.body);
    expect(vendor.count()).toBe(before + 1);
    // Data entries too: another window over bars only instance a fetched is new to both response
    // caches, and instance b answers it from the Redis data tier.
    await a.inject({ url: '/v1/klines?symbol=601166.SH&period=1d&count=20&adjust=none', headers: { 'x-api-key': KEYS.demo } });
    const window = await b.inject({ url: '/v1/klines?symbol=601166.SH&period=1d&count=30&adjust=none', headers: { 'x-api-key': KEYS.demo } });
    expect(window.statusCode).toBe(200);
    expect(window.json().data.timestamp).toHaveLength(30);
    expect(window.headers['x-cache']).toBe('HIT');
    expect(window.headers['x-cache-tier']).toBe('redis');
    expect(vendor.count()).toBe(before + 2);
  });
});
