// V8's heap growing factor for the serving process (docs/operations.md, "Memory").
//
// `--heap-growing-percent=50` (the next full GC when the heap reaches 1.5 × what the last one
// kept) holds resident memory near the configured bounds under load, but during the boot, when
// the heap grows from nothing to its ~40 MiB of code and module state, it only adds full GCs:
// ~70 ms of a ~0.8 s start (BENCHMARKS.md, startup). So `npm start` passes the percentage in
// MDQS_HEAP_GROWING_PERCENT and the process sets it once it listens. V8 reads the flag each time
// it sizes the heap after a GC, so from then on it is the same as the command-line flag.
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_ENV = 'MDQS_HEAP_GROWING_PERCENT';

/** The percentage asked for (undefined: leave V8's own), or a message naming what is wrong. */
export function heapGrowingPercent(env: NodeJS.ProcessEnv): { percent?: number; problem?: string } {
  const raw = env[HEAP_GROWING_ENV]?.trim();
  if (raw === undefined || raw === '') return {};
  const percent = Number(raw);
  if (!/^\d+$/.test(raw) || percent < 1 || percent > 1000) {
    return { problem: `${HEAP_GROWING_ENV} must be a whole number of percent from 1 to 1000 (got ${JSON.stringify(raw)}); unset it to keep V8's own growing factor` };
  }
  return { percent };
}

/** Applies it to this process (and the workers it starts afterwards). */
export function applyHeapGrowing(percent: number | undefined): void {
  if (percent !== undefined) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
