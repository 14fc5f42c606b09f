// Candle building off the event loop (issue 14 item 2): adjusting and aggregating a long series is
// CPU work of hundreds of ms (120,000 one-minute bars into 15m: ~200 ms on this machine), which
// would hold every other request, /healthz included. Series above `inlineMaxBars` are built in a
// worker thread (columns go over as transferred Float64Arrays, no copy); short ones inline, where
// a worker's round trip would cost more than the work.
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { AppError } from '../errors.ts';
import { buildCandles } from '../candles/pipeline.ts';
import type { AdjustEvent } from '../candles/adjust.ts';
import type { WindowOptions } from '../candles/window.ts';
import type { AdjustType, Candles, Period } from '../domain.ts';
import type { CalendarKey } from '../markets/calendar.ts';
import { aggregationFor, tradeDateStartFn } from './candle-plan.ts';

/** Everything a build needs, as plain data (functions are rebuilt from period and region). */
export interface BuildSpec {
  raw: Candles;
  events: AdjustEvent[];
  adjust: AdjustType;
  period: Period;
  /** The symbol's calendar (a futures product's for a contract). */
  region: CalendarKey;
  /** The base bars are minutes (their trade date's factor applies). */
  minuteBase: boolean;
  window?: WindowOptions;
}

const COLUMNS = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prev_close', 'open_interest', 'settlement_price'] as const;
type Column = (typeof COLUMNS)[number];
type Packed = Partial<Record<Column, Float64Array>>;

export function buildFromSpec(spec: BuildSpec): Candles {
  return buildCandles({
    raw: spec.raw,
    events: spec.events,
    adjust: spec.adjust,
    tradeDateStart: spec.minuteBase ? tradeDateStartFn(spec.region) : undefined,
    aggregate: aggregationFor(spec.period, spec.region),
    window: spec.window,
  });
}

export function pack(candles: Candles): { packed: Packed; transfer: ArrayBuffer[] } {
  const packed: Packed = {};
  const transfer: ArrayBuffer[] = [];
  for (const column of COLUMNS) {
    const values = candles[column];
    if (values === undefined) continue;
    const array = Float64Array.from(values);
    packed[column] = array;
    transfer.push(array.buffer);
  }
  return { packed, transfer };
}

/** The worker's side of a job: builds it and posts the answer (or the error). Exported for tests. */
export function answerBuild(
  message: { id: number; spec: Omit<BuildSpec, 'raw'> & { raw: Packed } },
  post: (answer: { id: number; packed?: Packed; error?: string }, transfer?: ArrayBuffer[]) => void,
): void {
  try {
    const candles = buildFromSpec({ ...message.spec, raw: viewPacked(message.spec.raw) });
    const { packed, transfer } = pack(candles);
    post({ id: message.id, packed }, transfer);
  } catch (error) {
    post({ id: message.id, error: (error as Error).message });
  } finally {
    // The inputs were read in place and the answer packed into new buffers (or the build
    // failed): free them now.
    release(message.spec.raw);
  }
}

/** The main thread's side: the answer's columns as arrays, its buffers freed. Exported for tests. */
export function unpack(packed: Packed): Candles {
  const column = (name: Column) => Array.from(packed[name] ?? new Float64Array(0));
  const candles = columnsOf(packed, column);
  release(packed);
  return candles;
}

/**
 * Frees the columns' memory now: detaching an ArrayBuffer (transfer(0)) drops its backing store at
 * once, where a dropped one waits for its isolate's next full GC. The worker's isolate allocates
 * little, so its GCs are rare: the inputs of a burst of big builds (up to 7 MB each) piled up in it,
 * 36 MiB of them, as did the results on the main thread (BENCHMARKS.md, issue 30 item 3, twelfth
 * session). Only for columns nothing else views (the worker's inputs once packed out, the results
 * once copied into arrays).
 */
export function release(packed: Packed): void {
  for (const column of COLUMNS) {
    const values = packed[column];
    const buffer = values?.buffer as ArrayBuffer | undefined;
    if (buffer !== undefined && !buffer.detached) buffer.transfer(0);
  }
}

/**
 * The packed columns read in place, for the worker's build: the pipeline only reads its raw bars
 * by index (and slices them), so the transferred buffers serve as they are, and a build of N base
 * bars does not copy 7 × N numbers onto the worker's heap first. (It did not move the soak's peak
 * RSS measurably: bench/suites/memory-soak.ts.)
 */
export function viewPacked(packed: Packed): Candles {
  return columnsOf(packed, (name) => (packed[name] ?? new Float64Array(0)) as unknown as number[]);
}

function columnsOf(packed: Packed, column: (name: Column) => number[]): Candles {
  const out: Candles = {
    timestamp: column('timestamp'), open: column('open'), high: column('high'), low: column('low'),
    close: column('close'), volume: column('volume'), amount: column('amount'),
  };
  if (packed.prev_close !== undefined) out.prev_close = column('prev_close');
  if (packed.open_interest !== undefined) out.open_interest = column('open_interest');
  if (packed.settlement_price !== undefined) out.settlement_price = column('settlement_price');
  return out;
}

