// AdapterRouter (src/upstream/router.ts): capabilities are read, an adapter that does not serve a
// request is never called; the next adapter is tried on an upstream failure (5xx), never on a
// client error (4xx).
import { describe, expect, it } from 'vitest';
import type { AdapterCapabilities, Resource } from '../../adapters/types.ts';
import type { Region } from '../../src/domain.ts';
import { AppError } from '../../src/errors.ts';
import { createResilience, type Resilience } from '../../src/upstream/resilience.ts';
import { AdapterRouter, serves, type Need, type RoutingConfig } from '../../src/upstream/router.ts';
import { ALL_RESOURCES, fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';

const CN_HK_US: Record<Region, string[]> = { CN: ['a', 'b'], HK: ['a', 'b'], US: ['a', 'b'] };

function router(aCaps: Partial<AdapterCapabilities> = {}, routing: Partial<RoutingConfig> = {}, resilience = new Map<string, Resilience>()) {
  const a = fakeAdapter('a', { caps: aCaps });
  const b = fakeAdapter('b');
  const adapters = new Map<string, FakeAdapter>([['a', a], ['b', b]]);
  const r = new AdapterRouter(adapters, { markets: CN_HK_US, overrides: {}, ...routing }, resilience);
  return { r, a, b };
}

/** Run one call through the router: each adapter answers its own id unless told to throw. */
function run(r: AdapterRouter, resource: Resource, region: Region, need?: Need, throwing: Record<string, unknown> = {}) {
  const called: string[] = [];
  const result = r.run(resource, region, async (adapter) => {
    called.push(adapter.id);
    if (adapter.id in throwing) throw throwing[adapter.id];
    return adapter.id;
  }, { need });
  return { called, result };
}

describe('router: capabilities decide who is called', () => {
  it.each<[string, Partial<AdapterCapabilities>, Resource, Region, Need | undefined]>([
    ['a resource it does not offer', { resources: { ...ALL_RESOURCES, depth: false } }, 'depth', 'CN', undefined],
    ['a market it does not cover', { markets: ['CN'] }, 'quotes', 'US', undefined],
    ['a resource it covers in fewer markets (resourceMarkets)', { resourceMarkets: { exFactors: ['CN'] } }, 'exFactors', 'HK', undefined],
    ['a base period it does not serve natively', { periods: { '1m': false, '1d': true } }, 'candles', 'CN', { period: '1m' }],
    ['raw prices it cannot give', { rawPrices: false }, 'candles', 'CN', { period: '1d', rawPrices: true }],
  ])('an adapter is skipped, never called, for %s', async (_name, caps, resource, region, need) => {
    const { r } = router(caps);
    const { called, result } = run(r, resource, region, need);
    await expect(result).resolves.toMatchObject({ value: 'b', adapter: { id: 'b' } });
    expect(called).toEqual(['b']);
    expect(r.chain(resource, region, need).map((x) => x.id)).toEqual(['b']);
  });

  it('the same adapter is used where it does serve', async () => {
    const { r } = router({ resourceMarkets: { exFactors: ['CN'] }, periods: { '1m': false, '1d': true } });
    expect(r.chain('exFactors', 'CN').map((x) => x.id)).toEqual(['a', 'b']);
    expect(r.chain('candles', 'CN', { period: '1d' }).map((x) => x.id)).toEqual(['a', 'b']);
    const { called } = run(r, 'exFactors', 'CN');
    expect(called).toEqual(['a']);
  });

  it('serves() reads every capability', () => {
    const a = fakeAdapter('a', { caps: { resourceMarkets: { exFactors: ['CN'] }, periods: { '1m': false, '1d': true }, rawPrices: false } });
    expect(serves(a, 'exFactors', 'CN')).toBe(true);
    expect(serves(a, 'exFactors', 'US')).toBe(false);
    expect(serves(a, 'quotes', 'US')).toBe(true);
    expect(serves(a, 'candles', 'CN', { period: '1d' })).toBe(true);
    expect(serves(a, 'candles', 'CN', { period: '1m' })).toBe(false);
    expect(serves(a, 'candles', 'CN', { rawPrices: true })).toBe(false);
  });

  it('no adapter able to serve: 502 UPSTREAM_ERROR (not retryable) and nobody is called', async () => {
    const { r, a, b } = router({}, { markets: { CN: ['a'], HK: ['a'], US: ['a'] } });
    a.capabilities.resources.pools = false;
    const { called, result } = run(r, 'pools', 'HK');
    const error = await result.then(() => undefined, (e: unknown) => e) as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ reason: 'UPSTREAM_ERROR', status: 502, retryable: false, details: { resource: 'pools', market: 'HK' } });
    expect(called).toEqual([]);
    expect(a.calls).toEqual([]);
    expect(b.calls).toEqual([]);
  });

  it('a per-resource override replaces the market chain', async () => {
    const { r } = router({}, { overrides: { depth: { US: ['b'] } } });
    expect(r.configuredChain('depth', 'US')).toEqual(['b']);
    expect(r.configuredChain('depth', 'CN')).toEqual(['a', 'b']);
    expect(run(r, 'depth', 'US').called).toEqual(['b']);
  });

  it('routing naming an adapter that is not configured is refused', () => {
    const a = fakeAdapter('a');
    expect(() => new AdapterRouter(new Map([['a', a]]), { markets: { CN: ['a'], HK: ['a'], US: ['a'] }, overrides: { quotes: { US: ['ghost'] } } }, new Map()))
      .toThrow("routing names adapter 'ghost', which is not configured");
  });
});

