// Upstream failures through the routes (docs/contract.md#errors, docs/architecture.md#upstream-resilience): the sim's own fault injection and the
// fake adapter's failure modes map to exact 502/503/504 bodies (never a 500); the circuit
// breaker opens after `failureThreshold` failures, fails fast without calling the adapter, shows in
// /readyz and /metrics, closes after a successful probe; stale data answers during the outage.
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { buildCountingApp, metricValue, testClock } from '../helpers/cache-app.ts';

const RID = 'fault-test-1';
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

const get = (app: FastifyInstance, url: string) =>
  app.inject({ method: 'GET', url, headers: { 'x-api-key': KEYS.demo, 'x-request-id': RID } });

function expectUpstreamError(res: LightMyRequestResponse, status: number, reason: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(String(res.headers['content-type'])).toContain('application/json');
  const body = res.json();
  expect(body).toMatchObject({ code: status, error: reason, request_id: RID });
  expect(typeof body.message).toBe('string');
  return body as { message: string; details?: unknown };
}

async function simApp(sim: Record<string, unknown>, deadlineMs = 200) {
  const { app } = await buildTestApp({
    configure: (c) => {
      c.adapters.sim = sim;
      c.upstream.deadlineMs = deadlineMs;
    },
  });
  apps.push(app);
  return app;
}

async function countingApp(configure: Parameters<typeof buildCountingApp>[0] = {}) {
  const built = await buildCountingApp(configure);
  apps.push(built.app);
  return built;
}

describe('sim fault injection', () => {
  it('a hang past upstream.deadlineMs is 504 UPSTREAM_TIMEOUT with a JSON body', async () => {
    const app = await simApp({ faults: { timeoutRate: 1, timeoutMs: 30_000 } });
    const body = expectUpstreamError(await get(app, '/v1/quotes?symbols=600519.SH'), 504, 'UPSTREAM_TIMEOUT');
    expect(body.message).toBe('sim did not answer within 200 ms');
    expect(body.details).toEqual({ adapter: 'sim', resource: 'quotes', attempts: [{ adapter: 'sim', cause: 'timeout', message: 'sim did not answer within 200 ms' }] });
  });

  it('latency past the deadline is 504 too; latency inside it is a normal 200', async () => {
    const slow = await simApp({ latency: { fixedMs: 1_000 } });
    expectUpstreamError(await get(slow, '/v1/klines?symbol=600519.SH&adjust=none'), 504, 'UPSTREAM_TIMEOUT');
    const fine = await simApp({ latency: { fixedMs: 20 } }, 5_000);
    expect((await get(fine, '/v1/klines?symbol=600519.SH&adjust=none')).statusCode).toBe(200);
  });

  it('an injected error is 502 UPSTREAM_ERROR', async () => {
    const app = await simApp({ faults: { errorRate: 1 } });
    expectUpstreamError(await get(app, '/v1/quotes?symbols=600519.SH'), 502, 'UPSTREAM_ERROR');
    expectUpstreamError(await get(app, '/v1/klines?symbol=600519.SH'), 502, 'UPSTREAM_ERROR');
    expectUpstreamError(await get(app, '/v1/klines/intraday?symbol=600519.SH'), 502, 'UPSTREAM_ERROR');
  });

  it('a malformed vendor body is 502 UPSTREAM_BAD_RESPONSE', async () => {
    const app = await simApp({ faults: { malformedRate: 1 } });
    expectUpstreamError(await get(app, '/v1/quotes?symbols=600519.SH'), 502, 'UPSTREAM_BAD_RESPONSE');
    expectUpstreamError(await get(app, '/v1/depth?symbol=600519.SH'), 502, 'UPSTREAM_BAD_RESPONSE');
  });
});

describe('fake adapter failure modes', () => {
  it.each([
    ['error', 502, 'UPSTREAM_ERROR'],
    ['malformed', 502, 'UPSTREAM_BAD_RESPONSE'],
    ['hang', 504, 'UPSTREAM_TIMEOUT'],
  ] as const)('%s → %i %s', async (mode, status, reason) => {
    const { app, adapter } = await countingApp({ configure: (c) => { c.upstream.deadlineMs = 200; } });
    adapter.mode = mode;
    expectUpstreamError(await get(app, '/v1/quotes?symbols=600519.SH'), status, reason);
    expect(adapter.calls.getQuotes).toBe(1);
  });

  it('a vendor rate limit is 503 UPSTREAM_UNAVAILABLE with the vendor\'s Retry-After, and does not trip the breaker', async () => {
    const { app, adapter } = await countingApp({ configure: (c) => { c.upstream.breaker.failureThreshold = 3; } });
    adapter.mode = 'unavailable';
    for (let i = 0; i < 5; i++) {
      const res = await get(app, '/v1/quotes?symbols=600519.SH');
      expectUpstreamError(res, 503, 'UPSTREAM_UNAVAILABLE');
      expect(res.headers['retry-after']).toBe('7');
    }
    expect(adapter.calls.getQuotes).toBe(5);
    expect(await metricValue(app, 'mdqs_circuit_state', { adapter: 'sim' })).toBe(0);
  });
});

