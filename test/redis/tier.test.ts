// The Redis tier (issue 10.1) on real Redis: windows from the header on our clock, PX = ttl +
// max(swr, sie) − age, codecs that round-trip bytes, and a Redis that fails is a miss, never a throw.
import { afterAll, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { crc32 } from 'node:zlib';
import { corruptCount } from '../../src/cache/corruption.ts';
import { createRedisTier, encodeEntry, jsonCodec, responseCodec, type StoredResponse } from '../../src/cache/redis-tier.ts';
import { trackRedisHealth } from '../../src/redis/health.ts';
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
    const raw = (await redis.getBuffer('t:{k}'))!;
    // Version 2, the CRC-32 of everything after it, the four windows, then the payload.
    expect(raw.readUInt8(0)).toBe(2);
    expect(raw.readUInt32LE(1)).toBe(crc32(raw.subarray(5)));
    expect(raw.subarray(37).toString()).toBe('{"a":[1,2]}');
    const pttl = await redis.pttl('t:{k}');
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
    const pttl = await redis.pttl('t:{old}');
    expect(pttl).toBeGreaterThan(1500);
    expect(pttl).toBeLessThanOrEqual(2000);
    expect((await tier.get('old'))?.age).toBe(8000);
    await tier.set('dead', 'v', { ttlMs: 1000, swrMs: 0, sieMs: 0, size: 1, storedAt: now - 5000 });
    expect(await redis.exists('t:{dead}')).toBe(0);
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
    await redis.set('t:{short}', 'xx');
    await redis.set('t:{bad}', encodeEntry(Buffer.from([1, 2, 3]), 0, 1000, 0, 0));
    expect(await tier.get('short')).toBeUndefined();
    expect(await tier.get('bad')).toBeUndefined();
  });

  it('every entry is verified on read: a flipped bit, a changed digit or a cut value is a counted, logged miss', async () => {
    const redis = await connectedClient(URL_DB, clients);
    const warnings: object[] = [];
    const tier = createRedisTier<{ listed: string }>({
      redis, prefix: 'c:', codec: jsonCodec(), now: () => 1_000, timeoutMs: 1000, log: { warn: (fields) => warnings.push(fields) },
    });
    const set = { ttlMs: 60_000, swrMs: 0, sieMs: 0, size: 10, storedAt: 1_000 };
    const good = encodeEntry(Buffer.from('{"listed":"1980-01-02"}'), 1_000, 60_000, 0, 0);
    const variants: Record<string, Buffer> = {
      bit: Buffer.from(good),
      digit: Buffer.from(good.toString('latin1').replace('1980', '1990'), 'latin1'),
      cut: good.subarray(0, good.length - 3),
      window: Buffer.from(good),
    };
    variants.bit[good.length - 5] ^= 0x01;
    variants.window.writeDoubleLE(600_000, 13); // a longer ttl: the header is covered too
    await tier.set('ok', { listed: '1980-01-02' }, set);
    expect((await tier.get('ok'))?.value).toEqual({ listed: '1980-01-02' });
    const before = corruptCount('redis');
    for (const [name, value] of Object.entries(variants)) {
      await redis.set(`c:{${name}}`, value);
      expect(await tier.get(name), name).toBeUndefined();
    }
    expect(corruptCount('redis') - before).toBe(4);
    // Logged once (then at most once per 10 s), naming the key.
    expect(warnings[0]).toMatchObject({ layer: 'redis', key: 'c:{bit}' });
    // An entry of the previous version (no checksum) is a plain miss, not corruption.
    const v1 = Buffer.concat([Buffer.from([1]), Buffer.alloc(32), Buffer.from('{}')]);
    await redis.set('c:{v1}', v1);
    expect(await tier.get('v1')).toBeUndefined();
    expect(corruptCount('redis') - before).toBe(4);
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
