// A request that finds the vendor budget spent (issue 27): it waits for room when a slot frees
// within its own deadline (the resilience layer's, passed to the HTTP layer in the call's context),
// and is refused at once, 503 with Retry-After, when none does: never a timeout, never a breaker
// mark.
// Real Redis (the fleet budget) and a real local HTTP server as the vendor.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Adapter } from '../../adapters/types.ts';
import { AppError } from '../../src/errors.ts';
import { trackRedisHealth } from '../../src/redis/health.ts';
import { createUpstreamHttp, type UpstreamClient } from '../../src/upstream/http.ts';
import { createResilience } from '../../src/upstream/resilience.ts';
import { connectedClient, describeRedis, startPrivateRedis, type PrivateRedis } from './support.ts';

let own: PrivateRedis | undefined;
const clients: Redis[] = [];
const https: UpstreamClient[] = [];
let server: Server;
let base = '';
const arrivals: number[] = [];

beforeAll(async () => {
  own = await startPrivateRedis();
  server = createServer((req, res) => {
    arrivals.push(Date.now());
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"data":[]}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const h of https) await h.close();
  for (const c of clients) c.disconnect();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await own?.kill();
});

describeRedis('a spent vendor budget', () => {
  it('waits for room inside the deadline, else refuses at once with Retry-After; the breaker never hears of it', async () => {
    const redis = await connectedClient(own!.url, clients);
    const health = trackRedisHealth(redis);
    const states: string[] = [];
    // Two processes of one fleet: the budget (2 per 1.5 s) is theirs together.
    const make = () => {
      const http = createUpstreamHttp({
        adapterId: 'wait-vendor', timeoutMs: 5000, connections: 2, retry: { maxRetries: 0, baseDelayMs: 10 },
        budget: { max: 2, windowMs: 1500 }, shared: { redis, health, timeoutMs: 1000, processes: 2 },
      });
      https.push(http);
      const resilience = createResilience('wait-vendor', { deadlineMs: 2500, concurrency: 8, maxQueue: 64, breaker: { failureThreshold: 1, openMs: 60_000 } }, {
        now: Date.now, onBreakerStateChange: (_id, state) => states.push(state),
      });
      return { http, resilience };
    };
    const [a, b] = [make(), make()];
    const adapter = { id: 'wait-vendor', label: 'Wait vendor' } as Adapter;
    const call = (p: ReturnType<typeof make>, neededAt = Date.now()) =>
      p.resilience.call(adapter, 'quotes', (ctx) => p.http.request({ url: `${base}/q`, resource: 'quotes', signal: ctx.signal, deadlineAt: ctx.deadlineAt }), neededAt);

    const first = Date.now();
    await call(a);
    await new Promise((r) => setTimeout(r, 700));
    await call(b);
    // The third finds the window full: it waits for the first slot to free (1.5 s + the 50 ms
    // guard after the first send) and goes, inside its 2.5 s deadline.
    const started = Date.now();
    await call(a);
    const waited = Date.now() - started;
    expect(Date.now() - first).toBeGreaterThanOrEqual(1550);
    expect(waited).toBeGreaterThan(500);
    expect(waited).toBeLessThan(1500);
    expect(a.http.budgetState()).toMatchObject({ scope: 'fleet', waits: 1, refused: 0, taken: 2 });

    // Window full again (the second and third sends; a slot frees in ~0.7 s). A call needed 2 s
    // ago has 0.5 s of its deadline left, less than the wait: refused at once, 503 with
    // Retry-After, no vendor request.
    const before = arrivals.length;
    const refusedAt = Date.now();
    const error = await call(b, Date.now() - 2000).catch((e: unknown) => e);
    expect(Date.now() - refusedAt).toBeLessThan(300);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).reason).toBe('UPSTREAM_UNAVAILABLE');
    expect((error as AppError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((error as AppError).details).toMatchObject({ adapter: 'wait-vendor', budget: 'exhausted' });
    expect(arrivals.length).toBe(before);
    expect(b.http.budgetState()).toMatchObject({ refused: 1 });
    // A breaker with a threshold of one failure is still closed: waiting and refusing are ours.
    expect(states).toEqual([]);
    expect(a.resilience.health().circuit).toBe('closed');
    expect(b.resilience.health().circuit).toBe('closed');
    health.stop();
  }, 20_000);
});
