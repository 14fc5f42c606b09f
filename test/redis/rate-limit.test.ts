// Exact shared rate limits (issue 10.2) on real Redis: the sliding-window log in Lua, the in-process
// twin with the same semantics, the per-instance share while Redis is down, and app instances
// that share one bucket per key with identical 429s.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createLocalLimiter, createRedisLimiter, createSharedLimiter, type Limiter } from '../../src/access/rate-limit.ts';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildTestApp } from '../helpers/app.ts';
import { connectedClient, describeRedis, sharedUrl } from './support.ts';

const URL_DB = sharedUrl(9);
const clients: Redis[] = [];
const client = () => connectedClient(URL_DB, clients);

afterAll(() => {
  for (const c of clients) c.disconnect();
});

function keyStore(max: number, windowMs = 60_000): KeyStore {
  return new KeyStore(parseKeysFile({
    plans: { p: { markets: ['CN', 'HK', 'US'], features: ['quotes'], rate_limit: { max, window_ms: windowMs }, max_symbols: 10 } },
    keys: [{ id: 'k1', plan: 'p', sha256: sha256Hex('key-one') }, { id: 'k2', plan: 'p', sha256: sha256Hex('key-two') }],
  }));
}

describeRedis('the sliding-window log', () => {
  it('in process: max in any window, the oldest admission frees the next slot, refusals never count', async () => {
    let now = 1_000_000;
    const limiter = createLocalLimiter({ now: () => now });
    const seen: Array<[boolean, number, number, number]> = [];
    const take = async () => {
      const d = (await limiter.consume('b', 3, 10_000))!;
      seen.push([d.allowed, d.remaining, d.resetMs, d.retryAfterMs]);
    };
    await take(); // t = 0
    now += 4000;
    await take(); // t = 4 s
    await take();
    await take(); // refused: the oldest leaves at t = 10 s
    now += 5999;
    await take(); // t = 9.999 s: still refused
    now += 1;
    await take(); // t = 10 s: the first left, one slot
    await take(); // refused until t = 14 s
    expect(seen).toEqual([
      [true, 2, 10_000, 0],
      [true, 1, 6000, 0],
      [true, 0, 6000, 0],
      [false, 0, 6000, 6000],
      [false, 0, 1, 1],
      [true, 0, 4000, 0],
      [false, 0, 4000, 4000],
    ]);
    // No window of 10 s anywhere holds more than 3: at a window edge nothing extra gets in.
    expect(await limiter.peek('b', 10_000)).toBe(3);
  });

  it('in Redis: the same decisions, one key per bucket that expires with the window', async () => {
    const redis = await client();
    await redis.flushdb();
    const limiter = createRedisLimiter({ redis, prefix: 'rl:', timeoutMs: 1000 });
    const decisions = [];
    for (let i = 0; i < 5; i += 1) decisions.push((await limiter.consume('b', 3, 60_000))!);
    expect(decisions.map((d) => [d.allowed, d.remaining, d.source])).toEqual([
      [true, 2, 'redis'], [true, 1, 'redis'], [true, 0, 'redis'], [false, 0, 'redis'], [false, 0, 'redis'],
    ]);
    expect(decisions[3].retryAfterMs).toBeGreaterThan(59_000);
    expect(decisions[3].retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(await redis.keys('rl:*')).toEqual(['rl:{b}']);
    expect(await redis.llen('rl:{b}')).toBe(3);
    const ttl = await redis.pttl('rl:{b}');
    expect(ttl).toBeGreaterThan(59_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('in Redis: 300 concurrent requests over three clients admit exactly the limit', async () => {
    const redis = await Promise.all([client(), client(), client()]);
    await redis[0].flushdb();
    const limiters = redis.map((r) => createRedisLimiter({ redis: r, prefix: 'rl:', timeoutMs: 5000 }));
    const decisions = await Promise.all(Array.from({ length: 300 }, (_, i) => limiters[i % 3].consume('burst', 77, 60_000)));
    expect(decisions.filter((d) => d!.allowed)).toHaveLength(77);
    expect(decisions.every((d) => d !== undefined)).toBe(true);
  });

  it('Redis down: each instance admits max ÷ instances on its own counter; back: shared again', async () => {
    let down = true;
    const redisLimiter: Limiter = {
      consume: async (b, m, w) => (down ? undefined : { allowed: true, limit: m, remaining: m - 1, resetMs: w, retryAfterMs: 0, source: 'redis', at: 0 }),
      peek: async () => (down ? undefined : 0),
    };
    const shared = createSharedLimiter({ degraded: createLocalLimiter({ now: () => 0, source: 'degraded' }), redis: redisLimiter, instances: 3 });
    const results = [];
    for (let i = 0; i < 5; i += 1) results.push((await shared.consume('k', 10, 60_000))!);
    expect(results.map((d) => [d.allowed, d.limit, d.source])).toEqual([
      [true, 3, 'degraded'], [true, 3, 'degraded'], [true, 3, 'degraded'], [false, 3, 'degraded'], [false, 3, 'degraded'],
    ]);
    down = false;
    expect((await shared.consume('k', 10, 60_000))!.source).toBe('redis');
  });
});

describeRedis('app instances sharing Redis', () => {
  let admin: Redis;
  beforeAll(async () => {
    admin = await client();
  });

  it('a limit spent on one instance is enforced on the other, with identical 429s', async () => {
    await admin.flushdb();
    const keys = keyStore(3);
    const a = await buildTestApp({ redis: await client(), keys });
    const b = await buildTestApp({ redis: await client(), keys });
    try {
      const url = '/v1/quotes?symbols=600519.SH';
      for (const app of [a.app, b.app, a.app]) expect((await app.inject({ url, headers: { 'x-api-key': 'key-one' } })).statusCode).toBe(200);
      const refusals = await Promise.all([a.app, b.app].map((app) => app.inject({ url: `${url}&api_key=key-one`, headers: { 'x-request-id': 'same-id' } })));
      for (const res of refusals) expect(res.statusCode).toBe(429);
      const [ra, rb] = refusals;
      // Identical but for retry_after_ms, which counts down with the shared clock between the two.
      const { retry_after_ms: msA, ...restA } = ra.json();
      const { retry_after_ms: msB, ...restB } = rb.json();
      expect(restA).toEqual(restB);
      expect(Math.abs(msA - msB)).toBeLessThan(1000);
      expect(Object.keys(ra.json())).toEqual(Object.keys(rb.json()));
      const pick = (h: Record<string, unknown>) => [h['x-ratelimit-limit'], h['x-ratelimit-remaining'], h['retry-after'], h['content-type'], h['cache-control']];
      expect(pick(ra.headers)).toEqual(pick(rb.headers));
      const body = ra.json();
      expect(body).toMatchObject({ code: 429, error: 'RATE_LIMITED', request_id: 'same-id' });
      expect(ra.headers['retry-after']).toBe(String(Math.ceil(body.retry_after_ms / 1000)));
      expect(ra.headers['x-ratelimit-limit']).toBe('3');
      expect(ra.headers['x-ratelimit-remaining']).toBe('0');
      // Another key has its own bucket; public routes are never limited.
      expect((await b.app.inject({ url, headers: { 'x-api-key': 'key-two' } })).statusCode).toBe(200);
      for (let i = 0; i < 5; i += 1) expect((await a.app.inject({ url: '/healthz' })).statusCode).toBe(200);
      expect(await admin.keys('mdqs:v2:rl:*')).toEqual(expect.arrayContaining(['mdqs:v2:rl:{key:k1}', 'mdqs:v2:rl:{key:k2}']));
    } finally {
      await a.app.close();
      await b.app.close();
    }
  });

  it('three instances together admit exactly the limit', async () => {
    await admin.flushdb();
    const keys = keyStore(40);
    const apps = await Promise.all([0, 1, 2].map(async () => buildTestApp({ redis: await client(), keys })));
    try {
      const responses = await Promise.all(Array.from({ length: 120 }, (_, i) =>
        apps[i % 3].app.inject({ url: '/v1/quotes?symbols=600519.SH', headers: { 'x-api-key': 'key-one' } })));
      const statuses = responses.map((r) => r.statusCode);
      expect(statuses.filter((s) => s === 200)).toHaveLength(40);
      expect(statuses.filter((s) => s === 429)).toHaveLength(80);
      const remaining = responses.filter((r) => r.statusCode === 200).map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((x, y) => x - y);
      expect(remaining).toEqual(Array.from({ length: 40 }, (_, i) => i));
    } finally {
      for (const { app } of apps) await app.close();
    }
  });
});
