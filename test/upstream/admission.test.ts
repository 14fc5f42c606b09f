// Admission by the vendor's recent latency (issue 27.5, src/upstream/resilience.ts), on real
// timers: a call whose concurrency slot comes with less deadline left than the vendor's recent
// answers took is not started (UPSTREAM_UNAVAILABLE with Retry-After, at once) and gives the
// breaker no verdict; with a breaker that opens on one failure, a queue that eats the deadline
// leaves it closed. A vendor that hangs with the whole deadline in hand still counts as failing.
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { createResilience, RecentLatency } from '../../src/upstream/resilience.ts';
import { fakeAdapter } from '../helpers/fake-adapter.ts';

const adapter = fakeAdapter('vendor');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function layer(deadlineMs: number) {
  return createResilience('vendor', { deadlineMs, concurrency: 1, maxQueue: 100, breaker: { failureThreshold: 1, openMs: 60_000 } }, { now: () => Date.now() });
}

describe('admission by recent latency', () => {
  it('RecentLatency: nothing needed until four answers, then their p90', () => {
    const l = new RecentLatency();
    for (const ms of [100, 120, 110]) l.note(ms);
    expect(l.need()).toBe(0);
    l.note(400);
    expect(l.need()).toBe(400);
    for (let i = 0; i < 40; i++) l.note(100);
    expect(l.need()).toBe(100);
  });

  it('a queued call with less deadline left than the vendor needs fails fast, and the breaker stays closed', async () => {
    const r = layer(350);
    const answer = () => sleep(100).then(() => 'ok');
    for (let i = 0; i < 4; i++) await r.call(adapter, 'quotes', answer);
    // One slot, 100 ms per answer: the 1st starts at 0, the 2nd at ~100, the 3rd at ~200 (150 ms
    // left: enough), the 4th and 5th at ~300 with ~50 ms left: not started.
    const started = performance.now();
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => r.call(adapter, 'quotes', answer)));
    const elapsed = performance.now() - started;
    expect(outcomes.slice(0, 3).map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    for (const o of outcomes.slice(3)) {
      expect(o.status).toBe('rejected');
      const error = (o as PromiseRejectedResult).reason as AppError;
      expect(error).toBeInstanceOf(AppError);
      expect(error.reason).toBe('UPSTREAM_UNAVAILABLE');
      expect(error.retryAfterSeconds).toBe(1);
    }
    // Refused when their slot came, not at their deadline.
    expect(elapsed).toBeLessThan(345);
    expect(r.health().circuit).toBe('closed');
  });

  it('a vendor that does not answer within a deadline it had whole still opens the breaker', async () => {
    const r = layer(200);
    for (let i = 0; i < 4; i++) await r.call(adapter, 'quotes', () => sleep(20).then(() => 'ok'));
    const error = await r.call(adapter, 'quotes', () => new Promise<never>(() => undefined)).catch((e: unknown) => e);
    expect((error as AppError).reason).toBe('UPSTREAM_TIMEOUT');
    expect(r.health().circuit).toBe('open');
  });
});
