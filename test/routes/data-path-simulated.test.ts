// Simulated data is never silent, through the real app: buildApp refuses a chain that falls back
// from a real vendor to sim unless routing.allowSimFallback; when sim answers, the response says
// X-Simulated: true and the log warns once a minute per market; /v1/meta lists, per market, the
// adapters that may serve simulated data. Also routing.strict refusing a capability gap at boot.
import { afterEach, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { RoutingError } from '../../src/app.ts';
import { AppError } from '../../src/errors.ts';
import { ALL_RESOURCES } from '../helpers/fake-adapter.ts';
import { appWith, CN_MORNING, vendor, type TestApp } from '../data/vendor-app.ts';

const apps: TestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((t) => t.app.close()));
});

async function open(setup: Parameters<typeof appWith>[0]): Promise<TestApp> {
  const t = await appWith(setup);
  apps.push(t);
  return t;
}

const SIM_WARNING = 'SIMULATED DATA served: the real vendors of this market failed and the sim fallback answered';

describe('boot: the routing is checked', () => {
  it('a chain [vendor, sim] without allowSimFallback is refused with RoutingError', async () => {
    const now = () => CN_MORNING;
    const setup = { markets: { CN: ['vendor', 'sim'], HK: ['sim'], US: ['sim'] }, adapters: [vendor('vendor', now), createSimAdapter({}, { now })] };
    const refusal = appWith(setup);
    await expect(refusal).rejects.toBeInstanceOf(RoutingError);
    await expect(refusal).rejects.toThrow(
      'routing: CN falls back from a real vendor to simulated data (vendor > sim); remove the sim adapter from the chain or set routing.allowSimFallback: true',
    );
  });

  it('a sim fallback in a per-resource override is refused too', async () => {
    const now = () => CN_MORNING;
    const refusal = appWith({
      markets: { CN: ['vendor'], HK: ['vendor'], US: ['vendor'] },
      overrides: { depth: { US: ['vendor', 'sim'] } },
      adapters: [vendor('vendor', now), createSimAdapter({}, { now })],
    });
    await expect(refusal).rejects.toThrow('routing: US falls back from a real vendor to simulated data (vendor > sim)');
  });

  it('a capability gap is a warning in the log, and under routing.strict a RoutingError', async () => {
    const now = () => CN_MORNING;
    const noDepth = () => vendor('vendor', now, { resources: { ...ALL_RESOURCES, depth: false } });
    const gap = 'routing: no adapter in the CN chain (vendor) serves depth; requests for it will fail with 502';
    const t = await open({ markets: { CN: ['vendor'], HK: ['sim'], US: ['sim'] }, adapters: [noDepth(), createSimAdapter({}, { now })] });
    expect(t.logs.filter((l) => l.msg === gap).map((l) => l.level)).toEqual([40]);
    const refusal = appWith({ markets: { CN: ['vendor'], HK: ['sim'], US: ['sim'] }, adapters: [noDepth(), createSimAdapter({}, { now })], strict: true });
    await expect(refusal).rejects.toBeInstanceOf(RoutingError);
    await expect(refusal).rejects.toThrow(gap);
  });
});

