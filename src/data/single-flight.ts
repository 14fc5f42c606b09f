// Single-flight: one piece of work per key at a time, shared by every caller that arrives while it
// runs. The loader (one fetch per data key, several keys of a native batch sharing one fetch) and
// the response cache (one build per canonical request) both use it. There is deliberately no abort
// signal: one run serves every waiter, so a client that disconnects must not cancel it for the others.
export interface SingleFlight {
  /** One call of `fn` per key at a time; callers arriving meanwhile share its promise. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /** The work in flight for `key`, if any (counted as a join). */
  join<T>(key: string): Promise<T> | undefined;
  /** Registers `work` (started by the caller, e.g. one fetch for several keys) as `key`'s until it settles. */
  track<T>(key: string, work: Promise<T>): Promise<T>;
  readonly size: number;
}

/** See SingleFlight. `onJoin` counts callers that shared work already in flight. */
export function createSingleFlight(options: { onJoin?: () => void } = {}): SingleFlight {
  const inFlight = new Map<string, Promise<unknown>>();
  const track = <T>(key: string, work: Promise<T>): Promise<T> => {
    const settle = (): void => {
      if (inFlight.get(key) === work) inFlight.delete(key);
    };
    work.then(settle, settle);
    inFlight.set(key, work);
    return work;
  };
  const join = <T>(key: string): Promise<T> | undefined => {
    const shared = inFlight.get(key) as Promise<T> | undefined;
    if (shared !== undefined) options.onJoin?.();
    return shared;
  };
  return {
    run<T>(key: string, fn: () => Promise<T>): Promise<T> {
      // Deferred by one microtask so a synchronous throw in fn becomes a rejection for everyone.
      return join<T>(key) ?? track(key, Promise.resolve().then(fn));
    },
    join,
    track,
    get size() {
      return inFlight.size;
    },
  };
}
