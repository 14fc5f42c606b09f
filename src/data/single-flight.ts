// Single-flight for one-key work (the response cache builds a response once for N concurrent
// identical misses). There is deliberately no abort signal: one build serves every waiter, so a
// client that disconnects must not cancel it for the others.
export interface SingleFlight {
  run<T>(key: string, fn: () => Promise<T>): Promise<T>;
  readonly size: number;
}

/** One call of `fn` per key at a time; callers arriving meanwhile share its promise. No abort signal, as above. */
export function createSingleFlight(options: { onJoin?: () => void } = {}): SingleFlight {
  const inFlight = new Map<string, Promise<unknown>>();
  return {
    run<T>(key: string, fn: () => Promise<T>): Promise<T> {
      const shared = inFlight.get(key);
      if (shared) {
        options.onJoin?.();
        return shared as Promise<T>;
      }
      // Deferred by one microtask so a synchronous throw in fn becomes a rejection for everyone.
      const promise = Promise.resolve().then(fn);
      const settle = (): void => {
        if (inFlight.get(key) === promise) inFlight.delete(key);
      };
      promise.then(settle, settle);
      inFlight.set(key, promise);
      return promise;
    },
    get size() {
      return inFlight.size;
    },
  };
}
