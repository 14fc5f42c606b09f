// Redis topologies (issue 27), each on real redis-server processes the test starts and stops by PID:
//   - a Redis Cluster of three masters: three app instances on it share one key's rate limit
//     exactly, and 100 distinct cold keys requested on all three at once make 100 vendor calls (one
//     per key); the same on one Redis node (the benchmark's two figures);
//   - one node of that cluster given as redis.url (a real server process): /readyz names the
//     problem (MOVED, the node, redis.cluster), never "ok", it is logged at error, and the instance
//     degrades as for Redis down (mdqs_redis_up 0, mdqs_redis_unusable 1, status 200);
//   - Sentinel (a master, a replica, one sentinel): the master SIGKILLed, the instances follow the
//     failover and share the rate limit again.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { syntheticSymbols } from '../../adapters/sim/synthetic.ts';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { createRedisClient, createSubscriber, topologyOfClient } from '../../src/redis/connection.ts';
import { attachRedisLog, redisHealth, redisReadiness, softly, trackRedisHealth, unusableReason } from '../../src/redis/health.ts';
import { publishKeyReload, subscribeKeyReloads } from '../../src/access/revocation.ts';
import { cmdRevokeKey } from '../../src/cli/keys.ts';
import { createFleetBudget } from '../../src/upstream/budget.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { buildTestApp, CN_MORNING } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';
import { startServer, type ServerProcess } from '../e2e/server-process.ts';
import { describeRedis, startPrivateRedis, waitUntil, type PrivateRedis } from './support.ts';
import { startRedisCluster, startSentinelSet, type RedisClusterHandle, type SentinelHandle } from './topologies.ts';

const LIMIT = 5;
const keys = () => new KeyStore(parseKeysFile({
  plans: {
    small: { markets: ['CN', 'HK', 'US'], features: ['quotes'], rate_limit: { max: LIMIT, window_ms: 60_000 }, max_symbols: 10 },
    wide: { markets: ['CN', 'HK', 'US'], features: ['quotes', 'klines_daily'], rate_limit: { max: 100_000, window_ms: 60_000 }, max_symbols: 100 },
  },
  keys: [
    { id: 'small-1', plan: 'small', sha256: sha256Hex('small-key-1') },
    { id: 'small-2', plan: 'small', sha256: sha256Hex('small-key-2') },
    { id: 'wide', plan: 'wide', sha256: sha256Hex('wide-key') },
  ],
}));

// The apps' Redis commands (tier reads and writes, the lock) get the same 2 s as their clients: at
// the shipped 250 ms, 300 cold requests at once on a loaded CI machine time some tier reads out, the
// instance then runs as if Redis were down until its next probe (its design) and fills on its own,
// which is the degraded mode, not the coordination these tests count.
const COMMAND_TIMEOUT_MS = 2000;
const generousTimeouts = (config: { redis: { commandTimeoutMs?: number } }) => {
  config.redis.commandTimeoutMs = COMMAND_TIMEOUT_MS;
};

async function ready(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
}

/** N requests with one key, alternating between the instances: the status codes. */
async function spend(apps: FastifyInstance[], key: string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const res = await apps[i % apps.length].inject({ url: '/v1/quotes?symbols=600519.SH', headers: { 'x-api-key': key } });
    statuses.push(res.statusCode);
  }
  return statuses;
}

