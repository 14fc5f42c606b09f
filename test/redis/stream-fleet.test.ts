// The stream as one service (issue 27.4), on a redis-server of this test's own and two app
// instances listening on real ports:
//   - a key's max_connections and max_subscriptions hold across the instances (2 and 3 for the
//     capped plan: a third connection is refused on either, a subscribe past 3 in total is);
//   - a connection closed on one instance frees its place for the other at once; one left by a
//     dead instance (its Redis connection gone, then the app) is freed once its lease runs out;
//   - while Redis is down each process admits its share: cap ÷ (redis.instances × server.workers);
//   - ticks are the fleet's: both instances push the same values at the same ticks (spread of
//     the same new price p90 < 250 ms), with one vendor refresh per tick for both.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Adapter } from '../../adapters/types.ts';
import { createAdapters } from '../../src/upstream/registry.ts';
import { loadDefaultConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { buildTestApp, CN_MORNING } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';
import { connect, refused, STREAM_KEYS, streamKeyStore, type TestClient } from '../stream/helpers.ts';
import { connectedClient, describeRedis, startPrivateRedis, waitUntil, type PrivateRedis } from './support.ts';

const LEASE_MS = 1500;
const started = Date.now();
/** In session (a Wednesday morning in Shanghai), moving with real time. */
const now = () => CN_MORNING + (Date.now() - started);

interface Instance {
  app: FastifyInstance;
  base: string;
  redis: Redis;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeRedis('stream caps and ticks across two instances on one Redis', () => {
  let redis: PrivateRedis;
  const clients: Redis[] = [];
  const instances: Instance[] = [];
  const sockets: TestClient[] = [];

  async function instance(vendor: Adapter, configure: (c: Config) => void = () => undefined, cache = true): Promise<Instance> {
    const client = await connectedClient(redis.url, clients);
    const { app } = await buildTestApp({
      now, keys: streamKeyStore(), adapters: new Map([['sim', vendor]]), redis: client, cache,
      configure: (c) => {
        c.redis.instances = 2;
        c.stream.fleetLeaseMs = LEASE_MS;
        configure(c);
      },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const made = { app, base: `ws://127.0.0.1:${port}`, redis: client };
    instances.push(made);
    return made;
  }

  const open = async (at: Instance, key = STREAM_KEYS.capped) => {
    const socket = await connect(at.base, '/v1/ws/stream', key);
    sockets.push(socket);
    return socket;
  };
  const refusedAt = (at: Instance) => refused(`${at.base}/v1/ws/stream?api_key=${STREAM_KEYS.capped}`);
  /** Whether a connection to `at` is admitted now (kept open, like open()). */
  const opens = async (at: Instance): Promise<boolean> => {
    try {
      await open(at);
      return true;
    } catch {
      return false;
    }
  };

  function simVendor(): FakeAdapter {
    const config = loadDefaultConfig();
    return fakeAdapter(createAdapters(config.routing, config.adapters, () => ({ now })).get('sim') as Adapter);
  }

  beforeAll(async () => {
    redis = await startPrivateRedis();
  });
  afterAll(async () => {
    for (const s of sockets) s.ws.terminate();
    for (const i of instances) await i.app.close().catch(() => undefined);
    for (const c of clients) c.disconnect();
    await redis?.kill();
  });

  describe('caps', () => {
    let a: Instance;
    let b: Instance;
    beforeAll(async () => {
      const vendor = simVendor();
      a = await instance(vendor);
      b = await instance(vendor);
    });

    it('max_connections (2) holds across both instances, and a closed connection frees its place for the other', async () => {
      const first = await open(a);
      await open(b);
      // Each instance alone has one of its two: the fleet has both.
      expect((await refusedAt(a)).status).toBe(429);
      const onB = await refusedAt(b);
      expect(onB.status).toBe(429);
      expect(onB.body).toMatchObject({ code: 429, error: 'TOO_MANY_CONNECTIONS', details: { max_connections: 2 } });
      first.close();
      await first.closed;
      await waitUntil(() => opens(b), 'a place freed by a close on the other instance', 3000);
      expect((await refusedAt(a)).status).toBe(429);
    });

    it('max_subscriptions (3) holds across both instances', async () => {
      const [onA, onB] = [sockets.at(-1) as TestClient, sockets.at(-2) as TestClient];
      onA.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH', '000001.SZ'] });
      expect(await onA.next()).toMatchObject({ op: 'subscribed', total: 2 });
      expect(await onA.next()).toMatchObject({ op: 'quotes' });
      onB.send({ op: 'subscribe', channel: 'quotes', symbols: ['600036.SH', '601988.SH'] });
      expect(await onB.next()).toMatchObject({ op: 'error', error: 'TOO_MANY_SYMBOLS', details: { max_subscriptions: 3, subscribed: 2, requested: 2 } });
      onB.send({ op: 'subscribe', channel: 'depth', symbols: ['600036.SH'] });
      expect(await onB.next()).toMatchObject({ op: 'subscribed', total: 1 });
      expect(await onB.next()).toMatchObject({ op: 'depth' });
      onA.send({ op: 'subscribe', channel: 'depth', symbols: ['601988.SH'] });
      expect(await onA.next()).toMatchObject({ op: 'error', error: 'TOO_MANY_SYMBOLS', details: { subscribed: 3 } });
      // Given back on one instance, taken on the other.
      onB.send({ op: 'unsubscribe', channel: 'depth', symbols: ['600036.SH'] });
      expect(await onB.next()).toMatchObject({ op: 'unsubscribed' });
      await sleep(100);
      onA.send({ op: 'subscribe', channel: 'depth', symbols: ['601988.SH'] });
      expect(await onA.next()).toMatchObject({ op: 'subscribed', total: 1 });
    });

    it('a dead instance\'s connections are released once their lease runs out', async () => {
      for (const s of sockets.splice(0)) {
        s.close();
        await s.closed;
      }
      await sleep(100);
      const dying = await instance(simVendor());
      await open(dying);
      await open(dying);
      expect((await refusedAt(b)).status).toBe(429);
      // The instance dies: its Redis connection first (it cannot say goodbye), then the process.
      dying.redis.disconnect();
      for (const s of sockets.splice(0)) s.ws.terminate();
      await dying.app.close();
      const died = Date.now();
      expect((await refusedAt(b)).status).toBe(429);
      await waitUntil(() => opens(b), 'the dead instance\'s connections released', LEASE_MS + 3000);
      expect(Date.now() - died).toBeGreaterThanOrEqual(LEASE_MS / 3);
    });

    it('while Redis is down, each process admits its share: cap ÷ (instances × workers)', async () => {
      for (const s of sockets.splice(0)) {
        s.close();
        await s.closed;
      }
      // Two workers per instance and two instances: max_connections 1000 of the full plan → 250 each;
      // the capped plan's 2 → 1 each (at least one).
      const alone = await instance(simVendor(), (c) => { c.server.workers = 2; });
      await redis.kill();
      await waitUntil(async () => alone.app.sharedRedis?.health.up === false, 'Redis seen down', 5000);
      await open(alone);
      const second = await refusedAt(alone);
      expect(second.status).toBe(429);
      await redis.restart();
    });
  });
});

describeRedis('fleet ticks', () => {
  let redis: PrivateRedis;
  const clients: Redis[] = [];
  const apps: FastifyInstance[] = [];
  const sockets: TestClient[] = [];
  afterAll(async () => {
    for (const s of sockets) s.ws.terminate();
    for (const app of apps) await app.close().catch(() => undefined);
    for (const c of clients) c.disconnect();
    await redis?.kill();
  });

  it('both instances push the same prices at the same ticks (p90 spread < 250 ms), one refresh per tick for both', async () => {
    redis = await startPrivateRedis();
    const config = loadDefaultConfig();
    const vendor = fakeAdapter(createAdapters(config.routing, config.adapters, () => ({ now })).get('sim') as Adapter);
    const bases: string[] = [];
    for (let i = 0; i < 2; i++) {
      const client = await connectedClient(redis.url, clients);
      // No caches: every refresh is a vendor call, so the vendor counts the fleet's refreshes.
      const { app } = await buildTestApp({
        now, keys: streamKeyStore(), adapters: new Map([['sim', vendor]]), redis: client, cache: false,
        configure: (c) => { c.redis.instances = 2; c.stream.tickMs = 250; },
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      apps.push(app);
      const address = app.server.address();
      bases.push(`ws://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`);
    }
    const symbols = ['600519.SH', '000001.SZ', '600036.SH', '601988.SH', '00700.HK'];
    /** When each distinct (symbol, value) first arrived, per instance. */
    const seen: Map<string, number>[] = [new Map(), new Map()];
    for (let i = 0; i < 2; i++) {
      const socket = await connect(bases[i], '/v1/ws/stream', STREAM_KEYS.full);
      sockets.push(socket);
      socket.send({ op: 'subscribe', channel: 'quotes', symbols });
      expect(await socket.next()).toMatchObject({ op: 'subscribed', total: symbols.length });
      await socket.next(); // the snapshot: this client's own read
      socket.ws.on('message', (data) => {
        const frame = JSON.parse(data.toString()) as { op: string; data?: { symbol: string }[] };
        if (frame.op !== 'quotes') return;
        for (const item of frame.data ?? []) {
          const value = `${item.symbol} ${JSON.stringify(item)}`;
          if (!seen[i].has(value)) seen[i].set(value, performance.now());
        }
      });
    }
    const callsBefore = vendor.calls.getQuotes;
    const from = performance.now();
    await sleep(5000);
    const ticks = (performance.now() - from) / 250;
    const refreshes = vendor.calls.getQuotes - callsBefore;
    // Let the last tick's frames arrive.
    await sleep(300);
    const spreads: number[] = [];
    let onlyOne = 0;
    for (const [value, at] of seen[0]) {
      const other = seen[1].get(value);
      if (other === undefined) onlyOne += 1;
      else spreads.push(Math.abs(other - at));
    }
    for (const value of seen[1].keys()) if (!seen[0].has(value)) onlyOne += 1;
    spreads.sort((x, y) => x - y);
    const p = (q: number) => spreads[Math.min(spreads.length - 1, Math.floor(spreads.length * q))];
    console.log(`FIGURE stream spread across 2 instances: ${spreads.length} new values, p50 ${p(0.5).toFixed(1)} ms, p90 ${p(0.9).toFixed(1)} ms, max ${spreads.at(-1)?.toFixed(1)} ms; ${onlyOne} seen on one only; ${refreshes} vendor refreshes in ${Math.round(ticks)} ticks (CN and HK batches)`);
    expect(spreads.length).toBeGreaterThan(10);
    // Every value pushed by one instance was pushed by the other (the last tick may be in flight).
    expect(onlyOne).toBeLessThanOrEqual(symbols.length);
    expect(p(0.9)).toBeLessThan(250);
    // One vendor refresh per tick for both instances (CN and HK symbols: at most one batch per market).
    expect(refreshes).toBeLessThanOrEqual(Math.ceil(ticks + 1) * 2);
    expect(refreshes).toBeLessThan(ticks * 2 * 2);
  }, 30_000);
});
