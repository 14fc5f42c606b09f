// One fetch per missing range across the fleet (issue 27.3): a store fill that found a closed gap
// takes a cross-instance lock on its series before the vendor call, and re-checks coverage once it
// holds it; the instances that waited read what the holder stored. One mechanism per deployment:
//
//   - Redis configured: the fill lock of the caches (cache/fill-lock.ts) under its own prefix
//     ('mdqs:store:': keys `mdqs:v2:store:lock:{<series>}`, channel `mdqs:v2:store:filled`), with
//     its renewed lease, so a dead holder is noticed within about a second;
//   - a shared PostgreSQL store without Redis: a session advisory lock per series (postgres.ts
//     openAdvisoryLock), on one connection of its own per process, tried (pg_try_advisory_lock)
//     and never waited for inside PostgreSQL, with LISTEN/NOTIFY waking the waiters;
//   - SQLite (one instance's own file): none; the tier's in-process lock is all it needs.
//
//   lock.run(series, { waitMs }, fill, readFilled)
//     fill:        serves the request under the lock (the store's coverage is read again there)
//     readFilled:  serves it without any vendor call of a closed range, or undefined (still a gap)
//   A waiter never waits longer than `waitMs` (the request's upstream deadline): then it fills
//   itself. A lock that cannot be reached (Redis or PostgreSQL down) fills directly, as one
//   instance alone would. The waits are counted in /metrics:
//     mdqs_history_lock_waits_total{mechanism,outcome}   acquired | filled_by_other | deadline | unavailable
//     mdqs_history_lock_wait_seconds{mechanism}          time from asking for the lock to going on
import { Counter, Histogram, type Registry } from 'prom-client';
import type { FillLock } from '../cache/fill-lock.ts';

export type LockMechanism = 'redis' | 'postgres';

export interface SeriesLock {
  readonly mechanism: LockMechanism;
  run<T>(series: string, options: { waitMs: number }, fill: () => Promise<T>, readFilled: () => Promise<T | undefined>): Promise<T>;
  close(): Promise<void>;
}

/** How one run went, for the metrics: the holder filled, another instance had, or the wait ran out. */
export type LockOutcome = 'acquired' | 'filled_by_other' | 'deadline' | 'unavailable';

/** The Redis fill lock (with its lease) as the store's series lock. `now` is the lock's own clock. */
export function redisSeriesLock(lock: FillLock, now: () => number): SeriesLock {
  return {
    mechanism: 'redis',
    run: (series, { waitMs }, fill, readFilled) => lock.run(`series:${series}`, { deadlineAt: now() + waitMs }, fill, readFilled),
    close: () => lock.close(),
  };
}

export interface SeriesLockMetrics {
  observe(mechanism: LockMechanism, outcome: LockOutcome, seconds: number): void;
}

export function createSeriesLockMetrics(registry: Registry | undefined): SeriesLockMetrics {
  if (registry === undefined) return { observe() {} };
  const registers = [registry];
  const waits = new Counter({
    name: 'mdqs_history_lock_waits_total',
    help: 'Store fills that asked for the fleet-wide series lock, by how they went on: acquired (this instance fetched), filled_by_other (another instance had fetched the gap), deadline (waited the request\'s deadline, then fetched itself), unavailable (lock not reachable: fetched directly)',
    labelNames: ['mechanism', 'outcome'],
    registers,
  });
  const seconds = new Histogram({
    name: 'mdqs_history_lock_wait_seconds',
    help: 'Time a store fill waited for the fleet-wide series lock (or for another instance\'s fill)',
    labelNames: ['mechanism'],
    buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  return {
    observe(mechanism, outcome, s) {
      waits.inc({ mechanism, outcome });
      seconds.observe({ mechanism }, s);
    },
  };
}

/** `lock.run` measured: which way it went, and how long it took to get there. */
export async function runMeasured<T>(
  lock: SeriesLock, metrics: SeriesLockMetrics, series: string, waitMs: number,
  fill: () => Promise<T>, readFilled: () => Promise<T | undefined>,
): Promise<T> {
  const started = performance.now();
  let settled = false;
  const mark = (outcome: LockOutcome) => {
    if (settled) return;
    settled = true;
    metrics.observe(lock.mechanism, outcome, (performance.now() - started) / 1000);
  };
  // Both lock implementations read (readFilled) once they hold the lock, before filling, and a
  // waiter reads after each wake-up: a fill with no read before it never reached the lock.
  let reached = false;
  return lock.run(series, { waitMs }, () => {
    mark(performance.now() - started >= waitMs ? 'deadline' : reached ? 'acquired' : 'unavailable');
    return fill();
  }, async () => {
    reached = true;
    const found = await readFilled();
    if (found !== undefined) mark('filled_by_other');
    return found;
  });
}

/** How `holdMeasured` went: this pass holds the lock (and must release it), or another instance had filled. */
export type Held<T> = { held: true; release(): void } | { held: false; value: T };

/**
 * `runMeasured` for a caller that fills on its own schedule (a store pass yielding vendor requests
 * to the loader): resolves once the lock is held, with `release` to call when the fill is done, or
 * with what `readFilled` found when another instance filled the gap meanwhile.
 */
export function holdMeasured<T>(
  lock: SeriesLock, metrics: SeriesLockMetrics, series: string, waitMs: number, readFilled: () => Promise<T | undefined>,
): Promise<Held<T>> {
  return new Promise<Held<T>>((resolve, reject) => {
    let entered = false;
    let release!: () => void;
    const done = new Promise<void>((settle) => {
      release = settle;
    });
    runMeasured<T | undefined>(lock, metrics, series, waitMs, async () => {
      entered = true;
      resolve({ held: true, release });
      await done;
      return undefined;
    }, readFilled).then(
      (value) => {
        if (!entered) resolve({ held: false, value: value as T });
      },
      (error: unknown) => {
        if (!entered) reject(error);
      },
    );
  });
}