describe('with allowSimFallback: true', () => {
  let clock = CN_MORNING;
  const now = () => clock;

  async function fallbackApp() {
    clock = CN_MORNING;
    const v = vendor('vendor', now);
    const t = await open({
      markets: { CN: ['vendor', 'sim'], HK: ['sim'], US: ['vendor'] },
      adapters: [v, createSimAdapter({}, { now })],
      now,
      allowSimFallback: true,
      breaker: { failureThreshold: 100, openMs: 30_000 },
    });
    return { t, v };
  }

  it('the vendor answering: no X-Simulated', async () => {
    const { t } = await fallbackApp();
    const res = await t.get('/v1/quotes?symbols=600519.SH');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('vendor');
    expect(res.headers['x-simulated']).toBeUndefined();
  });

  it('a vendor outage answered by sim carries X-Simulated: true, fresh and replayed from the cache', async () => {
    const { t, v } = await fallbackApp();
    v.mode = new AppError('UPSTREAM_ERROR', 'vendor down');
    const res = await t.get('/v1/quotes?symbols=600519.SH');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('sim');
    expect(res.headers['x-simulated']).toBe('true');
    expect(v.symbolsOf('getQuotes')).toEqual(['600519.SH']);
    const replay = await t.get('/v1/quotes?symbols=600519.SH');
    expect(replay.headers['x-cache']).toBe('HIT');
    expect(replay.headers['x-simulated']).toBe('true');
  });

  it('a mixed answer (CN from sim, US from the vendor) is marked simulated', async () => {
    const { t, v } = await fallbackApp();
    v.failing.set('600519.SH', new AppError('UPSTREAM_ERROR', 'vendor down'));
    const res = await t.get('/v1/quotes?symbols=600519.SH,AAPL.US');
    expect(res.headers['x-upstream']).toBe('sim,vendor');
    expect(res.headers['x-simulated']).toBe('true');
  });

  it('the log warns once a minute per market when sim answers', async () => {
    const { t, v } = await fallbackApp();
    v.mode = new AppError('UPSTREAM_ERROR', 'vendor down');
    const warnings = () => t.logs.filter((l) => l.msg === SIM_WARNING).map((l) => ({ level: l.level, adapter: l.adapter, market: l.market }));
    await t.get('/v1/quotes?symbols=600519.SH');
    await t.get('/v1/quotes?symbols=000001.SZ');
    expect(warnings()).toEqual([{ level: 40, adapter: 'sim', market: 'CN' }]);
    clock += 60_000;
    await t.get('/v1/quotes?symbols=601318.SH');
    expect(warnings()).toHaveLength(2);
  });

  it('/v1/meta lists per market the adapters that may serve simulated data', async () => {
    const { t } = await fallbackApp();
    const meta = (await t.get('/v1/meta')).json().data;
    expect(meta.simulated).toBe(true);
    expect(meta.simulated_by_market).toEqual({ CN: ['sim'], HK: ['sim'], US: [], CN_FUTURES: ['sim'] });
  });
});

describe('/v1/meta simulated_by_market', () => {
  it('no sim anywhere: empty lists and simulated false', async () => {
    const now = () => CN_MORNING;
    const t = await open({ markets: { CN: ['vendor'], HK: ['vendor'], US: ['vendor'] }, adapters: [vendor('vendor', now)] });
    const meta = (await t.get('/v1/meta')).json().data;
    expect(meta.simulated).toBe(false);
    expect(meta.simulated_by_market).toEqual({ CN: [], HK: [], US: [], CN_FUTURES: [] });
  });

  it('a sim in one resource\'s override counts for that market', async () => {
    const now = () => CN_MORNING;
    const t = await open({
      markets: { CN: ['vendor'], HK: ['vendor'], US: ['vendor'] },
      overrides: { depth: { US: ['sim'] } },
      adapters: [vendor('vendor', now), createSimAdapter({}, { now })],
    });
    const meta = (await t.get('/v1/meta')).json().data;
    expect(meta.simulated).toBe(true);
    expect(meta.simulated_by_market).toEqual({ CN: [], HK: [], US: ['sim'], CN_FUTURES: [] });
  });

  it('the default sim-only config says simulated everywhere, and its answers carry X-Simulated', async () => {
    const now = () => CN_MORNING;
    const t = await open({ markets: { CN: ['sim'], HK: ['sim'], US: ['sim'] }, adapters: [createSimAdapter({}, { now })] });
    const meta = (await t.get('/v1/meta')).json().data;
    expect(meta.simulated_by_market).toEqual({ CN: ['sim'], HK: ['sim'], US: ['sim'], CN_FUTURES: ['sim'] });
    const res = await t.get('/v1/quotes?symbols=600519.SH');
    expect(res.headers['x-simulated']).toBe('true');
    // China futures take the CN chain: the sim's contracts are labelled simulated too.
    const contract = await t.get('/v1/quotes?symbols=au2604.SHF');
    expect(contract.statusCode).toBe(200);
    expect(contract.headers['x-simulated']).toBe('true');
    // Sim as the configured source is not a fallback: no warning.
    expect(t.logs.filter((l) => l.msg === SIM_WARNING)).toEqual([]);
  });
});
