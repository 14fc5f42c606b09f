// Cross-instance single-flight (issue 10.3) on real Redis: one fill for 100 concurrent callers over
// two lock instances, a live holder renews its lease, a dead holder's lease lapses within about a
// second (issue 28.2), a waiter never waits past its deadline, and a failing Redis means filling
// directly. The SIGKILLed holder process: test/redis/fill-lock-holder.test.ts.
import { afterAll, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createFillLock, type FillLock } from '../../src/cache/fill-lock.ts';
import { createSubscriber } from '../../src/redis/connection.ts';
import { trackRedisHealth } from '../../src/redis/health.ts';
import { connectedClient, describeRedis, sharedUrl, startPrivateRedis } from './support.ts';

const URL_DB = sharedUrl(11);
const clients: Redis[] = [];
const locks: FillLock[] = [];
afterAll(async () => {
  for (const l of locks) await l.close();
  for (const c of clients) c.disconnect();
});

async function lockOn(url: string, options: { leaseMs?: number; prefix?: string; now?: () => number; health?: boolean; commandTimeoutMs?: number } = {}) {
  const redis = await connectedClient(url, clients, options.commandTimeoutMs);
  const subscriber = createSubscriber(url);
  clients.push(subscriber);
  const lock = createFillLock({
    redis, subscriber, prefix: options.prefix ?? 'fl:', leaseMs: options.leaseMs ?? 1000, now: options.now ?? Date.now,
    health: options.health === false ? undefined : trackRedisHealth(redis),
  });
  locks.push(lock);
  return { lock, redis };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeRedis('fill lock', () => {
  it('100 concurrent fills over two lock instances: one fill, everyone gets its value', async () => {
    const a = await lockOn(URL_DB);
    const b = await lockOn(URL_DB);
    await a.redis.flushdb();
    const shared = new Map<string, string>();
    let fills = 0;
    const fill = async () => {
      fills += 1;
      await sleep(150);
      shared.set('k', 'filled');
      return 'filled';
    };
    const readFilled = async () => shared.get('k');
    const deadlineAt = Date.now() + 10_000;
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).lock.run('k', { deadlineAt }, fill, readFilled)));
    expect(fills).toBe(1);
    expect(new Set(results)).toEqual(new Set(['filled']));
    expect(await a.redis.exists('fl:lock:{k}')).toBe(0);
  });

  it('a holder that died: its lock expires and a waiter fills, before its deadline', async () => {
    const a = await lockOn(URL_DB, { leaseMs: 300 });
    await a.redis.set('fl:lock:{dead}', 'someone-else', 'PX', 300);
    let fills = 0;
    const value = await a.lock.run('dead', { deadlineAt: Date.now() + 5000 }, async () => {
      fills += 1;
      return 'mine';
    }, async () => undefined);
    expect([value, fills]).toEqual(['mine', 1]);
  });

  it('a live holder renews its lease: a fill 2.5 leases long is never joined by a second filler', async () => {
    // The default lease: renewed every third of it, so an event loop stalled less than ~600 ms
    // (a loaded CI machine) still renews in time.
    const a = await lockOn(URL_DB, { leaseMs: 1000 });
    const b = await lockOn(URL_DB, { leaseMs: 1000 });
    const shared = new Map<string, string>();
    let fills = 0;
    const fill = async () => {
      fills += 1;
      await sleep(2500);
      shared.set('long', 'done');
      return 'done';
    };
    const deadlineAt = Date.now() + 10_000;
    const holder = a.lock.run('long', { deadlineAt }, fill, async () => shared.get('long'));
    await sleep(50);
    const waiter = b.lock.run('long', { deadlineAt }, fill, async () => shared.get('long'));
    expect(await Promise.all([holder, waiter])).toEqual(['done', 'done']);
    expect(fills).toBe(1);
    expect(await a.redis.exists('fl:lock:{long}')).toBe(0);
  });

  it('a holder that stops renewing (died): a waiter takes over within about one lease', async () => {
    const a = await lockOn(URL_DB, { leaseMs: 1000 });
    // What a SIGKILLed holder leaves: its lock with the lease of its last renewal, never renewed again.
    await a.redis.set('fl:lock:{gone}', 'dead-holder', 'PX', 1000);
    const started = Date.now();
    const value = await a.lock.run('gone', { deadlineAt: started + 5000 }, async () => 'mine', async () => undefined);
    const waited = Date.now() - started;
    expect(value).toBe('mine');
    expect(waited).toBeGreaterThanOrEqual(900);
    expect(waited).toBeLessThan(1500);
  });

  it('a waiter never waits past its deadline: then it fills itself', async () => {
    const a = await lockOn(URL_DB);
    await a.redis.set('fl:lock:{slow}', 'holder', 'PX', 10_000);
    const started = Date.now();
    const value = await a.lock.run('slow', { deadlineAt: started + 250 }, async () => 'own', async () => undefined);
    const waited = Date.now() - started;
    expect(value).toBe('own');
    expect(waited).toBeGreaterThanOrEqual(240);
    expect(waited).toBeLessThan(1000);
    await a.redis.del('fl:lock:{slow}');
  });

  it('a failed fill releases the lock, and the waiters fill in turn (no value was stored)', async () => {
    const a = await lockOn(URL_DB);
    let calls = 0;
    const fill = async () => {
      calls += 1;
      await sleep(50);
      if (calls === 1) throw new Error('vendor down');
      return 'second';
    };
    const results = await Promise.allSettled([0, 1].map(() => a.lock.run('fails', { deadlineAt: Date.now() + 5000 }, fill, async () => undefined)));
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(calls).toBe(2);
  });

  it('Redis frozen or gone: fill directly, within the command timeout', async () => {
    const server = await startPrivateRedis();
    const a = await lockOn(server.url, { commandTimeoutMs: 250 });
    try {
      server.freeze();
      const started = Date.now();
      expect(await a.lock.run('x', { deadlineAt: started + 10_000 }, async () => 'direct', async () => undefined)).toBe('direct');
      expect(Date.now() - started).toBeLessThan(1000);
      server.thaw();
      await server.kill();
      expect(await a.lock.run('x', { deadlineAt: Date.now() + 10_000 }, async () => 'direct', async () => undefined)).toBe('direct');
    } finally {
      await server.kill();
    }
  });
});
