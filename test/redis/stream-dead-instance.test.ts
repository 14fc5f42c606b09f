// A killed instance's connections stop counting against their key's max_connections within the
// default stream.fleetLeaseMs (issue 41.4), on a redis-server of this test's own: an instance
// holds 50 clients at their key's cap of 50 and dies without a goodbye (its Redis connection cut
// first, then its sockets); each client reconnects as the official client does (3 s, then again)
// to the surviving instances: all 50 are back within two tries, and a 51st is still refused.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_FLEET_LEASE_MS } from '../../src/stream/fleet.ts';
import { buildTestApp, CN_MORNING } from '../helpers/app.ts';
import { connect, refused, STREAM_KEYS, streamKeyStore, type TestClient } from '../stream/helpers.ts';
import { connectedClient, describeRedis, startPrivateRedis, type PrivateRedis } from './support.ts';

const CAP = 50;
const RECONNECT_MS = 3000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeRedis('a killed instance\'s connections are released within the default lease', () => {
  let redis: PrivateRedis;
  const clients: Redis[] = [];
  const apps: FastifyInstance[] = [];
  const sockets: TestClient[] = [];

  async function instance(): Promise<{ app: FastifyInstance; base: string; redis: Redis }> {
    const client = await connectedClient(redis.url, clients);
    const keys = streamKeyStore();
    (keys.lookup(STREAM_KEYS.capped)?.plan as unknown as Record<string, unknown>).maxConnections = CAP;
    // The default lease: nothing set.
    const { app } = await buildTestApp({ now: () => CN_MORNING, keys, redis: client, configure: (c) => { c.redis.instances = 3; } });
    apps.push(app);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    return { app, base: `ws://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`, redis: client };
  }

  beforeAll(async () => { redis = await startPrivateRedis(); });
  afterAll(async () => {
    for (const s of sockets) s.ws.terminate();
    for (const app of apps) await app.close().catch(() => undefined);
    for (const c of clients) c.disconnect();
    await redis?.kill();
  });

  it(`all ${CAP} clients are back on the other instances within two 3 s reconnect tries; a ${CAP + 1}st is refused`, async () => {
    expect(DEFAULT_FLEET_LEASE_MS).toBeLessThanOrEqual(5000);
    const dying = await instance();
    const alive = [await instance(), await instance()];
    for (let i = 0; i < CAP; i++) sockets.push(await connect(dying.base, '/v1/ws/stream', STREAM_KEYS.capped));
    expect((await refused(`${alive[0].base}/v1/ws/stream?api_key=${STREAM_KEYS.capped}`)).status).toBe(429);
    // Let a fleet heartbeat renew the dying instance's entries, so their whole lease lies ahead.
    await sleep(DEFAULT_FLEET_LEASE_MS / 3 + 200);

    // Killed: no goodbye reaches Redis, the sockets drop.
    const killedAt = performance.now();
    dying.redis.disconnect();
    for (const s of sockets.splice(0)) s.ws.terminate();
    void dying.app.close();

    const tries: number[] = [];
    await Promise.all(Array.from({ length: CAP }, async (_, i) => {
      for (let attempt = 1; attempt <= 2; attempt++) {
        await sleep(RECONNECT_MS);
        try {
          sockets.push(await connect(alive[i % 2].base, '/v1/ws/stream', STREAM_KEYS.capped));
          tries.push(attempt);
          return;
        } catch {
          // Refused (429): the official client tries again after 3 s.
        }
      }
    }));
    const took = performance.now() - killedAt;
    console.log(`FIGURE dead instance: ${tries.length}/${CAP} clients back within ${Math.round(took)} ms; first try ${tries.filter((t) => t === 1).length}, second ${tries.filter((t) => t === 2).length} (lease ${DEFAULT_FLEET_LEASE_MS} ms)`);
    expect(tries.length).toBe(CAP);
    const extra = await refused(`${alive[1].base}/v1/ws/stream?api_key=${STREAM_KEYS.capped}`);
    expect(extra.status).toBe(429);
  }, 30_000);
});
