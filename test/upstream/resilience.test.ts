// createResilience (src/upstream/resilience.ts): one deadline from the caller's neededAt that
// covers the queue, one breaker whose verdicts only upstream failures move, a bounded queue, and
// health(). Time is vitest's fake clock: Date.now drives both the deadline timers and deps.now.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CallContext } from '../../adapters/types.ts';
import { AppError } from '../../src/errors.ts';
import type { BreakerState } from '../../src/upstream/breaker.ts';
import type { UpstreamOutcomeEvent } from '../../src/upstream/http.ts';
import { createResilience, type ResilienceSettings } from '../../src/upstream/resilience.ts';
import { fakeAdapter } from '../helpers/fake-adapter.ts';

const T0 = Date.UTC(2025, 5, 18, 2, 15, 30);
const adapter = fakeAdapter('vendor');

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

function setup(overrides: Partial<ResilienceSettings> = {}, budgetRemaining?: () => number) {
  const events: UpstreamOutcomeEvent[] = [];
  const transitions: Array<[string, BreakerState]> = [];
  const settings: ResilienceSettings = {
    deadlineMs: 1_000,
    concurrency: 4,
    maxQueue: 16,
    breaker: { failureThreshold: 3, openMs: 30_000 },
    ...overrides,
  };
  const r = createResilience('vendor', settings, {
    now: () => Date.now(),
    metrics: { upstream: (event) => events.push(event) },
    onBreakerStateChange: (id, state) => transitions.push([id, state]),
    budgetRemaining,
  });
  return { r, events, transitions };
}

const hang = () => new Promise<never>(() => undefined);
const fail = (reason: 'UPSTREAM_ERROR' | 'UPSTREAM_BAD_RESPONSE' | 'UPSTREAM_TIMEOUT' | 'UPSTREAM_UNAVAILABLE' | 'SYMBOL_NOT_FOUND' | 'INVALID_SYMBOL') =>
  () => Promise.reject(new AppError(reason, `injected ${reason}`));

