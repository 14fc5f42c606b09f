// An adapter's concurrency slots in two lanes. User calls (the `user` lane) take any free slot
// and are served first when a slot frees; background calls (the recorder, `history warm`) take
// a slot only while fewer than `backgroundMax` of them run and another is free, so they always
// leave `concurrency − backgroundMax` slots to users: a user call issued while background work
// holds every slot it may is started at once, never queued behind it.
//
//   const lanes = createLanes(4, 3);
//   await lanes.run('background', () => vendorCall());   // waits for a background slot
//   await lanes.run('user', () => vendorCall());         // first in line when a slot frees
//   lanes.activeCount / lanes.pendingCount('user')

export type Lane = 'user' | 'background';

export interface Lanes {
  run<T>(lane: Lane, fn: () => Promise<T>): Promise<T>;
  /** Calls holding a slot (both lanes). */
  readonly activeCount: number;
  /** Calls waiting for a slot in `lane` (both lanes when omitted). */
  pendingCount(lane?: Lane): number;
  /** Background calls holding a slot. */
  readonly backgroundActive: number;
}

/** `backgroundMax`: slots background calls may hold together (at least 1, at most `concurrency`). */
export function createLanes(concurrency: number, backgroundMax: number): Lanes {
  const slots = Math.max(1, Math.floor(concurrency));
  const background = Math.min(slots, Math.max(1, Math.floor(backgroundMax)));
  let active = 0;
  let activeBackground = 0;
  const waiting: Record<Lane, Array<() => void>> = { user: [], background: [] };

  const next = (): void => {
    while (active < slots) {
      const user = waiting.user.shift();
      if (user !== undefined) {
        user();
        continue;
      }
      if (activeBackground >= background) return;
      const bg = waiting.background.shift();
      if (bg === undefined) return;
      bg();
    }
  };

  return {
    run<T>(lane: Lane, fn: () => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const start = (): void => {
          active += 1;
          if (lane === 'background') activeBackground += 1;
          let result: Promise<T>;
          try {
            result = fn();
          } catch (error) {
            result = Promise.reject(error);
          }
          result.then(resolve, reject).finally(() => {
            active -= 1;
            if (lane === 'background') activeBackground -= 1;
            next();
          });
        };
        waiting[lane].push(start);
        next();
      });
    },
    get activeCount() {
      return active;
    },
    pendingCount(lane?: Lane) {
      return lane === undefined ? waiting.user.length + waiting.background.length : waiting[lane].length;
    },
    get backgroundActive() {
      return activeBackground;
    },
  };
}
