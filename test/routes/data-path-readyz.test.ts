// The readiness policy (issue 23.8): /readyz answers 503 only for this instance's own faults. A
// vendor's circuit open, even every adapter of a market, is a fault every instance shares: the
// instance stays ready (200, status "degraded"), and the body names what is degraded and since
// when; each adapter's health is in the body (and its circuit in /metrics) either way.
import { afterEach, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { AppError } from '../../src/errors.ts';
import { appWith, CN_MORNING, vendor, type TestApp, type Vendor } from '../data/vendor-app.ts';

const apps: TestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((t) => t.app.close()));
});

const BREAKER = { failureThreshold: 2, openMs: 30_000 };
const healthy = { ready: true, circuit: 'closed', in_flight: 0, queued: 0, budget_remaining: null };
const opened = { ready: false, circuit: 'open', circuit_since: new Date(0).toISOString(), in_flight: 0, queued: 0, budget_remaining: null };

async function setup(cnChain: string[]) {
  let clock = CN_MORNING;
  const now = () => clock;
  const a = vendor('vendorA', now);
  const b = vendor('vendorB', now);
  const t = await appWith({
    markets: { CN: cnChain, HK: ['sim'], US: ['sim'] },
    adapters: [a, b, createSimAdapter({}, { now })],
    now,
    breaker: BREAKER,
  });
  apps.push(t);
  const ready = async () => {
    const res = await t.app.inject({ url: '/readyz' });
    return { status: res.statusCode, body: res.json() };
  };
  return { t, a, b, ready, advance: (ms: number) => { clock += ms; } };
}

/** Two failing quote calls (distinct symbols, so no cache answers) open vendorA's circuit. */
async function openCircuit(t: TestApp, a: Vendor) {
  a.mode = new AppError('UPSTREAM_ERROR', 'vendorA down');
  const statuses = [];
  for (const symbol of ['600519.SH', '000001.SZ']) statuses.push((await t.get(`/v1/quotes?symbols=${symbol}`)).statusCode);
  expect(a.symbolsOf('getQuotes')).toEqual(['600519.SH', '000001.SZ']);
  return statuses;
}

describe('/readyz', () => {
  it('all closed: 200, every market with its serving adapters, every adapter healthy', async () => {
    const { ready } = await setup(['vendorA', 'vendorB']);
    expect(await ready()).toEqual({
      status: 200,
      body: {
        status: 'ready',
        markets: {
          CN: { ready: true, adapters: ['vendorA', 'vendorB'] },
          HK: { ready: true, adapters: ['sim'] },
          US: { ready: true, adapters: ['sim'] },
        },
        adapters: { vendorA: healthy, vendorB: healthy, sim: healthy },
      },
    });
  });

  it('one vendor\'s circuit open while another serves the market: still 200, the open circuit reported', async () => {
    const { t, a, b, ready } = await setup(['vendorA', 'vendorB']);
    expect(await openCircuit(t, a)).toEqual([200, 200]);
    expect(b.symbolsOf('getQuotes')).toEqual(['600519.SH', '000001.SZ']);
    const { status, body } = await ready();
    expect(status).toBe(200);
    expect(body.status).toBe('degraded');
    expect(body.markets.CN).toEqual({ ready: true, adapters: ['vendorB'] });
    const since = new Date(CN_MORNING).toISOString();
    expect(body.adapters).toEqual({ vendorA: { ...opened, circuit_since: since }, vendorB: healthy, sim: healthy });
    expect(body.degraded).toEqual([{ name: 'adapter:vendorA', problem: 'circuit open', since }]);
    // The open circuit is passed over without a call.
    await t.get('/v1/quotes?symbols=601318.SH');
    expect(a.symbolsOf('getQuotes')).toHaveLength(2);
    const metrics = (await t.app.inject({ url: '/metrics' })).body;
    expect(metrics).toContain('mdqs_circuit_state{adapter="vendorA"} 2');
    expect(metrics).toContain('mdqs_circuit_state{adapter="vendorB"} 0');
  });

  it('every circuit of a market open: still 200 (a fault every instance shares), the market and its adapter named as degraded', async () => {
    const { t, a, ready } = await setup(['vendorA']);
    expect(await openCircuit(t, a)).toEqual([502, 502]);
    const { status, body } = await ready();
    expect(status).toBe(200);
    expect(body.status).toBe('degraded');
    expect(body.markets).toEqual({
      CN: { ready: false, adapters: [] },
      HK: { ready: true, adapters: ['sim'] },
      US: { ready: true, adapters: ['sim'] },
    });
    const since = new Date(CN_MORNING).toISOString();
    expect(body.adapters.vendorA).toEqual({ ...opened, circuit_since: since });
    expect(body.degraded).toEqual([
      { name: 'adapter:vendorA', problem: 'circuit open', since },
      { name: 'market:CN', problem: 'no adapter with a closed circuit: live data stale or 503, stored history still served' },
    ]);
    expect((await t.app.inject({ url: '/readyz' })).headers['cache-control']).toBe('no-store');
  });

  it('after openMs the circuit is half-open: the market counts as served again, the adapter not yet ready', async () => {
    const { t, a, ready, advance } = await setup(['vendorA']);
    await openCircuit(t, a);
    advance(BREAKER.openMs);
    const { status, body } = await ready();
    expect(status).toBe(200);
    expect(body.markets.CN).toEqual({ ready: true, adapters: ['vendorA'] });
    expect(body.adapters.vendorA).toEqual({ ...opened, circuit: 'half_open', circuit_since: new Date(CN_MORNING).toISOString() });
  });

  it('an adapter whose ready() probe fails does not serve its market', async () => {
    const { a, ready } = await setup(['vendorA']);
    Object.assign(a, { ready: async () => { throw new Error('probe failed'); } });
    const { status, body } = await ready();
    expect(status).toBe(200);
    expect(body.markets.CN).toEqual({ ready: false, adapters: [] });
    expect(body.adapters.vendorA).toEqual({ ...healthy, ready: false });
    expect(body.degraded.map((d: { name: string }) => d.name)).toEqual(['adapter:vendorA', 'market:CN']);
  });

  it('a ready probe that never answers makes that adapter not ready, and /readyz still answers', async () => {
    const { a, ready } = await setup(['vendorA', 'vendorB']);
    (a as { ready?: () => Promise<boolean> }).ready = () => new Promise<boolean>(() => {});
    const answer = await ready();
    expect(answer.status).toBe(200);
    expect(answer.body.adapters.vendorA).toEqual({ ...healthy, ready: false, error: 'ready probe did not answer within 2000 ms' });
    expect(answer.body.markets.CN).toEqual({ ready: true, adapters: ['vendorB'] });
  });
});
