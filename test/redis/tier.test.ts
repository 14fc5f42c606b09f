// The Redis tier (issue 10.1) on real Redis: windows from the header on our clock, PX = ttl +
// max(swr, sie) − age, codecs that round-trip bytes, and a Redis that fails is a miss, never a throw.
import { afterAll, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createRedisTier, encodeEntry, jsonCodec, responseCodec, type StoredResponse } from '../../src/cache/redis-tier.ts';
import { trackRedisHealth } from '../../src/redis.ts';
import { connectedClient, describeRedis, sharedUrl, startPrivateRedis } from './support.ts';

const URL_DB = sharedUrl(10);
const clients: Redis[] = [];
afterAll(() => {
  for (const c of clients) c.disconnect();
});

describeRedis('Redis tier', () => {
  it('fresh → stale → expired → gone by the stored windows, one key holding header + payload', async () => {
    const redis = await connectedClient(URL_DB, clients);
    await redis.flushdb();
    let now = 5_000_000;
    const tier = createRedisTier<{ a: number[] }>({ redis, prefix: 't:', codec: jsonCodec(), now: () => now, timeoutMs: 1000 });
    await tier.set('k', { a: [1, 2] }, { ttlMs: 1000, swrMs: 2000, sieMs: 5000, size: 10 });
    const raw = (await redis.getBuffer('t:k'))!;
    expect(raw.subarray(33).toString()).toBe('{"a":[1,2]}');
    const pttl = await redis.pttl('t:k');
    expect(pttl).toBeGreaterThan(5500);
    expect(pttl).toBeLessThanOrEqual(6000);
    const states = [];
    for (const at of [0, 999, 1000, 2999, 3000, 5999, 6000]) {
      now = 5_000_000 + at;
      const hit = await tier.get('k');
      states.push(hit === undefined ? 'gone' : `${hit.state}:${hit.age}`);
    }
    expect(states).toEqual(['fresh:0', 'fresh:999', 'stale:1000', 'stale:2999', 'expired:3000', 'expired:5999', 'gone']);
    now = 5_000_000;
    expect(await tier.get('k')).toEqual({ value: { a: [1, 2] }, state: 'fresh', age: 0, storedAt: 5_000_000, windows: { ttlMs: 1000, swrMs: 2000, sieMs: 5000 } });
    await tier.delete('k');
    expect(await tier.get('k')).toBeUndefined();
  });

  it('a refill from below keeps the original storedAt, and Redis keeps it only for what is left', async () => {
    const redis = await connectedClient(URL_DB, clients);
    const now = 9_000_000;
    const tier = createRedisTier<string>({ redis, prefix: 't:', codec: jsonCodec(), now: () => now, timeoutMs: 1000 });
    await tier.set('old', 'v', { ttlMs: 10_000, swrMs: 0, sieMs: 0, size: 1, storedAt: now - 8000 });
    const pttl = await redis.pttl('t:old');
    expect(pttl).toBeGreaterThan(1500);
    expect(pttl).toBeLessThanOrEqual(2000);
    expect((await tier.get('old'))?.age).toBe(8000);
    await tier.set('dead', 'v', { ttlMs: 1000, swrMs: 0, sieMs: 0, size: 1, storedAt: now - 5000 });
    expect(await redis.exists('t:dead')).toBe(0);
  });

  it('response codec: body, gzip, ETag and meta round-trip as bytes; no gzip stays absent', () => {
    const full: StoredResponse = { body: Buffer.from('{"data":[1]}'), gzip: Buffer.from([31, 139, 8, 0, 1, 2]), etag: '"abc"', meta: { 'x-upstream': 'sim', 'x-missing': 'X.US,Y.US', age: 'é' } };
    expect(responseCodec.decode(responseCodec.encode(full))).toEqual(full);
    const bare: StoredResponse = { body: Buffer.alloc(0), etag: '', meta: {} };
    const decoded = responseCodec.decode(responseCodec.encode(bare));
    expect(decoded).toEqual(bare);
    expect('gzip' in decoded).toBe(false);
    expect(() => responseCodec.decode(responseCodec.encode(full).subarray(0, 10))).toThrow(RangeError);
    expect(jsonCodec<undefined>().decode(jsonCodec<undefined>().encode(undefined))).toBeUndefined();
  });

  it('a corrupt or foreign value is a miss, not an error', async () => {
    const redis = await connectedClient(URL_DB, clients);
    const tier = createRedisTier<StoredResponse>({ redis, prefix: 't:', codec: responseCodec, now: () => 1, timeoutMs: 1000 });
    await redis.set('t:short', 'xx');
    await redis.set('t:bad', encodeEntry(Buffer.from([1, 2, 3]), 0, 1000, 0, 0));
    expect(await tier.get('short')).toBeUndefined();
    expect(await tier.get('bad')).toBeUndefined();
  });

  it('frozen or dead Redis: get is a miss and set a no-op within the timeout; never a throw', async () => {
    const server = await startPrivateRedis();
    const redis = await connectedClient(server.url, clients, 200);
    const health = trackRedisHealth(redis);
    try {
      const tier = createRedisTier<string>({ redis, prefix: 't:', codec: jsonCodec(), now: Date.now, timeoutMs: 200, health });
      await tier.set('k', 'v', { ttlMs: 60_000, swrMs: 0, sieMs: 0, size: 1 });
      expect((await tier.get('k'))?.value).toBe('v');
      server.freeze();
      const started = performance.now();
      expect(await tier.get('k')).toBeUndefined();
      await tier.set('k2', 'v', { ttlMs: 60_000, swrMs: 0, sieMs: 0, size: 1 });
      await tier.delete('k');
      expect(performance.now() - started).toBeLessThan(1000);
      expect(health.up).toBe(false);
      server.thaw();
      expect(await health.settled(3000)).toBe(true);
      expect((await tier.get('k'))?.value).toBe('v');
      await server.kill();
      expect(await tier.get('k')).toBeUndefined();
    } finally {
      health.stop();
      await server.kill();
    }
  });
});
