import { describe, expect, it } from 'vitest';
import { createBudget } from '../../src/upstream/budget.ts';

function setup(max: number, windowMs: number) {
  let clock = 10_000;
  const budget = createBudget({ max, windowMs }, () => clock);
  return { budget, advance: (ms: number) => { clock += ms; } };
}

describe('createBudget', () => {
  it('allows max requests in any window and refuses the next', () => {
    const { budget, advance } = setup(3, 1_000);
    expect(budget.remaining()).toBe(3);
    expect(budget.tryTake()).toBe(true);
    advance(100);
    expect(budget.tryTake()).toBe(true);
    advance(100);
    expect(budget.tryTake()).toBe(true);
    expect(budget.remaining()).toBe(0);
    expect(budget.tryTake()).toBe(false);
    expect(budget.retryAfterSeconds()).toBe(1);
  });

  it('slides: a slot frees exactly windowMs after the send that used it', () => {
    const { budget, advance } = setup(2, 10_000);
    budget.tryTake();
    advance(3_000);
    budget.tryTake();
    advance(6_999);
    expect(budget.tryTake()).toBe(false);
    advance(1);
    expect(budget.tryTake()).toBe(true);
    expect(budget.tryTake()).toBe(false);
    expect(budget.retryAfterSeconds()).toBe(3);
  });

  it('never lets more than max through in a window straddling a boundary (unlike a token bucket)', () => {
    const { budget, advance } = setup(5, 1_000);
    let sent = 0;
    for (let t = 0; t < 2_000; t += 50) {
      if (budget.tryTake()) sent++;
      advance(50);
    }
    expect(sent).toBe(10);
  });

  it('refuses everything while paused and reports the pause as Retry-After', () => {
    const { budget, advance } = setup(100, 1_000);
    budget.pauseFor(7_000);
    expect(budget.tryTake()).toBe(false);
    expect(budget.remaining()).toBe(0);
    expect(budget.retryAfterSeconds()).toBe(7);
    advance(6_500);
    expect(budget.retryAfterSeconds()).toBe(1);
    advance(500);
    expect(budget.tryTake()).toBe(true);
  });

  it('rejects impossible configurations', () => {
    expect(() => createBudget({ max: 0, windowMs: 1_000 }, Date.now)).toThrow(RangeError);
    expect(() => createBudget({ max: 1.5, windowMs: 1_000 }, Date.now)).toThrow(RangeError);
    expect(() => createBudget({ max: 10, windowMs: 0 }, Date.now)).toThrow(RangeError);
  });
});
