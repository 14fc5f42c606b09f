// A bound on the base bars that heavy candle requests hold at once (issue 15 item 4). A series the
// worker builds (over 20,000 base bars) holds its base columns, their copy for the worker and the
// built result from fetch to answer: 60,000 one-minute bars are ~4 MB of columns. Without a bound,
// a burst of such requests (32 connections of 60m × 1000) held them all at once while they queued
// for the one build worker, and that, not the caches, made the peak RSS. Requests wait for room
// here before they fetch, first come first served; a request larger than the whole budget runs
// alone. The budget is memory, not concurrency: light requests never wait, and the build worker
// stays busy with what is admitted, so throughput is unchanged (BENCHMARKS.md, memory).
export interface BarsGate {
  /** Waits until `bars` fit (or nothing else is in), then holds them until release() is called. */
  acquire(bars: number): Promise<() => void>;
  /** Bars held now. */
  readonly held: number;
  /** Requests waiting for room. */
  readonly waiting: number;
}

export function createBarsGate(budget: number): BarsGate {
  let held = 0;
  const queue: Array<{ bars: number; admit: (release: () => void) => void }> = [];
  const fits = (bars: number) => held === 0 || held + bars <= budget;
  const grant = (bars: number): (() => void) => {
    held += bars;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held -= bars;
      while (queue.length > 0 && fits(queue[0].bars)) {
        const next = queue.shift()!;
        next.admit(grant(next.bars));
      }
    };
  };
  return {
    acquire(bars) {
      const weight = Math.max(0, Math.min(bars, budget));
      if (queue.length === 0 && fits(weight)) return Promise.resolve(grant(weight));
      return new Promise((admit) => queue.push({ bars: weight, admit }));
    },
    get held() {
      return held;
    },
    get waiting() {
      return queue.length;
    },
  };
}