/** The settled outcome of a promise so far (without awaiting it). */
function watch<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then((value) => Object.assign(state, { settled: true, value }), (error: unknown) => Object.assign(state, { settled: true, error }));
  return state;
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('resilience: the deadline', () => {
  it('a call that does not answer fails UPSTREAM_TIMEOUT at its deadline and its signal is aborted', async () => {
    const { r, events } = setup();
    let signal: AbortSignal | undefined;
    const call = watch(r.call(adapter, 'quotes', (ctx) => {
      signal = ctx.signal;
      return hang();
    }));
    await vi.advanceTimersByTimeAsync(999);
    expect(call.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(call.error).toMatchObject({ reason: 'UPSTREAM_TIMEOUT', status: 504, details: { adapter: 'vendor', resource: 'quotes' } });
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBe(call.error);
    expect(events.map((e) => e.outcome)).toEqual(['timeout']);
  });

  it('the deadline runs from the caller\'s neededAt (when the data was first needed), not from the call', async () => {
    const { r } = setup();
    // deadlineMs 1000, needed 750 ms ago: 250 ms left.
    const call = watch(r.call(adapter, 'quotes', hang, Date.now() - 750));
    await vi.advanceTimersByTimeAsync(249);
    expect(call.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(call.error).toMatchObject({ reason: 'UPSTREAM_TIMEOUT' });
  });

  it('the call\'s context says when its signal fires (deadlineAt, epoch ms from neededAt)', async () => {
    const { r } = setup();
    let ctx: CallContext | undefined;
    watch(r.call(adapter, 'quotes', (c) => {
      ctx = c;
      return hang();
    }, Date.now() - 750));
    await vi.advanceTimersByTimeAsync(0);
    expect(ctx?.deadlineAt).toBe(T0 + 250);
    await vi.advanceTimersByTimeAsync(249);
    expect(ctx?.signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(Date.now()).toBe(ctx?.deadlineAt);
    expect(ctx?.signal?.aborted).toBe(true);
  });

  it('a deadline already past fails at once without calling the adapter', async () => {
    const { r } = setup();
    const fn = vi.fn(async () => 'x');
    const error = await rejection(r.call(adapter, 'quotes', fn, Date.now() - 1_001));
    expect(error.reason).toBe('UPSTREAM_TIMEOUT');
    expect(fn).not.toHaveBeenCalled();
  });

  // Issue 14 item 5: a call queued behind a hung one answers at its own deadline (300 ms), not
  // when the slot frees (1000 ms).
  it('the deadline covers the time queued behind the concurrency cap (issue 14 item 5)', async () => {
    const { r } = setup({ concurrency: 1 });
    const first = watch(r.call(adapter, 'quotes', hang));
    const fn = vi.fn(async () => 'late');
    const second = watch(r.call(adapter, 'quotes', fn, Date.now() - 700));
    await vi.advanceTimersByTimeAsync(300);
    expect(second.error).toMatchObject({ reason: 'UPSTREAM_TIMEOUT' });
    expect(fn).not.toHaveBeenCalled();
    expect(first.settled).toBe(false);
  });

  it('a call queued past its deadline never reaches the adapter', async () => {
    const { r } = setup({ concurrency: 1 });
    watch(r.call(adapter, 'quotes', hang));
    const fn = vi.fn(async () => 'late');
    const second = watch(r.call(adapter, 'quotes', fn, Date.now() - 700));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(second.error).toMatchObject({ reason: 'UPSTREAM_TIMEOUT' });
    expect(fn).not.toHaveBeenCalled();
  });
});

describe('resilience: the breaker', () => {
  it('opens after N consecutive failures, then fails fast with UPSTREAM_UNAVAILABLE without calling the adapter', async () => {
    const { r, events, transitions } = setup();
    for (let i = 0; i < 3; i += 1) {
      expect((await rejection(r.call(adapter, 'quotes', fail('UPSTREAM_ERROR')))).reason).toBe('UPSTREAM_ERROR');
    }
    expect(r.health().circuit).toBe('open');
    expect(transitions).toEqual([['vendor', 'open']]);
    const fn = vi.fn(async () => 'x');
    const error = await rejection(r.call(adapter, 'quotes', fn));
    expect(fn).not.toHaveBeenCalled();
    expect(error.reason).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.status).toBe(503);
    expect(error.retryAfterSeconds).toBe(30);
    expect(error.details).toEqual({ adapter: 'vendor', circuit: 'open' });
    expect(events.map((e) => e.outcome)).toEqual(['error', 'error', 'error', 'circuit_open']);
  });

  it('after openMs one probe is admitted; its success closes the circuit', async () => {
    const { r, transitions } = setup();
    for (let i = 0; i < 3; i += 1) await rejection(r.call(adapter, 'quotes', fail('UPSTREAM_TIMEOUT')));
    vi.setSystemTime(T0 + 30_000);
    expect(r.health().circuit).toBe('half_open');
    await expect(r.call(adapter, 'quotes', async () => 'ok')).resolves.toBe('ok');
    expect(r.health().circuit).toBe('closed');
    expect(transitions.map(([, s]) => s)).toEqual(['open', 'half_open', 'closed']);
  });

  it.each([
    ['a 4xx AppError', fail('SYMBOL_NOT_FOUND')],
    ['a 400 AppError', fail('INVALID_SYMBOL')],
    ['an undefined answer', async () => undefined],
    ['an empty answer', async () => new Map()],
  ])('%s is a success: the circuit stays closed after 20', async (_name, fn) => {
    const { r } = setup();
    for (let i = 0; i < 20; i += 1) await r.call(adapter, 'quotes', fn).catch(() => undefined);
    expect(r.health().circuit).toBe('closed');
  });

  it('a 4xx resets the consecutive-failure count', async () => {
    const { r } = setup();
    const run = (fn: () => Promise<unknown>) => r.call(adapter, 'quotes', fn).catch(() => undefined);
    await run(fail('UPSTREAM_ERROR'));
    await run(fail('UPSTREAM_ERROR'));
    await run(fail('SYMBOL_NOT_FOUND'));
    await run(fail('UPSTREAM_ERROR'));
    await run(fail('UPSTREAM_ERROR'));
    expect(r.health().circuit).toBe('closed');
    await run(fail('UPSTREAM_BAD_RESPONSE'));
    expect(r.health().circuit).toBe('open');
  });

  it('UPSTREAM_UNAVAILABLE (vendor 429, budget spent) gives no verdict: it neither opens nor resets', async () => {
    const { r, events } = setup();
    const run = (fn: () => Promise<unknown>) => r.call(adapter, 'quotes', fn).catch(() => undefined);
    for (let i = 0; i < 10; i += 1) await run(fail('UPSTREAM_UNAVAILABLE'));
    expect(r.health().circuit).toBe('closed');
    await run(fail('UPSTREAM_ERROR'));
    await run(fail('UPSTREAM_ERROR'));
    for (let i = 0; i < 10; i += 1) await run(fail('UPSTREAM_UNAVAILABLE'));
    expect(r.health().circuit).toBe('closed');
    await run(fail('UPSTREAM_ERROR'));
    expect(r.health().circuit).toBe('open');
    expect(events.filter((e) => e.outcome === 'rate_limited')).toHaveLength(20);
  });

  it('an unexpected exception is a failure, answered as UPSTREAM_ERROR with the cause kept', async () => {
    const { r } = setup({ breaker: { failureThreshold: 1, openMs: 30_000 } });
    const bug = new TypeError('boom');
    const error = await rejection(r.call(adapter, 'candles', () => Promise.reject(bug)));
    expect(error.reason).toBe('UPSTREAM_ERROR');
    expect(error.cause).toBe(bug);
    expect(error.details).toEqual({ adapter: 'vendor', resource: 'candles' });
    expect(r.health().circuit).toBe('open');
  });

  it('a timeout is a failure', async () => {
    const { r } = setup({ breaker: { failureThreshold: 1, openMs: 30_000 } });
    const call = watch(r.call(adapter, 'quotes', hang));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(call.error).toMatchObject({ reason: 'UPSTREAM_TIMEOUT' });
    expect(r.health().circuit).toBe('open');
  });
});

describe('resilience: concurrency, queue bound and health', () => {
  it('beyond maxQueue waiting calls, a new call fails fast with UPSTREAM_UNAVAILABLE (Retry-After 1)', async () => {
    const { r } = setup({ concurrency: 1, maxQueue: 2 }, () => 42);
    const started: number[] = [];
    let releaseAll!: () => void;
    const gate = new Promise<void>((resolve) => { releaseAll = resolve; });
    const held = (n: number) => async () => {
      started.push(n);
      await gate;
      return n;
    };
    const calls = [1, 2, 3].map((n) => r.call(adapter, 'quotes', held(n)));
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual([1]);
    expect(r.health()).toEqual({ circuit: 'closed', inFlight: 1, queued: 2, budgetRemaining: 42 });
    const fn = vi.fn(async () => 4);
    const error = await rejection(r.call(adapter, 'quotes', fn));
    expect(fn).not.toHaveBeenCalled();
    expect(error.reason).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.retryAfterSeconds).toBe(1);
    expect(error.details).toEqual({ adapter: 'vendor', resource: 'quotes' });
    releaseAll();
    await expect(Promise.all(calls)).resolves.toEqual([1, 2, 3]);
    expect(started).toEqual([1, 2, 3]);
    expect(r.health()).toEqual({ circuit: 'closed', inFlight: 0, queued: 0, budgetRemaining: 42 });
  });

  it('health() says null budget for an adapter without one, and reports an open circuit', async () => {
    const { r } = setup({ breaker: { failureThreshold: 1, openMs: 30_000 } });
    expect(r.health()).toEqual({ circuit: 'closed', inFlight: 0, queued: 0, budgetRemaining: null });
    const before = Date.now();
    await rejection(r.call(adapter, 'quotes', fail('UPSTREAM_ERROR')));
    const health = r.health();
    expect(health).toEqual({ circuit: 'open', circuitSince: health.circuitSince, inFlight: 0, queued: 0, budgetRemaining: null });
    // Since when the circuit has been out of `closed` (readiness reports it).
    expect(health.circuitSince).toBeGreaterThanOrEqual(before);
    expect(health.circuitSince).toBeLessThanOrEqual(Date.now());
    expect(r.adapterId).toBe('vendor');
    expect(r.deadlineMs).toBe(1_000);
  });
});
