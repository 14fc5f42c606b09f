// V8's memory-saver mode above a resident-memory line (issue 30 item 3; docs/operations.md#memory-what-is-bounded-and-the-v8-flags-of-npm-start).
//
// Under heavy cold load (every request a vendor or sim build, formats, statements, the stream)
// V8 lets its heap grow well past what is live and keeps the pages an ordinary full GC frees
// pooled and resident: in the mixed memory soak the process peaked ~200 MiB above its warm
// baseline while the live heap under load was ~40 MiB above it (BENCHMARKS.md). V8's
// memory-saver mode makes every full GC a memory-reducing one (compaction, pooled pages given
// back), and the saver sets the heap growing percent (memorySaverSwitch below), at 34–50 % more CPU per
// cold request in that soak than the mode alone. So it is on only
// while the process is above its line: the resident size it had once it listened, plus the
// bounds of what it caches (memory tier, response cache, the store's hot blocks), plus
// `server.memorySaverHeadroomBytes`. Below the line (cache hits, ordinary load) V8 runs as usual.
// It goes off again once resident memory is back under the line by a quarter of the headroom (at
// least 16 MiB), so it does not flap, nor log a switch every half second, around a small headroom. V8 reads the flag at each GC; the setting covers the whole process (the
// candle-build worker too); each process of a cluster watches its own.
import { setFlagsFromString } from 'node:v8';
import { heapGrowingFlagGiven, setHeapGrowingPercent } from './heap-growing.ts';

const FLAG = '--memory-saver-mode';

export interface MemorySaverOptions {
  /** Resident bytes above which the mode is on. */
  lineBytes: number;
  /** Bytes under the line at which it goes off again. */
  hysteresisBytes: number;
  /** Resident set size now (process.memoryUsage.rss). */
  rss: () => number;
  /** Turns the mode on or off (V8's flag). */
  set: (on: boolean) => void;
  /** How often RSS is read, ms (default 500). */
  intervalMs?: number;
  onChange?: (on: boolean, rss: number) => void;
}

export interface MemorySaver {
  readonly on: boolean;
  /** Reads RSS once and switches if needed (the timer calls it; tests call it directly). */
  check(): void;
  stop(): void;
}

export function watchMemory(options: MemorySaverOptions): MemorySaver {
  let on = false;
  const check = () => {
    const rss = options.rss();
    const next = on ? rss > options.lineBytes - options.hysteresisBytes : rss > options.lineBytes;
    if (next === on) return;
    on = next;
    options.set(on);
    options.onChange?.(on, rss);
  };
  const timer = setInterval(check, options.intervalMs ?? 500);
  timer.unref();
  return {
    get on() {
      return on;
    },
    check,
    stop() {
      clearInterval(timer);
      if (on) {
        on = false;
        options.set(false);
      }
    },
  };
}

/** V8's flag, process-wide. */
export function setMemorySaverMode(on: boolean): void {
  setFlagsFromString(on ? FLAG : '--no-memory-saver-mode');
}

/**
 * What turning the saver on or off sets: V8's memory-saver mode, and its heap growing percent.
 * V8 lets --heap-growing-percent override the factor of every GC mode, its memory-reducing one
 * included (src/heap/heap-controller.cc, GrowingFactor), so with npm start's 50 % the saver's
 * tighter heap limit never applied: measured in the mixed soak, the heap still grew to 1.5 × what
 * was live (BENCHMARKS.md, issue 30 item 3, twelfth session). So while on it sets its own percent
 * (server.memorySaverHeapGrowingPercent) and gives the serving one (MDQS_HEAP_GROWING_PERCENT;
 * undefined: V8's own, 0) back when off. --heap-growing-percent on node's command line or in
 * NODE_OPTIONS is the operator's and left alone. `growingWhenOn` is the percent set above the line
 * (undefined: the operator's), for the `memory saver on` log line. The setters and the
 * environment are parameters for tests; the server uses V8's flags and its own process.
 */
export function memorySaverSwitch(options: {
  saverPercent: number;
  servingPercent: number | undefined;
  env?: NodeJS.ProcessEnv;
  execArgv?: readonly string[];
  setMode?: (on: boolean) => void;
  setGrowing?: (percent: number) => void;
}): { set: (on: boolean) => void; growingWhenOn: number | undefined } {
  const operatorsFlag = heapGrowingFlagGiven(options.env ?? process.env, options.execArgv ?? process.execArgv);
  const setMode = options.setMode ?? setMemorySaverMode;
  const setGrowing = options.setGrowing ?? setHeapGrowingPercent;
  return {
    set(on) {
      setMode(on);
      if (!operatorsFlag) setGrowing(on ? options.saverPercent : options.servingPercent ?? 0);
    },
    growingWhenOn: operatorsFlag ? undefined : options.saverPercent,
  };
}

/** The flag given on node's command line or in NODE_OPTIONS: then it is the operator's, always on (or off). */
export function memorySaverFlagGiven(env: NodeJS.ProcessEnv, execArgv: readonly string[] = process.execArgv): boolean {
  const given = (arg: string) => /^--(no-)?memory[-_]saver[-_]mode(=|$)/.test(arg);
  return execArgv.some(given) || (env.NODE_OPTIONS ?? '').split(/\s+/).some(given);
}

/** Least distance under the line at which the mode goes off again. */
const MIN_HYSTERESIS_BYTES = 16 * 1024 * 1024;

/** The line: resident bytes at listen + the cache bounds + the headroom; off a quarter of the headroom (≥ 16 MiB) under it. */
export function memorySaverLine(rssAtListen: number, boundsBytes: number, headroomBytes: number): { lineBytes: number; hysteresisBytes: number } {
  return { lineBytes: rssAtListen + boundsBytes + headroomBytes, hysteresisBytes: Math.max(MIN_HYSTERESIS_BYTES, Math.floor(headroomBytes / 4)) };
}
