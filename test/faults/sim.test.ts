// The fault matrix for `sim`, through its own fault injection (config adapters.sim.faults and
// latency): an injected error is 502 UPSTREAM_ERROR, a garbage body 502 UPSTREAM_BAD_RESPONSE, a
// hang or a latency far past the deadline 504 UPSTREAM_TIMEOUT at the deadline; on every route
// family the sim serves. Clean answers hold the invariants of docs/contract.md#shapes-and-units.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { buildFaultApp, closeFaultApp, expectAnswer, timedGet, type CaseApp } from './harness.ts';

const NOW = Date.UTC(2025, 5, 18, 2, 15, 30); // CN and HK in session, US closed
const URLS = [
  '/v1/quotes?symbols=600519.SH',
  '/v1/quotes?symbols=600519.SH,00700.HK,AAPL.US',
  '/v1/klines?symbol=600519.SH&count=50&adjust=none',
  '/v1/klines?symbol=AAPL.US&period=5m&count=50',
  '/v1/klines/intraday?symbol=00700.HK',
  '/v1/depth?symbol=600519.SH',
];

const FAULTS: Array<{ name: string; sim: Record<string, unknown>; status: number; error?: string }> = [
  { name: 'none', sim: {}, status: 200 },
  { name: 'errorRate 1', sim: { faults: { errorRate: 1 } }, status: 502, error: 'UPSTREAM_ERROR' },
  { name: 'malformedRate 1', sim: { faults: { malformedRate: 1 } }, status: 502, error: 'UPSTREAM_BAD_RESPONSE' },
  { name: 'timeoutRate 1 (hangs 30 s)', sim: { faults: { timeoutRate: 1, timeoutMs: 30_000 } }, status: 504, error: 'UPSTREAM_TIMEOUT' },
  { name: 'latency 30 s', sim: { latency: { fixedMs: 30_000 } }, status: 504, error: 'UPSTREAM_TIMEOUT' },
];

let run = 0;
afterAll(() => {
  console.log(`sim fault matrix: ${run} cases run`);
});

// One app per fault (errors are never cached, and the breaker is set out of reach, so the
// requests of one fault do not see each other).
describe.each(FAULTS)('sim with $name', (f) => {
  let app: CaseApp;
  beforeAll(async () => {
    app = await buildFaultApp(NOW, (c) => {
      c.adapters.sim = f.sim;
      c.upstream.breaker.failureThreshold = 1_000;
    });
  });
  afterAll(async () => {
    await closeFaultApp(app);
  });
  it.each(URLS)(`%s → ${f.status} ${f.error ?? ''}`, async (url) => {
    run++;
    expectAnswer(await timedGet(app.app, url), f.status, f.error);
  });
});
