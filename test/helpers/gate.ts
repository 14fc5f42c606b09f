// A gate fake adapters hold calls at (hold), until the test opens it (release): for deterministic
// "every request is in flight" tests.
export interface Gate {
  /** What a held call awaits; undefined while the gate is open. */
  readonly closed: Promise<void> | undefined;
  hold(): void;
  release(): void;
}

export function createGate(): Gate {
  let held: { promise: Promise<void>; open: () => void } | undefined;
  return {
    get closed() {
      return held?.promise;
    },
    hold() {
      if (held !== undefined) return;
      let open!: () => void;
      const promise = new Promise<void>((resolve) => { open = resolve; });
      held = { promise, open };
    },
    release() {
      held?.open();
      held = undefined;
    },
  };
}