describeRedis('a Redis Cluster of three masters', () => {
  let cluster: RedisClusterHandle;
  const clients: Redis[] = [];
  const apps: FastifyInstance[] = [];
  let vendor: FakeAdapter;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    // One vendor behind both instances: its log is the whole upstream traffic.
    vendor = fakeAdapter(createSimAdapter({ syntheticUniverse: 100 }, { now: () => CN_MORNING }), { delayMs: 150 });
    for (let i = 0; i < 3; i += 1) {
      const redis = createRedisClient({ url: '', cluster: cluster.addresses }, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
      clients.push(redis);
      await ready(redis);
      const { app } = await buildTestApp({ now: () => CN_MORNING, redis, keys: keys(), adapters: new Map([['sim', vendor]]), configure: generousTimeouts });
      apps.push(app);
    }
  }, 60_000);

  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const c of clients) c.disconnect();
    await cluster?.stop();
  });

  it('three instances share one key\'s rate limit exactly, and say the Redis is ok', async () => {
    // Counted in Redis (fleet-wide), not per instance.
    const me = await apps[1].inject({ url: '/v1/me', headers: { 'x-api-key': 'small-key-1' } });
    expect(me.json().data.rate_limit).toMatchObject({ shared: true, remaining: LIMIT - 1 });
    const statuses = await spend(apps, 'small-key-1', 3 * LIMIT - 1);
    expect(statuses.slice(0, LIMIT - 1)).toEqual(Array(LIMIT - 1).fill(200));
    expect(statuses.slice(LIMIT - 1)).toEqual(Array(2 * LIMIT).fill(429));
    const readyz = (await apps[0].inject({ url: '/readyz' })).json();
    expect(readyz.redis).toBe('ok');
  });

  it('100 distinct cold keys requested on all three instances at once make 100 vendor calls, one per key', async () => {
    await distinctColdKeys(apps, vendor, 'a Redis Cluster of three masters');
    // The keys are spread over the three masters (hash tags per key, not one slot for all).
    const perNode = await Promise.all((clients[0] as unknown as import('ioredis').Cluster).nodes('master').map((node) => node.dbsize()));
    expect(perNode.filter((n) => n > 0).length).toBe(3);
  });

  it('the vendor budget\'s two-key script runs on the cluster (one hash tag: no CROSSSLOT), shared by the instances', async () => {
    const budgets = clients.map((redis) => createFleetBudget({
      adapterId: 'cluster-vendor', max: 4, windowMs: 60_000, now: Date.now, redis, health: redisHealth(redis), timeoutMs: 2000, processes: 3,
    }));
    const decisions = [];
    for (let i = 0; i < 9; i += 1) decisions.push(await budgets[i % 3].take());
    expect(decisions.map((d) => d.ok)).toEqual([true, true, true, true, false, false, false, false, false]);
    expect(decisions.every((d) => d.scope === 'fleet')).toBe(true);
    await budgets[0].pauseFor(5000);
    expect(await budgets[2].take()).toMatchObject({ ok: false, paused: true, scope: 'fleet' });
    for (const redis of clients) expect(redisHealth(redis)?.problem).toBeUndefined();
  });

  it('a CROSSSLOT reply makes the client unusable (named), held for a while, then usable again', async () => {
    const redis = createRedisClient({ url: '', cluster: cluster.addresses }, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
    clients.push(redis);
    await ready(redis);
    const health = trackRedisHealth(redis, { problemHoldMs: 1000, probeIntervalMs: 100 });
    try {
      await waitUntil(async () => health.up, 'the client up');
      // Two keys in two slots in one script: what a key without a shared hash tag would do.
      const reply = await softly(health, 2000, () => redis.eval("return redis.call('MGET', KEYS[1], KEYS[2])", 2, '{a}x', '{b}y'));
      expect(reply).toBeUndefined();
      expect(health.up).toBe(false);
      expect(health.problem?.text).toMatch(/^CROSSSLOT replies: a command over several keys spans hash slots \(redis\.cluster \[127\.0\.0\.1:/);
      const detail = (await redisReadiness(health).run()).detail as string;
      expect(detail).toMatch(/^unusable since .*: CROSSSLOT/);
      // While it holds, callers skip Redis; after the hold the probe finds the cluster fine.
      expect(await softly(health, 2000, () => redis.get('{a}x'))).toBeUndefined();
      await waitUntil(async () => health.up, 'usable again after the hold', 5000);
      expect(health.problem).toBeUndefined();
    } finally {
      health.stop();
    }
  });

  it('key reloads reach every subscriber over the cluster (pub/sub), revoke-key\'s included', async () => {
    const topology = { url: '', cluster: cluster.addresses };
    const reloads = [0, 0];
    const subscribers = [createSubscriber(topology), createSubscriber(topology)];
    const quiet = { info: () => undefined, error: () => undefined };
    const stops = subscribers.map((subscriber, i) => subscribeKeyReloads({
      subscriber, log: quiet, keys: { reload: () => { reloads[i] += 1; }, size: 1 } as never,
    }));
    try {
      await waitUntil(async () => {
        await publishKeyReload(clients[0]);
        return reloads.every((n) => n > 0);
      }, 'both subscribers told', 10_000);
      // The CLI, configured with redis.cluster (no REDIS_URL), publishes after removing a key.
      const dir = mkdtempSync(join(tmpdir(), 'mdqs-revoke-'));
      const keysFile = join(dir, 'keys.yaml');
      writeFileSync(keysFile, stringify({
        plans: { p: { markets: ['CN'], features: ['quotes'], rate_limit: { max: 10, window_ms: 60_000 }, max_symbols: 1 } },
        keys: [{ id: 'gone', plan: 'p', sha256: sha256Hex('gone-key') }, { id: 'stays', plan: 'p', sha256: sha256Hex('stays-key') }],
      }));
      const configFile = join(dir, 'config.yaml');
      writeFileSync(configFile, stringify({ redis: { cluster: cluster.addresses } }));
      const before = [...reloads];
      const said: string[] = [];
      const code = await cmdRevokeKey(['--id', 'gone', '--keys-file', keysFile], { CONFIG_FILE: configFile }, { out: (t) => said.push(t), err: (t) => said.push(t), now: Date.now });
      expect(code).toBe(0);
      expect(said.join('')).toContain('instances sharing Redis were told to reload their keys');
      await waitUntil(async () => reloads.every((n, i) => n > before[i]), 'the revocation heard by both', 5000);
    } finally {
      for (const stop of stops) await stop();
      for (const subscriber of subscribers) subscriber.disconnect();
    }
  });
});

/** 100 distinct cold keys, each asked of every instance at once: one vendor call per key. */
async function distinctColdKeys(apps: FastifyInstance[], vendor: FakeAdapter, topology: string): Promise<void> {
  vendor.reset();
  const symbols = syntheticSymbols(100);
  const answers = await Promise.all(symbols.flatMap((symbol) => apps.map((app) =>
    app.inject({ url: `/v1/klines?symbol=${symbol}&period=1d&count=20&adjust=none`, headers: { 'x-api-key': 'wide-key' } }))));
  // Any other status, with its body, so a failure says what went wrong.
  expect(answers.filter((r) => r.statusCode !== 200).map((r) => `${r.statusCode} ${r.body.slice(0, 300)}`)).toEqual([]);
  process.stdout.write(`TOPOLOGY FIGURE: ${vendor.count('getCandles')} vendor requests for ${symbols.length} distinct keys over ${apps.length} instances on ${topology}\n`);
  expect(vendor.count('getCandles')).toBe(100);
  expect(new Set(vendor.symbolsOf('getCandles')).size).toBe(100);
}

describeRedis('one Redis node', () => {
  let node: PrivateRedis;
  const clients: Redis[] = [];
  const apps: FastifyInstance[] = [];
  let vendor: FakeAdapter;

  beforeAll(async () => {
    node = await startPrivateRedis();
    vendor = fakeAdapter(createSimAdapter({ syntheticUniverse: 100 }, { now: () => CN_MORNING }), { delayMs: 150 });
    for (let i = 0; i < 3; i += 1) {
      const redis = createRedisClient(node.url, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
      clients.push(redis);
      await ready(redis);
      const { app } = await buildTestApp({ now: () => CN_MORNING, redis, keys: keys(), adapters: new Map([['sim', vendor]]), configure: generousTimeouts });
      apps.push(app);
    }
  }, 30_000);

  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const c of clients) c.disconnect();
    await node?.kill();
  });

  it('100 distinct cold keys requested on all three instances at once make 100 vendor calls, one per key', async () => {
    await distinctColdKeys(apps, vendor, 'one Redis node');
  });
});