export interface CandleBuilder {
  /** Builds `spec`: in the worker when its base bars pass `inlineMaxBars`, or when `offload` (the request's total work does). */
  build(spec: BuildSpec, offload?: boolean): Promise<Candles>;
  close(): Promise<void>;
  /** Whether the worker is up (it stops once idle for `idleMs`). */
  readonly running: boolean;
}

/**
 * How long the worker outlives its last job. A build of hundreds of thousands of bars leaves its
 * isolate with a heap of tens of MiB that V8 keeps (BENCHMARKS.md, memory); big builds are rare
 * and a worker starts in ~30 ms, so an idle one is stopped rather than kept.
 */
const WORKER_IDLE_MS = 10_000;

/**
 * The worker's old generation, MiB. Uncapped, V8 let the worker's heap grow with a burst of builds
 * and kept it: ~80 MiB of the process's peak under 64 heavy requests (BENCHMARKS.md, memory). The
 * largest build a request can ask for (120,000 one-minute bars, candle-plan.ts MAX_BASE_BARS, six
 * queued) runs at 16 MiB and fails at 12; 64 leaves four times that. Its inputs and outputs are
 * transferred ArrayBuffers, outside this limit.
 */
export const WORKER_OLD_GENERATION_MB = 64;

/**
 * The worker's young generation, MiB (V8 gives it a 1 MiB semi-space: 2 MiB of new space). Its
 * builds allocate little that dies young (they read transferred columns in place), and a bigger
 * young generation is committed for the worker's life. V8 reads a process-wide
 * `--max-semi-space-size` (npm start sets one for the main isolate) in preference to this limit,
 * so that flag is set to the worker's size before a worker starts: it is read only when an isolate
 * is created, and the main isolate's was created with the start script's value. Measured: the
 * worker's committed heap at the memory soak's peak 25 → 9–13.5 MiB (BENCHMARKS.md, memory).
 */
const WORKER_YOUNG_GENERATION_MB = 3;

/** The semi-space the worker's young generation gets, for the process-wide flag. */
const WORKER_SEMI_SPACE_MB = 1;

interface Job {
  resolve: (candles: Candles) => void;
  reject: (error: Error) => void;
}

/** One worker, started on first use; jobs queue in it (2 cores: one for the loop, one for builds). */
export function createCandleBuilder(options: { inlineMaxBars: number; idleMs?: number }): CandleBuilder {
  let worker: Worker | undefined;
  let nextId = 0;
  const jobs = new Map<number, Job>();
  let idle: NodeJS.Timeout | undefined;

  const stopWhenIdle = () => {
    if (jobs.size > 0) return;
    clearTimeout(idle);
    idle = setTimeout(() => {
      const w = worker;
      worker = undefined;
      void w?.terminate();
    }, options.idleMs ?? WORKER_IDLE_MS);
    idle.unref();
  };
  const failAll = (error: Error) => {
    for (const job of jobs.values()) job.reject(error);
    jobs.clear();
  };

  const start = (): Worker => {
    setFlagsFromString(`--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`);
    const w = new Worker(new URL('./candle-build-worker.ts', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB, maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    w.unref();
    w.on('message', (message: { id: number; packed?: Packed; error?: string }) => {
      const job = jobs.get(message.id);
      if (job === undefined) return;
      jobs.delete(message.id);
      if (message.packed !== undefined) job.resolve(unpack(message.packed));
      else job.reject(new Error(message.error ?? 'candle build failed'));
      stopWhenIdle();
    });
    w.on('error', (error) => {
      failAll(error);
      if (worker === w) worker = undefined;
    });
    // Out of memory, or killed: nothing it held will answer.
    w.on('exit', (code) => {
      if (worker !== w) return;
      worker = undefined;
      failAll(new Error(`candle build worker exited (code ${code})`));
    });
    return w;
  };

  return {
    async build(spec, offload = false) {
      if (!offload && spec.raw.timestamp.length <= options.inlineMaxBars) return buildFromSpec(spec);
      clearTimeout(idle);
      worker ??= start();
      const id = nextId++;
      const { packed, transfer } = pack(spec.raw);
      return new Promise<Candles>((resolve, reject) => {
        jobs.set(id, { resolve, reject });
        worker?.postMessage({ id, spec: { ...spec, raw: packed } }, transfer);
      });
    },
    async close() {
      clearTimeout(idle);
      const w = worker;
      worker = undefined;
      // A build still running answers nothing once its worker is gone: its request fails now
      // instead of waiting forever (and holding its connection, so app.close(), with it).
      failAll(new AppError('SHUTTING_DOWN', 'the service is shutting down; retry on another instance', { retryAfterSeconds: 1 }));
      await w?.terminate();
    },
    get running() {
      return worker !== undefined;
    },
  };
}
