// The candle store is in front of the vendor's resilience layer (issue 23.1, 23.2), through the real
// app and a real TickFlow-format vendor on a local HTTP server (raw sim bars in TickFlow's
// columnar wire format). A year of daily bars is filled; the vendor then fails until its circuit
// opens; windows inside the stored year still answer 200 with the same bars (adjust=none, and
// forward with the ex-factors cached) with zero vendor requests and no change in
// mdqs_upstream_requests_total; a window reaching past the year follows the failure policy while
// the vendor is down, and asks the vendor only for the gap once it is back. Over the whole run the
// upstream counter equals the requests the vendor received (refusals counted apart).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics, upstreamSink, type Metrics } from '../../src/metrics.ts';
import { localDate } from '../../src/markets/calendar.ts';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { startTickflowVendor, type FakeVendor } from '../helpers/tickflow-vendor.ts';

// Saturday 2025-06-21 12:00 Shanghai: every bar asked for below is closed (no forming bar).
let clock = Date.UTC(2025, 5, 21, 4, 0, 0);
const now = () => clock;
const day = (iso: string) => Date.parse(`${iso}T00:00:00+08:00`);
const YEAR = { start: day('2024-06-01'), end: day('2025-05-31') };
const BREAKER = { failureThreshold: 2, openMs: 30_000 };

const dir = mkdtempSync(join(tmpdir(), 'mdqs-store-first-'));
let vendor: FakeVendor;
let app: FastifyInstance;
let metrics: Metrics;