describeRedis('a Redis Cluster with a password (redis.password)', () => {
  let cluster: RedisClusterHandle;
  const clients: Redis[] = [];
  beforeAll(async () => {
    cluster = await startRedisCluster(3, 'cluster-secret');
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await cluster?.stop();
  });

  it('is used with the password; without it the problem is named (NOAUTH) and the client degrades', async () => {
    const good = createRedisClient({ url: '', cluster: cluster.addresses, password: 'cluster-secret' }, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
    clients.push(good);
    await ready(good);
    const health = trackRedisHealth(good);
    await waitUntil(async () => health.up, 'the cluster usable with the password');
    const budget = createFleetBudget({ adapterId: 'v', max: 1, windowMs: 60_000, now: Date.now, redis: good, health, timeoutMs: 2000 });
    expect(await budget.take()).toMatchObject({ ok: true, scope: 'fleet' });
    expect(await budget.take()).toMatchObject({ ok: false, scope: 'fleet' });
    health.stop();

    const bad = createRedisClient({ url: '', cluster: cluster.addresses, password: 'wrong' }, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
    clients.push(bad);
    const refused = trackRedisHealth(bad);
    await waitUntil(async () => refused.problem !== undefined, 'the credentials problem', 10_000);
    expect(refused.up).toBe(false);
    expect(refused.problem?.text).toMatch(/^WRONGPASS: redis\.cluster \[127\.0\.0\.1:\d+, .*\] refuses these credentials/);
    refused.stop();
  }, 30_000);
});

describeRedis('a cluster node given as redis.url', () => {
  let cluster: RedisClusterHandle;
  let server: ServerProcess;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    server = await startServer({
      REDIS_URL: `redis://${cluster.addresses[0]}`, MDQS__history__enabled: 'false', LOG_LEVEL: 'info', MDQS__redis__commandTimeoutMs: '1000',
    });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await cluster?.stop();
  });

  it('is reported in /readyz by name (never "ok"), logged at error, and the instance degrades but stays ready', async () => {
    const logged = await server.waitFor((line) => line.level === 50 && /cannot be used as configured/.test(line.msg), 'the error line');
    expect(logged.msg).toContain('MOVED');
    expect(logged.redis).toBe(`redis.url redis://${cluster.addresses[0]}`);
    const res = await fetch(`${server.base}/readyz`);
    expect(res.status).toBe(200);
    const body = await res.json() as { status: string; redis: string; degraded: Array<{ name: string; problem: string }> };
    expect(body.redis).not.toBe('ok');
    expect(body.redis).toMatch(/^unusable since .*: MOVED replies: redis\.url redis:\/\/127\.0\.0\.1:\d+ is a node of a Redis Cluster .*redis\.cluster/);
    expect(body.redis).toContain(cluster.addresses[0]);
    expect(body.status).toBe('degraded');
    expect(body.degraded.find((d) => d.name === 'redis')?.problem).toMatch(/^unusable as configured: MOVED/);
    const metrics = await (await fetch(`${server.base}/metrics`)).text();
    expect(metrics).toMatch(/^mdqs_redis_up 0$/m);
    expect(metrics).toMatch(/^mdqs_redis_unusable 1$/m);
    // Requests are served (per-instance limits, own caches), and the problem is logged once.
    const quote = await fetch(`${server.base}/v1/quotes?symbols=600519.SH`, { headers: { 'x-api-key': 'demo-key' } });
    expect(quote.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1200));
    expect(server.logs.filter((line) => line.level === 50 && /cannot be used as configured/.test(line.msg))).toHaveLength(1);
  });

  it('a MOVED reply to a command is read as that problem too (not as "Redis down")', async () => {
    const url = `redis://${cluster.addresses[0]}`;
    const redis = createRedisClient(url, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
    try {
      await ready(redis);
      // Some key of a slot another master holds.
      let error: unknown;
      for (let i = 0; error === undefined && i < 50; i += 1) await redis.set(`k${i}`, '1').catch((e: unknown) => { error = e; });
      expect(String(error)).toMatch(/MOVED \d+ 127\.0\.0\.1:\d+/);
      expect(unusableReason(error, topologyOfClient(redis))).toBe(
        `MOVED replies: redis.url ${url} is a node of a Redis Cluster (cluster_enabled:1), so keys held by other nodes are refused; list the cluster's nodes in redis.cluster instead`,
      );
      expect(unusableReason(new Error('Connection is closed.'), topologyOfClient(redis))).toBeUndefined();
    } finally {
      redis.disconnect();
    }
  });
});

