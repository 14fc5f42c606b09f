import { describe, expect, it } from 'vitest';
import pLimit from 'p-limit';
import { AppError } from '../../src/errors.ts';
import { createBatchLoader, createSingleFlight } from '../../src/cache/batch-loader.ts';

interface Gate {
  promise: Promise<void>;
  open(): void;
}

function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => { open = resolve; });
  return { promise, open };
}

const keysFrom = (from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_, i) => `S${from + i}`);

/** A loader that records its calls and answers `value:<key>` for every key once `release` opens. */
function recorder(options: { maxBatch: number; concurrency?: number; release?: Gate; missing?: Set<string> }) {
  const calls: string[][] = [];
  let active = 0;
  let maxActive = 0;
  const loader = createBatchLoader<string, string>({
    maxBatch: options.maxBatch,
    concurrency: options.concurrency ?? 4,
    async load(keys) {
      calls.push(keys);
      active++;
      maxActive = Math.max(maxActive, active);
      await (options.release?.promise ?? Promise.resolve());
      await new Promise((resolve) => setImmediate(resolve));
      active--;
      return new Map(keys.filter((k) => !options.missing?.has(k)).map((k) => [k, `value:${k}`]));
    },
  });
  return { loader, calls, maxActive: () => maxActive };
}

describe('createBatchLoader', () => {
  it('makes one load call for 200 concurrent identical loads', async () => {
    const release = gate();
    const { loader, calls } = recorder({ maxBatch: 50, release });
    const all = Array.from({ length: 200 }, () => loader.loadMany(['600000.SH']));
    expect(loader.inFlight).toBe(1);
    release.open();
    const results = await Promise.all(all);
    expect(calls).toEqual([['600000.SH']]);
    for (const result of results) expect(result).toEqual(new Map([['600000.SH', 'value:600000.SH']]));
    expect(loader.inFlight).toBe(0);
  });

  it('splits 100 keys into 2 calls of 50 with maxBatch 50', async () => {
    const { loader, calls } = recorder({ maxBatch: 50 });
    const result = await loader.loadMany(keysFrom(1, 100));
    expect(calls).toEqual([keysFrom(1, 50), keysFrom(51, 100)]);
    expect(result.size).toBe(100);
    expect(result.get('S77')).toBe('value:S77');
  });

  it('loads each key once when concurrent batches overlap (1–60 and 40–100)', async () => {
    const release = gate();
    const { loader, calls } = recorder({ maxBatch: 50, release });
    const first = loader.loadMany(keysFrom(1, 60));
    const second = loader.loadMany(keysFrom(40, 100));
    release.open();
    const [a, b] = await Promise.all([first, second]);

    expect(calls).toEqual([keysFrom(1, 50), keysFrom(51, 60), keysFrom(61, 100)]);
    const loaded = calls.flat();
    expect(loaded.length).toBe(100);
    expect(new Set(loaded).size).toBe(100);
    expect([...a.keys()]).toEqual(keysFrom(1, 60));
    expect([...b.keys()]).toEqual(keysFrom(40, 100));
    expect(b.get('S45')).toBe('value:S45');
    expect(b.get('S100')).toBe('value:S100');
  });

  it('reports how many keys joined a fetch in flight', async () => {
    const release = gate();
    const joins: number[] = [];
    const loader = createBatchLoader<string, number>({
      maxBatch: 10, concurrency: 2, onJoin: (n) => joins.push(n),
      load: async (keys) => {
        await release.promise;
        return new Map(keys.map((k) => [k, k.length]));
      },
    });
    const first = loader.loadMany(['A', 'B', 'C']);
    const second = loader.loadMany(['B', 'C', 'D']);
    release.open();
    await Promise.all([first, second]);
    expect(joins).toEqual([2]);
  });

  it('loads a key repeated in one call once', async () => {
    const { loader, calls } = recorder({ maxBatch: 50 });
    const result = await loader.loadMany(['A', 'B', 'A', 'B', 'A']);
    expect(calls).toEqual([['A', 'B']]);
    expect([...result.entries()]).toEqual([['A', 'value:A'], ['B', 'value:B']]);
  });

  it('respects the concurrency limit', async () => {
    const { loader, calls, maxActive } = recorder({ maxBatch: 10, concurrency: 3 });
    await loader.loadMany(keysFrom(1, 100));
    expect(calls.length).toBe(10);
    expect(maxActive()).toBe(3);
  });

  it('shares one p-limit between loaders', async () => {
    const limit = pLimit(1);
    let active = 0;
    let maxActive = 0;
    const load = async (keys: string[]) => {
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise((resolve) => setImmediate(resolve));
      active--;
      return new Map(keys.map((k) => [k, k]));
    };
    const quotes = createBatchLoader<string, string>({ maxBatch: 1, concurrency: limit, load });
    const depth = createBatchLoader<string, string>({ maxBatch: 1, concurrency: limit, load });
    await Promise.all([quotes.loadMany(['A', 'B']), depth.loadMany(['A', 'B'])]);
    expect(maxActive).toBe(1);
  });

  it('resolves absent keys as undefined and fails only the keys of a failed chunk', async () => {
    const boom = new AppError('UPSTREAM_ERROR', 'upstream failed');
    const loader = createBatchLoader<string, string>({
      maxBatch: 2, concurrency: 2,
      load: async (keys) => {
        if (keys.includes('BAD')) throw boom;
        return new Map(keys.filter((k) => k !== 'GONE').map((k) => [k, `value:${k}`]));
      },
    });
    const result = await loader.loadMany(['A', 'GONE', 'BAD', 'C', 'D']);
    expect(result).toEqual(new Map<string, unknown>([
      ['A', 'value:A'], ['GONE', undefined], ['BAD', boom], ['C', boom], ['D', 'value:D'],
    ]));
    expect(result.has('GONE')).toBe(true);
    await expect(loader.load('BAD')).rejects.toBe(boom);
    expect(await loader.load('A')).toBe('value:A');
    expect(await loader.load('GONE')).toBeUndefined();
  });

  it('turns a non-Error rejection into an Error', async () => {
    const loader = createBatchLoader<string, string>({
      maxBatch: 5, concurrency: 1, load: () => Promise.reject('nope'),
    });
    const result = await loader.loadMany(['A']);
    expect(result.get('A')).toBeInstanceOf(Error);
    expect((result.get('A') as Error).message).toBe('nope');
  });

  it('removes settled keys from flight, so a later call loads again', async () => {
    const { loader, calls } = recorder({ maxBatch: 50 });
    await loader.loadMany(['A']);
    expect(loader.inFlight).toBe(0);
    await loader.loadMany(['A']);
    expect(calls).toEqual([['A'], ['A']]);
  });

  it('refuses new chunks with UPSTREAM_UNAVAILABLE when maxPending chunks are queued', async () => {
    const release = gate();
    const loader = createBatchLoader<string, string>({
      maxBatch: 1, concurrency: 1, maxPending: 1,
      load: async (keys) => {
        await release.promise;
        return new Map(keys.map((k) => [k, k]));
      },
    });
    const pending = loader.loadMany(['A', 'B', 'C']);
    release.open();
    const result = await pending;
    expect(result.get('A')).toBe('A');
    expect(result.get('B')).toBe('B');
    const shed = result.get('C') as AppError;
    expect(shed).toBeInstanceOf(AppError);
    expect(shed.reason).toBe('UPSTREAM_UNAVAILABLE');
    expect(shed.retryAfterSeconds).toBe(1);
  });
});

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
