// Large answers are encoded off the event loop. Serialising a batch of 100 symbols × 5,000 bars
// (JSON, CSV, Arrow or Parquet: 5-16 MB) and gzipping it took seconds of the main thread, during
// which /healthz and every cached quote waited. Here:
//   - an answer holding more than `inlineMaxCells` numbers is encoded in a worker thread: its
//     numeric columns travel as transferred Float64Arrays (one copy on this thread, no
//     serialisation), the encoded bytes come back as a transferred ArrayBuffer;
//   - a body over GZIP_INLINE_MAX_BYTES is gzipped on libuv's thread pool (zlib's async gzip)
//     instead of gzipSync.
// Smaller answers stay inline, where a worker's round trip costs more than the work.
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { gzip as gzipAsync, gzipSync } from 'node:zlib';
import { AppError } from '../../errors.ts';
import type { Format } from './negotiate.ts';
import type { TableKind } from './tables.ts';

const gzipOnPool = promisify(gzipAsync);

/**
 * Numbers an answer may hold and still be encoded on the event loop: JSON.stringify of 65,536
 * numbers takes ~5 ms here, a worker round trip of the same ~2 ms plus the copy.
 */
export const INLINE_MAX_CELLS = 65_536;
/** Bodies up to this size are gzipped inline (level 6: ~3 ms for 92 KB); larger ones on the thread pool. */
export const GZIP_INLINE_MAX_BYTES = 256 * 1024;
/** A worker outlives its last job this long (a worker starts in ~30 ms; an idle one is stopped). */
const WORKER_IDLE_MS = 10_000;
/**
 * The worker's old generation, MiB: the largest answer a plan allows (500,000 bars, ~16 MB of CSV)
 * is encoded within ~120 MiB of heap; a cap keeps a burst from leaving it holding more.
 */
const WORKER_OLD_GENERATION_MB = 256;

/** An answer's bytes in `format`: JSON as one string, the others by the lazily loaded encoders. */
export async function encodeInline(body: unknown, format: Format, table: TableKind | undefined): Promise<Buffer> {
  if (format === 'json' || table === undefined) return Buffer.from(JSON.stringify(body));
  const { encodeTable } = await import('./encode.ts');
  return encodeTable(format, table, body);
}

/** A packed number column: its values moved into a transferable Float64Array. */
interface PackedColumn {
  __f64: Float64Array;
}

function isPacked(value: unknown): value is PackedColumn {
  return typeof value === 'object' && value !== null && (value as PackedColumn).__f64 instanceof Float64Array;
}

/** Numbers in `value`'s arrays (walks objects and arrays; stops counting past `limit`). */
export function countCells(value: unknown, limit = Infinity): number {
  let n = 0;
  const walk = (v: unknown): void => {
    if (n > limit || typeof v !== 'object' || v === null) return;
    if (Array.isArray(v)) {
      if (v.length > 0 && typeof v[0] === 'number') {
        n += v.length;
        return;
      }
      for (const item of v) walk(item);
      return;
    }
    for (const key in v) walk((v as Record<string, unknown>)[key]);
  };
  walk(value);
  return n;
}

/**
 * A copy of `value` whose arrays of numbers (every element a number: NaN kept, null or strings
 * leave the array as it is) are Float64Arrays to transfer; the rest is structured-cloned.
 */
export function pack(value: unknown, transfer: ArrayBuffer[]): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    if (value.length > 0 && typeof value[0] === 'number') {
      const column = new Float64Array(value.length);
      let numeric = true;
      for (let i = 0; i < value.length; i++) {
        const x = value[i];
        if (typeof x !== 'number') {
          numeric = false;
          break;
        }
        column[i] = x;
      }
      if (numeric) {
        transfer.push(column.buffer);
        return { __f64: column } satisfies PackedColumn;
      }
      return value;
    }
    return value.map((item) => pack(item, transfer));
  }
  const out: Record<string, unknown> = {};
  for (const key in value) out[key] = pack((value as Record<string, unknown>)[key], transfer);
  return out;
}

/** `pack` undone (in the worker): Float64Arrays back into arrays of numbers. */
export function unpack(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (isPacked(value)) return Array.from(value.__f64);
  if (Array.isArray(value)) return value.map(unpack);
  const out: Record<string, unknown> = {};
  for (const key in value) out[key] = unpack((value as Record<string, unknown>)[key]);
  return out;
}

export interface EncodeJob {
  id: number;
  format: Format;
  table: TableKind | undefined;
  body: unknown;
}