describeRedis('Sentinel: a master, a replica and one sentinel', () => {
  let set: SentinelHandle;
  const clients: Redis[] = [];
  const apps: FastifyInstance[] = [];

  beforeAll(async () => {
    set = await startSentinelSet();
    for (let i = 0; i < 2; i += 1) {
      const redis = createRedisClient({ url: '', sentinel: { name: set.name, nodes: [set.sentinelAddress] } }, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
      clients.push(redis);
      await ready(redis);
      const { app } = await buildTestApp({ now: () => CN_MORNING, redis, keys: keys() });
      apps.push(app);
    }
  }, 60_000);

  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const c of clients) c.disconnect();
    await set?.stop();
  });

  it('the instances share the limit, follow the failover when the master is killed, and share again', async () => {
    const shared = await apps[0].inject({ url: '/v1/me', headers: { 'x-api-key': 'small-key-1' } });
    expect(shared.json().data.rate_limit.shared).toBe(true);
    const before = await spend(apps, 'small-key-1', 2 * LIMIT);
    expect(before.filter((s) => s === 200)).toHaveLength(LIMIT - 1);
    const oldMaster = set.master.port;
    expect(await set.masterPort()).toBe(oldMaster);

    await set.master.kill();
    await waitUntil(async () => (await set.masterPort()) === set.replica.port, 'the sentinel to promote the replica', 30_000);
    // Both instances reconnect to the new master (ioredis asks the sentinel again).
    let seen: string[] = [];
    await waitUntil(async () => {
      const bodies = await Promise.all(apps.map(async (app) => (await app.inject({ url: '/readyz' })).json() as { redis: string }));
      seen = bodies.map((b) => b.redis);
      return bodies.every((b) => b.redis === 'ok');
    }, 'both instances on the new master', 30_000).catch((error: Error) => {
      throw new Error(`${error.message}: /readyz said ${JSON.stringify(seen)}, clients ${clients.map((c) => c.status).join()}`);
    });
    for (const redis of clients) expect(redisHealth(redis)?.up).toBe(true);

    const me = await apps[1].inject({ url: '/v1/me', headers: { 'x-api-key': 'small-key-2' } });
    expect(me.json().data.rate_limit).toMatchObject({ shared: true, remaining: LIMIT - 1 });
    const after = await spend(apps, 'small-key-2', 3 * LIMIT);
    expect(after.slice(0, LIMIT - 1)).toEqual(Array(LIMIT - 1).fill(200));
    expect(after.slice(LIMIT - 1)).toEqual(Array(2 * LIMIT + 1).fill(429));
  }, 90_000);
});

