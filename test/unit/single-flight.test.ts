// createSingleFlight (src/data/single-flight.ts): one run per key at a time, shared by every caller.
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { createSingleFlight } from '../../src/data/single-flight.ts';

interface Gate {
  promise: Promise<void>;
  open(): void;
}

function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => { open = resolve; });
  return { promise, open };
}

describe('createSingleFlight', () => {
  it('runs fn once for 200 concurrent callers and again after it settles', async () => {
    const release = gate();
    let calls = 0;
    let joins = 0;
    const flight = createSingleFlight({ onJoin: () => { joins++; } });
    const fn = async () => {
      calls++;
      await release.promise;
      return { bars: 3 };
    };
    const all = Array.from({ length: 200 }, () => flight.run('pool:CSI300', fn));
    expect(flight.size).toBe(1);
    release.open();
    const results = await Promise.all(all);
    expect(calls).toBe(1);
    expect(joins).toBe(199);
    expect(new Set(results).size).toBe(1);
    expect(flight.size).toBe(0);
    await flight.run('pool:CSI300', fn);
    expect(calls).toBe(2);
  });

  it('shares a synchronous throw as a rejection and forgets the key', async () => {
    const flight = createSingleFlight();
    const error = new Error('sync');
    const fn = (): Promise<number> => { throw error; };
    const [a, b] = await Promise.allSettled([flight.run('k', fn), flight.run('k', fn)]);
    expect(a).toEqual({ status: 'rejected', reason: error });
    expect(b).toEqual({ status: 'rejected', reason: error });
    expect(flight.size).toBe(0);
  });

  it('keeps different keys apart', async () => {
    const flight = createSingleFlight();
    const [x, y] = await Promise.all([flight.run('x', async () => 1), flight.run('y', async () => 2)]);
    expect([x, y]).toEqual([1, 2]);
  });
});