/** The worker's side of a job: the bytes as an ArrayBuffer of their own (transferred), or the error. */
export async function answerEncode(job: EncodeJob, post: (answer: { id: number; bytes?: ArrayBuffer; error?: string }, transfer?: ArrayBuffer[]) => void): Promise<void> {
  try {
    const encoded = await encodeInline(unpack(job.body), job.format, job.table);
    const own = encoded.byteOffset === 0 && encoded.buffer.byteLength === encoded.length && encoded.buffer instanceof ArrayBuffer
      ? encoded.buffer
      : encoded.buffer.slice(encoded.byteOffset, encoded.byteOffset + encoded.length) as ArrayBuffer;
    post({ id: job.id, bytes: own }, [own]);
  } catch (error) {
    post({ id: job.id, error: (error as Error).message });
  }
}

export interface Encoder {
  /** `body` in `format` (JSON for routes without a table): in a worker when it is large. */
  encode(body: unknown, format: Format, table: TableKind | undefined): Promise<Buffer>;
  /** gzip level 6: inline for small bodies, on the thread pool for large ones. */
  gzip(body: Buffer): Promise<Buffer>;
  close(): Promise<void>;
}

interface Job {
  resolve(bytes: Buffer): void;
  reject(error: Error): void;
}

/**
 * A pool of up to `workers` encoding threads (default: one per core, at most four: the event loop
 * is idle while they work, so on two cores two of them finish a burst of heavy answers sooner).
 */
export function createEncoder(options: { inlineMaxCells?: number; workers?: number; idleMs?: number } = {}): Encoder {
  const inlineMax = options.inlineMaxCells ?? INLINE_MAX_CELLS;
  const size = options.workers ?? Math.max(1, Math.min(4, availableParallelism()));
  const pool: Array<{ worker: Worker; jobs: Map<number, Job>; idle?: NodeJS.Timeout }> = [];
  let nextId = 0;
  let closed = false;

  const stopWhenIdle = (slot: (typeof pool)[number]) => {
    if (slot.jobs.size > 0) return;
    clearTimeout(slot.idle);
    slot.idle = setTimeout(() => {
      const at = pool.indexOf(slot);
      if (at >= 0) pool.splice(at, 1);
      void slot.worker.terminate();
    }, options.idleMs ?? WORKER_IDLE_MS);
    slot.idle.unref();
  };

  const start = () => {
    const worker = new Worker(new URL('./encode-worker.ts', import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB } });
    worker.unref();
    const slot: (typeof pool)[number] = { worker, jobs: new Map() };
    const failAll = (error: Error) => {
      for (const job of slot.jobs.values()) job.reject(error);
      slot.jobs.clear();
      const at = pool.indexOf(slot);
      if (at >= 0) pool.splice(at, 1);
    };
    worker.on('message', (message: { id: number; bytes?: ArrayBuffer; error?: string }) => {
      const job = slot.jobs.get(message.id);
      if (job === undefined) return;
      slot.jobs.delete(message.id);
      if (message.bytes !== undefined) job.resolve(Buffer.from(message.bytes));
      else job.reject(new Error(message.error ?? 'encoding failed'));
      stopWhenIdle(slot);
    });
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`encoding worker exited (code ${code})`)));
    pool.push(slot);
    return slot;
  };

  /** The least busy worker, a new one while the pool has room. */
  const pick = () => {
    const free = pool.find((slot) => slot.jobs.size === 0);
    if (free !== undefined) return free;
    if (pool.length < size) return start();
    return pool.reduce((a, b) => (b.jobs.size < a.jobs.size ? b : a));
  };

  return {
    async encode(body, format, table) {
      if (closed || countCells(body, inlineMax) <= inlineMax) return encodeInline(body, format, table);
      const slot = pick();
      clearTimeout(slot.idle);
      const id = nextId++;
      const transfer: ArrayBuffer[] = [];
      const packed = pack(body, transfer);
      return new Promise<Buffer>((resolve, reject) => {
        slot.jobs.set(id, { resolve, reject });
        slot.worker.postMessage({ id, format, table, body: packed } satisfies EncodeJob, transfer);
      });
    },
    async gzip(body) {
      if (body.length <= GZIP_INLINE_MAX_BYTES) return gzipSync(body, { level: 6 });
      return gzipOnPool(body, { level: 6 });
    },
    async close() {
      closed = true;
      const slots = pool.splice(0);
      for (const slot of slots) {
        clearTimeout(slot.idle);
        for (const job of slot.jobs.values()) job.reject(new AppError('SHUTTING_DOWN', 'the service is shutting down; retry on another instance', { retryAfterSeconds: 1 }));
        slot.jobs.clear();
      }
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
  };
}
