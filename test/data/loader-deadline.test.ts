// Which deadline fires on the data path (issue 8.3: "one deadline per vendor, from config, the one
// that actually fires"): the loader → router → the adapter's resilience layer, whose deadlineMs is
// the vendor's configured timeout (registry.ts resilienceSettings). Fake timers drive the clock.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Loader, type DataEntry } from '../../src/data/loader.ts';
import { createResources } from '../../src/data/resources/index.ts';
import { createMemoryTier } from '../../src/cache/memory-tier.ts';
import { createResilience, type Resilience } from '../../src/upstream/resilience.ts';
import { AdapterRouter } from '../../src/upstream/router.ts';
import { fakeAdapter } from '../helpers/fake-adapter.ts';
import { ref } from './fakes.ts';
import { POLICY, T0 } from './harness.ts';

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A hung vendor whose resilience deadline is `vendorMs`, under a loader whose default is `loaderMs`. */
function setup(vendorMs: number, loaderMs: number) {
  const now = () => Date.now();
  const vendor = fakeAdapter('vendor', { known: ['600519.SH'] });
  vendor.hold();
  const resilience = new Map<string, Resilience>([['vendor', createResilience('vendor', {
    deadlineMs: vendorMs, concurrency: 4, maxQueue: 16, breaker: { failureThreshold: 5, openMs: 30_000 },
  }, { now })]]);
  const router = new AdapterRouter(new Map([['vendor', vendor]]), { markets: { CN: ['vendor'], HK: ['vendor'], US: ['vendor'] }, overrides: {} }, resilience);
  const loader = new Loader({
    router,
    tiers: [createMemoryTier<DataEntry>({ maxBytes: 1 << 20, now })],
    now,
    isSimulated: () => false,
  });
  const resources = createResources(POLICY);
  const state: { failed?: unknown } = {};
  void loader.load(resources.quotes, [ref('600519.SH')]).then((r) => {
    state.failed = r.failed.get('600519.SH');
  });
  return { state, vendor };
}

describe('loader deadline', () => {
  it('the loader\'s deadline fires for a hung vendor (the failed key is UPSTREAM_TIMEOUT)', async () => {
    const { state } = setup(100, 100);
    await vi.advanceTimersByTimeAsync(99);
    expect(state.failed).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(state.failed).toMatchObject({ reason: 'UPSTREAM_TIMEOUT' });
  });

  // Issue 8.3: the adapter's own configured deadline is the one that fires.
  it('a vendor\'s shorter configured deadline fires (100 ms under a 5 000 ms default)', async () => {
    const { state } = setup(100, 5_000);
    await vi.advanceTimersByTimeAsync(100);
    expect(state.failed).toMatchObject({ reason: 'UPSTREAM_TIMEOUT' });
  });

  // Tickflow's default 8 000 ms is not cut at upstream.deadlineMs (5 000).
  it('a vendor\'s longer configured deadline is not cut short by upstream.deadlineMs', async () => {
    const { state } = setup(8_000, 5_000);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(state.failed).toBeUndefined();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(state.failed).toMatchObject({ reason: 'UPSTREAM_TIMEOUT' });
  });
});
