// V8's heap growing factor for the serving process (docs/operations.md, "Memory").
//
// `--heap-growing-percent=50` (the next full GC when the heap reaches 1.5 × what the last one
// kept) holds resident memory near the configured bounds under load, but during the boot, when
// the heap grows from nothing to its ~40 MiB of code and module state, it only adds full GCs:
// ~70 ms of a ~0.8 s start (BENCHMARKS.md, startup). So `npm start` passes the percentage in
// MDQS_HEAP_GROWING_PERCENT and the process sets it once it listens. V8 reads the flag each time
// it sizes the heap after a GC, so from then on it is the same as the command-line flag. V8's
// flags are per process: the setting covers every thread of the process that sets it (the
// candle-build worker included), and each process of a cluster sets its own.
import { setFlagsFromString } from 'node:v8';

const HEAP_GROWING_ENV = 'MDQS_HEAP_GROWING_PERCENT';
const FLAG = '--heap-growing-percent';

/**
 * The percentage asked for, or a message naming what is wrong. Undefined percent: leave V8's
 * factor as it is (the variable is unset or empty, or the flag itself is on node's command line
 * or in NODE_OPTIONS, which then wins).
 */
export function heapGrowingPercent(env: NodeJS.ProcessEnv, execArgv: readonly string[] = process.execArgv): { percent?: number; problem?: string; flagGiven?: boolean } {
  const raw = env[HEAP_GROWING_ENV]?.trim();
  if (raw === undefined || raw === '') return {};
  const percent = Number(raw);
  if (!/^\d+$/.test(raw) || percent < 1 || percent > 1000) {
    return { problem: `${HEAP_GROWING_ENV} must be a whole number of percent from 1 to 1000 (got ${JSON.stringify(raw)}); set it empty to keep V8's own growing factor` };
  }
  if (heapGrowingFlagGiven(env, execArgv)) return { flagGiven: true };
  return { percent };
}

/** --heap-growing-percent on node's command line or in NODE_OPTIONS: the operator's, which nothing here changes. */
export function heapGrowingFlagGiven(env: NodeJS.ProcessEnv, execArgv: readonly string[] = process.execArgv): boolean {
  const given = (arg: string) => arg === FLAG || arg.startsWith(`${FLAG}=`) || arg === '--heap_growing_percent' || arg.startsWith('--heap_growing_percent=');
  return execArgv.some(given) || (env.NODE_OPTIONS ?? '').split(/\s+/).some(given);
}

/** What is logged when the variable gives way to the flag itself. */
export const HEAP_GROWING_IGNORED = `${HEAP_GROWING_ENV} ignored: --heap-growing-percent is on node's command line or in NODE_OPTIONS`;

/** Applies it to this process. */
export function applyHeapGrowing(percent: number | undefined): void {
  if (percent !== undefined) setHeapGrowingPercent(percent);
}

/** Sets V8's factor now (0: V8's own, which depends on its GC mode). */
export function setHeapGrowingPercent(percent: number): void {
  setFlagsFromString(`${FLAG}=${percent}`);
}
