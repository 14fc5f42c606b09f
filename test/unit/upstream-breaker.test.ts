import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { createBreaker, type BreakerState } from '../../src/upstream/breaker.ts';

function setup(halfOpenProbes?: number) {
  let clock = 0;
  const transitions: BreakerState[] = [];
  const breaker = createBreaker(
    { failureThreshold: 3, openMs: 5_000, halfOpenProbes },
    { adapterId: 'vendor', now: () => clock, onStateChange: (s) => transitions.push(s) },
  );
  return { breaker, transitions, advance: (ms: number) => { clock += ms; } };
}

function refused(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected admit() to throw');
}

describe('createBreaker', () => {
  it('opens after 3 consecutive failures; a success in between resets the count', () => {
    const { breaker } = setup();
    breaker.admit().failure();
    breaker.admit().failure();
    breaker.admit().success();
    breaker.admit().failure();
    breaker.admit().failure();
    expect(breaker.state()).toBe('closed');
    breaker.admit().failure();
    expect(breaker.state()).toBe('open');
  });

  it('refuses calls while open with the seconds left until half-open', () => {
    const { breaker, advance } = setup();
    for (let i = 0; i < 3; i++) breaker.admit().failure();
    advance(1_200);
    const error = refused(() => breaker.admit());
    expect(error.reason).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.status).toBe(503);
    expect(error.retryAfterSeconds).toBe(4);
    expect(error.details).toEqual({ adapter: 'vendor', circuit: 'open' });
  });

  it('half-opens after openMs, admits one probe, and closes on its success', () => {
    const { breaker, transitions, advance } = setup();
    for (let i = 0; i < 3; i++) breaker.admit().failure();
    advance(4_999);
    expect(breaker.state()).toBe('open');
    advance(1);
    expect(breaker.state()).toBe('half_open');
    const probe = breaker.admit();
    expect(probe.probe).toBe(true);
    expect(refused(() => breaker.admit()).retryAfterSeconds).toBe(1);
    probe.success();
    expect(breaker.state()).toBe('closed');
    expect(transitions).toEqual(['open', 'half_open', 'closed']);
  });

  it('reopens for another openMs when the probe fails', () => {
    const { breaker, advance } = setup();
    for (let i = 0; i < 3; i++) breaker.admit().failure();
    advance(5_000);
    breaker.admit().failure();
    expect(breaker.state()).toBe('open');
    advance(4_999);
    expect(breaker.state()).toBe('open');
    advance(1);
    expect(breaker.state()).toBe('half_open');
  });

  it('admits halfOpenProbes probes at once and frees a slot on release', () => {
    const { breaker, advance } = setup(2);
    for (let i = 0; i < 3; i++) breaker.admit().failure();
    advance(5_000);
    const a = breaker.admit();
    breaker.admit();
    refused(() => breaker.admit());
    a.release();
    a.release();
    breaker.admit();
    refused(() => breaker.admit());
    expect(breaker.state()).toBe('half_open');
  });

  it('ignores verdicts from calls admitted before the last transition', () => {
    const { breaker, advance } = setup();
    const straggler = breaker.admit();
    for (let i = 0; i < 3; i++) breaker.admit().failure();
    straggler.success();
    expect(breaker.state()).toBe('open');
    advance(5_000);
    const probe = breaker.admit();
    straggler.failure();
    expect(breaker.state()).toBe('half_open');
    probe.success();
    expect(breaker.state()).toBe('closed');
  });
});