describeRedis('Sentinel asked for a master it does not know', () => {
  let set: SentinelHandle;
  let redis: Redis;
  beforeAll(async () => {
    set = await startSentinelSet();
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await set?.stop();
  });

  it('is reported by name in /readyz and logged at error; the instance serves on its own', async () => {
    redis = createRedisClient({ url: '', sentinel: { name: 'no-such-master', nodes: [set.sentinelAddress] } }, { commandTimeoutMs: 1000 });
    const errors: Array<{ fields: Record<string, unknown>; msg: string }> = [];
    attachRedisLog(redis, { error: (fields, msg) => errors.push({ fields: fields as Record<string, unknown>, msg }), warn: () => undefined });
    const { app } = await buildTestApp({ now: () => CN_MORNING, redis, keys: keys() });
    try {
      await waitUntil(async () => /^unusable since /.test(((await app.inject({ url: '/readyz' })).json() as { redis: string }).redis), 'the problem in /readyz', 10_000);
      const body = (await app.inject({ url: '/readyz' })).json() as { status: string; redis: string };
      expect(body.status).toBe('degraded');
      expect(body.redis).toContain('no master: the sentinels know no master named "no-such-master"');
      expect(body.redis).toContain(set.sentinelAddress);
      expect(errors).toHaveLength(1);
      expect(errors[0].msg).toMatch(/^Redis answers but cannot be used as configured: no master/);
      const quote = await app.inject({ url: '/v1/quotes?symbols=600519.SH', headers: { 'x-api-key': 'wide-key' } });
      expect(quote.statusCode).toBe(200);
    } finally {
      // Closing never waits for a Redis that was never usable.
      const closing = Date.now();
      await app.close();
      expect(Date.now() - closing).toBeLessThan(3000);
    }
  }, 30_000);
});

describe('redis settings: one topology', () => {
  it('REDIS_URL from the environment and redis.cluster from the file are an error naming both', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadConfig, ConfigError } = await import('../../config/load.ts');
    const dir = mkdtempSync(join(tmpdir(), 'mdqs-topology-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'redis:\n  cluster: ["127.0.0.1:7000", "127.0.0.1:7001"]\n');
    let error: unknown;
    try {
      loadConfig({ CONFIG_FILE: file, REDIS_URL: 'redis://127.0.0.1:6379' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as InstanceType<typeof ConfigError>).problems).toEqual([
      `redis: redis.url (REDIS_URL) and redis.cluster (${file}:2) are both set; set one of redis.url (one node), redis.cluster (a Redis Cluster's nodes) or redis.sentinel (a master's name and its sentinels); an empty url counts as unset`,
    ]);
    // An empty url counts as unset; a node's port must be a port.
    expect(loadConfig({ CONFIG_FILE: file, REDIS_URL: '' }).config.redis.cluster).toEqual(['127.0.0.1:7000', '127.0.0.1:7001']);
    writeFileSync(file, 'redis:\n  sentinel: { name: m, nodes: ["127.0.0.1:70000", "no-port"] }\n');
    expect(() => loadConfig({ CONFIG_FILE: file })).toThrow(/redis\.sentinel\.nodes\[0\]: got "127\.0\.0\.1:70000" .*expected a port from 1 to 65_535/);
    expect(() => loadConfig({ CONFIG_FILE: file })).toThrow(/redis\.sentinel\.nodes\[1\]: got "no-port"/);
    // Credentials: settings for a cluster or sentinel; a URL carries its own.
    writeFileSync(file, 'redis:\n  password: s3cret\n');
    expect(() => loadConfig({ CONFIG_FILE: file, REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(
      `redis.password (${file}:2): only for redis.cluster and redis.sentinel; with redis.url put the credentials in the URL (redis://user:password@host:port)`,
    );
    expect(loadConfig({ CONFIG_FILE: file, MDQS__redis__cluster: '["127.0.0.1:7000"]' }).config.redis.password).toBe('s3cret');
  });
});
