// resilienceSettings and isSimAdapter (src/upstream/registry.ts): the deadline that fires is the
// vendor's (block http.timeoutMs, else its default), the breaker the block's, else upstream's.
import { describe, expect, it } from 'vitest';
import { isSimAdapter, resilienceSettings } from '../../src/upstream/registry.ts';

const UPSTREAM = { deadlineMs: 5_000, concurrency: 16, breaker: { failureThreshold: 5, openMs: 30_000 } };

describe('resilienceSettings', () => {
  it('a vendor block\'s http.timeoutMs and http.breaker win', () => {
    expect(resilienceSettings('tickflow', { http: { timeoutMs: 8_000, breaker: { failureThreshold: 2, openMs: 1_000 } } }, UPSTREAM)).toEqual({
      deadlineMs: 8_000, concurrency: 16, maxQueue: 1_024, breaker: { failureThreshold: 2, openMs: 1_000 },
    });
  });

  it('an HTTP vendor without timeoutMs gets its own default, not upstream.deadlineMs', () => {
    expect(resilienceSettings('eastmoney', {}, UPSTREAM).deadlineMs).toBe(5_000);
    expect(resilienceSettings('yahoo', undefined, UPSTREAM).deadlineMs).toBe(8_000);
    expect(resilienceSettings('tickflow', undefined, UPSTREAM).deadlineMs).toBe(8_000);
    expect(resilienceSettings('tf-free', { type: 'tickflow' }, UPSTREAM).deadlineMs).toBe(8_000);
  });

  it('a non-HTTP adapter uses upstream.deadlineMs and upstream.breaker', () => {
    expect(resilienceSettings('sim', {}, { ...UPSTREAM, deadlineMs: 1_234, concurrency: 2 })).toEqual({
      deadlineMs: 1_234, concurrency: 2, maxQueue: 128, breaker: { failureThreshold: 5, openMs: 30_000 },
    });
  });

  it('the queue bound is at least 64', () => {
    expect(resilienceSettings('sim', {}, { ...UPSTREAM, concurrency: 1 }).maxQueue).toBe(64);
  });
});

describe('isSimAdapter', () => {
  it('the sim adapter under any id, and nothing else', () => {
    expect(isSimAdapter('sim', undefined)).toBe(true);
    expect(isSimAdapter('backup', { type: 'sim' })).toBe(true);
    expect(isSimAdapter('tickflow', {})).toBe(false);
    expect(isSimAdapter('sim', { type: 'tickflow' })).toBe(false);
  });
});