describe('router: fallback', () => {
  it.each(['UPSTREAM_ERROR', 'UPSTREAM_BAD_RESPONSE', 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT'] as const)('%s from the first adapter: the next one answers', async (reason) => {
    const { r } = router();
    const { called, result } = run(r, 'quotes', 'CN', undefined, { a: new AppError(reason, 'down') });
    await expect(result).resolves.toMatchObject({ value: 'b', adapter: { id: 'b' } });
    expect(called).toEqual(['a', 'b']);
  });

  it('an unexpected exception also moves on', async () => {
    const { r } = router();
    const { called, result } = run(r, 'quotes', 'CN', undefined, { a: new TypeError('bug') });
    await expect(result).resolves.toMatchObject({ value: 'b' });
    expect(called).toEqual(['a', 'b']);
  });

  it.each(['SYMBOL_NOT_FOUND', 'INVALID_SYMBOL'] as const)('%s (4xx) is the answer: thrown as is, the next adapter is not called', async (reason) => {
    const { r } = router();
    const clientError = new AppError(reason, 'no');
    const { called, result } = run(r, 'quotes', 'CN', undefined, { a: clientError });
    await expect(result).rejects.toBe(clientError);
    expect(called).toEqual(['a']);
  });

  it('every adapter failing: the last error answers, with every attempt in details.attempts', async () => {
    const { r } = router();
    const last = new AppError('UPSTREAM_TIMEOUT', 'b slow', { details: { adapter: 'b' }, retryAfterSeconds: 3 });
    const { result } = run(r, 'quotes', 'CN', undefined, { a: new AppError('UPSTREAM_ERROR', 'a down', { details: { adapter: 'a', status: 500 } }), b: last });
    const error = await result.then(() => undefined, (e: unknown) => e) as AppError;
    expect(error).toMatchObject({ reason: 'UPSTREAM_TIMEOUT', status: 504, message: 'b slow', retryAfterSeconds: 3 });
    expect(error.details).toEqual({
      adapter: 'b',
      attempts: [
        { adapter: 'a', cause: 'http_status', status: 500, message: 'the vendor answered HTTP 500' },
        { adapter: 'b', cause: 'timeout', message: 'b slow' },
      ],
    });
  });

  it('only unexpected exceptions: UPSTREAM_ERROR with the cause', async () => {
    const { r } = router();
    const bug = new RangeError('b bug');
    const { result } = run(r, 'quotes', 'CN', undefined, { a: new TypeError('a bug'), b: bug });
    const error = await result.then(() => undefined, (e: unknown) => e) as AppError;
    expect(error).toMatchObject({ reason: 'UPSTREAM_ERROR', status: 502 });
    expect(error.cause).toBe(bug);
  });

  it('an adapter whose circuit is open is passed over without being called', async () => {
    const now = () => 0;
    const settings = { deadlineMs: 1_000, concurrency: 4, maxQueue: 16, breaker: { failureThreshold: 1, openMs: 30_000 } };
    const resilience = new Map<string, Resilience>([
      ['a', createResilience('a', settings, { now })],
      ['b', createResilience('b', settings, { now })],
    ]);
    const { r } = router({}, {}, resilience);
    const first = run(r, 'quotes', 'CN', undefined, { a: new AppError('UPSTREAM_ERROR', 'down') });
    await first.result;
    expect(resilience.get('a')?.health().circuit).toBe('open');
    const second = run(r, 'quotes', 'CN');
    await expect(second.result).resolves.toMatchObject({ value: 'b' });
    expect(second.called).toEqual(['b']);
  });

  it('the caller\'s neededAt goes to the first adapter; a fallback\'s deadline starts when it is tried', async () => {
    const seen: Array<[string, number | undefined]> = [];
    const stub = (id: string): Resilience => ({
      adapterId: id,
      deadlineMs: 1_000,
      call: (adapter, _resource, fn, neededAt) => {
        seen.push([adapter.id, neededAt]);
        return fn({});
      },
      health: () => ({ circuit: 'closed', inFlight: 0, queued: 0, budgetRemaining: null }),
    });
    const { r } = router({}, {}, new Map([['a', stub('a')], ['b', stub('b')]]));
    await r.run('quotes', 'CN', async (adapter) => {
      if (adapter.id === 'a') throw new AppError('UPSTREAM_ERROR', 'down');
      return adapter.id;
    }, { neededAt: 12_345 });
    expect(seen).toEqual([['a', 12_345], ['b', undefined]]);
  });
});