describe('circuit breaker', () => {
  const breakerConfig = (c: Parameters<NonNullable<Parameters<typeof buildCountingApp>[0]>['configure'] & object>[0]) => {
    c.upstream.breaker.failureThreshold = 3;
    c.upstream.breaker.openMs = 30_000;
    c.upstream.deadlineMs = 200;
  };

  it('opens after 3 failures, fails fast, reports itself, and closes after a successful probe', async () => {
    const clock = testClock();
    const { app, adapter } = await countingApp({ clock, configure: breakerConfig });
    adapter.mode = 'error';
    for (let i = 0; i < 3; i++) expectUpstreamError(await get(app, '/v1/quotes?symbols=600519.SH'), 502, 'UPSTREAM_ERROR');
    expect(adapter.calls.getQuotes).toBe(3);

    const open = await get(app, '/v1/quotes?symbols=600519.SH');
    const body = expectUpstreamError(open, 503, 'UPSTREAM_UNAVAILABLE');
    expect(body.details).toEqual({
      adapter: 'sim', circuit: 'open',
      attempts: [{ adapter: 'sim', cause: 'circuit_open', message: 'The upstream data source is temporarily unavailable' }],
    });
    expect(open.headers['retry-after']).toBe('30');
    expectUpstreamError(await get(app, '/v1/klines?symbol=600519.SH'), 503, 'UPSTREAM_UNAVAILABLE');
    expect(adapter.count()).toBe(3);

    const notReady = await app.inject({ method: 'GET', url: '/readyz' });
    // Every market's only adapter has an open circuit: a fault every instance shares, so the
    // instance stays ready and says what is degraded (the readiness policy, issue 23.8).
    expect(notReady.statusCode).toBe(200);
    const since = notReady.json().adapters.sim.circuit_since;
    expect(typeof since).toBe('string');
    expect(notReady.json()).toEqual({
      status: 'degraded',
      markets: { CN: { ready: false, adapters: [] }, HK: { ready: false, adapters: [] }, US: { ready: false, adapters: [] } },
      adapters: { sim: { ready: false, circuit: 'open', circuit_since: since, in_flight: 0, queued: 0, budget_remaining: null } },
      degraded: [
        { name: 'adapter:sim', problem: 'circuit open', since },
        ...['CN', 'HK', 'US'].map((m) => ({ name: `market:${m}`, problem: 'no adapter with a closed circuit: live data stale or 503, stored history still served' })),
      ],
    });
    expect(await metricValue(app, 'mdqs_circuit_state', { adapter: 'sim' })).toBe(2);
    expect(await metricValue(app, 'mdqs_upstream_requests_total', { adapter: 'sim', resource: 'quotes', outcome: 'circuit_open' })).toBe(1);
    expect(await metricValue(app, 'mdqs_upstream_requests_total', { adapter: 'sim', resource: 'quotes', outcome: 'error' })).toBe(3);

    clock.advance(10_000);
    expect((await get(app, '/v1/quotes?symbols=600519.SH')).headers['retry-after']).toBe('20');

    clock.advance(20_000);
    expect(await metricValue(app, 'mdqs_circuit_state', { adapter: 'sim' })).toBe(1);
    adapter.mode = 'ok';
    const probe = await get(app, '/v1/quotes?symbols=600519.SH');
    expect(probe.statusCode).toBe(200);
    expect(adapter.calls.getQuotes).toBe(4);
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({
      status: 'ready',
      markets: { CN: { ready: true, adapters: ['sim'] }, HK: { ready: true, adapters: ['sim'] }, US: { ready: true, adapters: ['sim'] } },
      adapters: { sim: { ready: true, circuit: 'closed', in_flight: 0, queued: 0, budget_remaining: null } },
    });
    expect(await metricValue(app, 'mdqs_circuit_state', { adapter: 'sim' })).toBe(0);
  });

  it('a failed probe re-opens the circuit for another openMs', async () => {
    const clock = testClock();
    const { app, adapter } = await countingApp({ clock, configure: breakerConfig });
    adapter.mode = 'hang';
    for (let i = 0; i < 3; i++) expectUpstreamError(await get(app, '/v1/quotes?symbols=600519.SH'), 504, 'UPSTREAM_TIMEOUT');
    clock.advance(30_000);
    expectUpstreamError(await get(app, '/v1/quotes?symbols=600519.SH'), 504, 'UPSTREAM_TIMEOUT');
    expect(adapter.calls.getQuotes).toBe(4);
    const again = await get(app, '/v1/quotes?symbols=600519.SH');
    expectUpstreamError(again, 503, 'UPSTREAM_UNAVAILABLE');
    expect(again.headers['retry-after']).toBe('30');
    expect(adapter.calls.getQuotes).toBe(4);
  });

  it('serves cached data marked STALE during the outage, and 503 with Retry-After for data it never had', async () => {
    const clock = testClock();
    const { app, adapter } = await countingApp({ clock, configure: breakerConfig });
    const warm = await get(app, '/v1/quotes?symbols=600519.SH');
    expect(warm.statusCode).toBe(200);
    adapter.mode = 'error';
    clock.advance(5_000);

    const first = await get(app, '/v1/quotes?symbols=600519.SH');
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-cache']).toBe('STALE');
    expect(first.json()).toEqual(warm.json());
    expectUpstreamError(await get(app, '/v1/quotes?symbols=601318.SH'), 502, 'UPSTREAM_ERROR');
    expectUpstreamError(await get(app, '/v1/quotes?symbols=600036.SH'), 502, 'UPSTREAM_ERROR');
    expect(await metricValue(app, 'mdqs_circuit_state', { adapter: 'sim' })).toBe(2);
    expect(adapter.calls.getQuotes).toBe(4);

    clock.advance(5_000);
    const duringOutage = await get(app, '/v1/quotes?symbols=600519.SH');
    expect(duringOutage.statusCode).toBe(200);
    expect(duringOutage.headers['x-cache']).toBe('STALE');
    expect(duringOutage.headers.age).toBe('10');
    expect(duringOutage.json()).toEqual(warm.json());
    const cold = await get(app, '/v1/quotes?symbols=601318.SH');
    expectUpstreamError(cold, 503, 'UPSTREAM_UNAVAILABLE');
    expect(cold.headers['retry-after']).toBe('25');
    expect(adapter.calls.getQuotes).toBe(4);
  });
});
