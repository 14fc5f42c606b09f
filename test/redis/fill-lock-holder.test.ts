// Issue 28, item 2, through real processes: three instances (`node src/server.ts`) share a Redis
// of their own; the one holding the fill lock of a cold key is SIGKILLed mid-fill while two others
// wait on that lock. Its lease (redis.fillLockLeaseMs, 1 s) is no longer renewed, so a waiter takes
// the lock within about a second and fills itself: both waiters answer 200 inside their own
// deadline (upstream.deadlineMs, 5 s), never 504 while the vendor is healthy.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ServerProcess } from '../e2e/server-process.ts';
import { fleetDir, startFleet, writeOneKey, type Fleet } from './processes.ts';
import { describeRedis, waitUntil } from './support.ts';

const { dir, keysFile } = fleetDir('mdqs-fill-holder-');
const KEY = 'fill-holder-key';
// Every sim call takes this long: long enough to kill the holder mid-fill, short enough that a
// waiter that notices the dead holder within about a second still answers inside 5 s.
const VENDOR_MS = 1500;
const DEADLINE_MS = 5000;

let fleet: Fleet;
let admin: Redis;
let servers: ServerProcess[] = [];

beforeAll(async () => {
  writeOneKey(keysFile, 'holder-test', KEY, ['quotes', 'instruments']);
  fleet = await startFleet(3, {
    dir, keysFile, env: { MDQS__adapters__sim__latency__fixedMs: String(VENDOR_MS), MDQS__upstream__deadlineMs: String(DEADLINE_MS) },
  });
  ({ servers, admin } = fleet);
}, 60_000);

afterAll(() => fleet?.stop());

async function timed(server: ServerProcess, path: string): Promise<{ status: number; ms: number; cache: string | null }> {
  const started = Date.now();
  const res = await fetch(`${server.base}${path}`, { headers: { 'x-api-key': KEY }, signal: AbortSignal.timeout(15_000) });
  await res.arrayBuffer();
  return { status: res.status, ms: Date.now() - started, cache: res.headers.get('x-cache') };
}

describeRedis('a fill-lock holder SIGKILLed mid-fill', () => {
  it('two waiters on other instances notice within about a second and answer 200 inside their deadline', async () => {
    const path = '/v1/quotes?symbols=600519.SH';
    // The holder: the first instance to miss takes the lock and calls the (slow) vendor.
    const holder = fetch(`${servers[0].base}${path}`, { headers: { 'x-api-key': KEY } }).catch((error: unknown) => error);
    await waitUntil(async () => (await admin.keys('mdqs:v2:fill:lock:*')).length > 0, 'the holder\'s lock', 5000);
    // Two waiters on the other instances: they find the lock held.
    const waiters = [timed(servers[1], path), timed(servers[2], path)];
    await new Promise((r) => setTimeout(r, 300));
    servers[0].proc.kill('SIGKILL');
    const killedAt = Date.now();
    const results = await Promise.all(waiters);
    expect(await holder).toBeInstanceOf(Error);
    for (const result of results) {
      expect(result.status).toBe(200);
      expect(result.ms).toBeLessThan(DEADLINE_MS);
    }
    // One of them filled after the lease lapsed (≤ 1 s after the kill, then one vendor call); the
    // other read that fill from Redis or filled itself: neither waited for its deadline.
    const done = Math.max(...results.map((r) => r.ms)) - 300;
    expect(done).toBeGreaterThanOrEqual(VENDOR_MS);
    expect(Date.now() - killedAt).toBeLessThan(1000 + VENDOR_MS + 1000);
  }, 30_000);
});