beforeAll(async () => {
  vendor = await startTickflowVendor(now);
  metrics = createMetrics();
  const routing = { markets: { CN: ['tickflow'], HK: ['tickflow'], US: ['tickflow'] }, overrides: {}, allowSimFallback: false, strict: false };
  const adapters = { tickflow: { baseUrl: vendor.base, apiKey: 'vendor-secret', http: { retry: { maxRetries: 0 }, breaker: BREAKER } } };
  const deps = productionDeps(now, upstreamSink(metrics));
  ({ app } = await buildTestApp({
    now,
    metrics,
    adapters: createAdapters(routing, adapters, deps),
    upstreamClients: deps.clients,
    configure: (c) => {
      Object.assign(c, { routing, adapters });
      c.history = { ...c.history, enabled: true, sqlitePath: join(dir, 'history.sqlite') };
    },
  }));
});
afterAll(async () => {
  await app?.close();
  await new Promise((resolve) => vendor?.server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const get = (url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
const klines = (from: number, to: number, adjust = 'none') =>
  get(`/v1/klines?symbol=600519.SH&period=1d&adjust=${adjust}&count=10000&start_time=${from}&end_time=${to}`);

/** mdqs_upstream_requests_total for tickflow, by outcome. */
async function upstreamCounts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const { labels, value } of (await metrics.upstreamRequests.get()).values) {
    if (labels.adapter === 'tickflow') out[String(labels.outcome)] = (out[String(labels.outcome)] ?? 0) + value;
  }
  return out;
}
const REFUSALS = new Set(['circuit_open', 'budget_exhausted']);
const reached = (counts: Record<string, number>) => Object.entries(counts).filter(([o]) => !REFUSALS.has(o)).reduce((n, [, v]) => n + v, 0);

describe('stored history is served whatever the vendor does', () => {
  let year: { timestamp: number[]; close: number[] };
  let yearForward: { timestamp: number[]; close: number[] };

  it('a year is filled from the vendor: one vendor request per missing range', async () => {
    const res = await klines(YEAR.start, YEAR.end);
    expect(res.statusCode).toBe(200);
    year = res.json().data;
    expect(year.timestamp.length).toBeGreaterThan(230);
    expect(localDate('CN', year.timestamp[0]) >= '2024-06-01').toBe(true);
    const candleCalls = vendor.requests.filter((u) => u.pathname === '/v1/klines');
    expect(candleCalls).toHaveLength(1);
    const fwd = await klines(YEAR.start, YEAR.end, 'forward');
    expect(fwd.statusCode).toBe(200);
    yearForward = fwd.json().data;
    // The ex-factors were fetched (and are now cached); the bars came from the store.
    expect(vendor.requests.filter((u) => u.pathname === '/v1/klines/ex-factors')).toHaveLength(1);
    expect(vendor.requests.filter((u) => u.pathname === '/v1/klines')).toHaveLength(1);
  });

  it('the vendor fails until its circuit opens; the instance stays ready', async () => {
    vendor.down = true;
    for (const symbol of ['000001.SZ', '601318.SH']) {
      const res = await get(`/v1/klines?symbol=${symbol}&period=1d&adjust=none&count=5`);
      expect(res.statusCode).toBe(502);
    }
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().adapters.tickflow.circuit).toBe('open');
    expect(ready.json().degraded.map((d: { name: string }) => d.name)).toContain('adapter:tickflow');
  });

  it('windows inside the stored year answer 200 with the same bars, no vendor request, no upstream count', async () => {
    const requestsBefore = vendor.requests.length;
    const countsBefore = await upstreamCounts();
    const windows = [['2024-07-01', '2024-09-30'], ['2024-08-15', '2025-01-10'], ['2025-02-01', '2025-05-30']];
    for (const [from, to] of windows) {
      const lo = day(from);
      const hi = day(to);
      const none = await klines(lo, hi);
      expect(none.statusCode).toBe(200);
      const expected = year.timestamp.map((t, i) => [t, year.close[i]] as const).filter(([t]) => t >= lo && t <= hi);
      const got = none.json().data as { timestamp: number[]; close: number[] };
      expect(got.timestamp).toEqual(expected.map(([t]) => t));
      expect(got.close).toEqual(expected.map(([, c]) => c));
      const fwd = await klines(lo, hi, 'forward');
      expect(fwd.statusCode).toBe(200);
      const fwdData = fwd.json().data as { timestamp: number[]; close: number[] };
      expect(fwdData.timestamp).toEqual(got.timestamp);
      expect(fwdData.close).toEqual(yearForward.close.filter((_, i) => yearForward.timestamp[i] >= lo && yearForward.timestamp[i] <= hi));
    }
    expect(vendor.requests.length).toBe(requestsBefore);
    expect(await upstreamCounts()).toEqual(countsBefore);
  });

  it('a window reaching past the year follows the failure policy while the vendor is down; inside the year still answers', async () => {
    const past = await klines(day('2025-03-01'), day('2025-06-20'));
    expect(past.statusCode).toBe(503);
    expect(past.json().error).toBe('UPSTREAM_UNAVAILABLE');
    expect(past.headers['retry-after']).toBeDefined();
    const inside = await klines(day('2025-03-01'), day('2025-05-30'));
    expect(inside.statusCode).toBe(200);
  });

  it('once the vendor is back, only the gap is asked for', async () => {
    vendor.down = false;
    clock += BREAKER.openMs;
    const before = vendor.requests.length;
    const res = await klines(day('2025-03-01'), day('2025-06-20'));
    expect(res.statusCode).toBe(200);
    const asked = vendor.requests.slice(before);
    expect(asked).toHaveLength(1);
    expect(asked[0].pathname).toBe('/v1/klines');
    expect(Number(asked[0].searchParams.get('start_time'))).toBeGreaterThan(YEAR.end);
    const got = res.json().data as { timestamp: number[] };
    expect(got.timestamp.filter((t) => t <= day('2025-05-30'))).toEqual(year.timestamp.filter((t) => t >= day('2025-03-01') && t <= day('2025-05-30')));
    expect(localDate('CN', got.timestamp.at(-1)!)).toBe('2025-06-20');
  });

  it('the upstream counter equals the requests the vendor received; breaker refusals are counted apart', async () => {
    const counts = await upstreamCounts();
    expect(reached(counts)).toBe(vendor.requests.length);
    expect(counts.circuit_open).toBeGreaterThanOrEqual(1);
  });
});
