// The candle store (one meaning of "store"; a cache "tier" is src/cache/tier.ts): answers a raw
// candle query from stored closed bars and asks the vendor only for what is missing (plan.ts),
// stores what comes back (one transaction per fill), and takes the still-forming bar fresh every
// time without storing it. It does no vendor I/O itself: a pass (`pass`) yields the vendor
// requests it needs and the loader runs them under the adapter's resilience layer (sans-I/O), so
// the store is a tier in front of the router, never inside it. A store failure at run time sends
// the query to the vendor whole and shows in health() until the store works again: a read or a
// probe that succeeds ends a failure to read, only a write that succeeds ends a failure to write.
// Bars older than their period's retention are served but never written (unkept.ts).
import type { CandleQuery } from '../../adapters/types.ts';
import { concatCandles, emptyCandles, FUTURES_COLUMNS, joinCandles, lowerBound, upperBound, windowCandles } from '../candles/window.ts';
import type { BasePeriod, Candles } from '../domain.ts';
import { calendarKeyOf } from '../markets/symbols.ts';
import { activeAt, expiredAt, type Interval, type Segment } from './coverage.ts';
import type { Backend, DropFilter, HistoryStats, ReferenceKind, SeriesKey } from './backend.ts';
import { BlockCache } from './block-cache.ts';
import { readBlocks } from './blocks.ts';
import { floorMs } from './labels.ts';
import type { HistoryMetrics } from './metrics.ts';
import { countRange, coverageFor, deficitStep, planFetches, windowFor, type RevisionPolicy } from './plan.ts';
import { holdMeasured, type SeriesLock, type SeriesLockMetrics } from './series-lock.ts';
import { Unkept } from './unkept.ts';
import { validateCandles } from './validate.ts';

/**
 * One vendor call for `q`. `options.neededAt`: when the call's deadline starts, given by a fill
 * that waited for a series lock first (no lock wait counts against a vendor call's deadline).
 */
export type FetchRange = (q: CandleQuery, options?: { neededAt?: number }) => Promise<Candles | undefined>;

/**
 * One logical vendor call a pass needs. `neededAt`: when its deadline starts, given when the pass
 * waited for a series lock first (no lock wait counts against a vendor call's deadline).
 */
export interface VendorRequest {
  query: CandleQuery;
  neededAt?: number;
}

/** A store pass: yields vendor requests, takes each answer back (undefined: unknown symbol), returns the window. */
export type StorePass = AsyncGenerator<VendorRequest, Candles | undefined, Candles | undefined>;

/**
 * Runs a pass with `fetchRange` doing its vendor requests; a failed request is thrown into the pass
 * (which releases its locks) and then out of here. The loader has its own driver (the router's calls).
 */
export async function runPass(pass: StorePass, fetchRange: FetchRange): Promise<Candles | undefined> {
  let step = await pass.next();
  while (!step.done) {
    let answer: Candles | undefined;
    try {
      answer = await fetchRange(step.value.query, step.value.neededAt === undefined ? undefined : { neededAt: step.value.neededAt });
    } catch (error) {
      step = await pass.throw(error);
      continue;
    }
    step = await pass.next(answer);
  }
  return step.value;
}

/** What the closed part of a pass left for #finish. */
type Part =
  | { kind: 'direct'; since?: number }
  | {
    kind: 'window';
    closed: Candles;
    /** The forming bar, when it came with the call that filled the newest closed gap. */
    open?: Candles;
    /** The forming bar's own request, when it is still wanted. */
    openWanted?: CandleQuery & { start: number };
    fetched: Interval[];
    calls: number;
    since?: number;
  };

const DAY_MS = 86_400_000;

/** Most bars one vendor call is asked for when the caller does not say. */
export const DEFAULT_MAX_BARS_PER_CALL = 5000;
/** Readiness probes the store at most this often (a shared store's is also probed this often in the background). */
export const PROBE_EVERY_MS = 1000;
/** After a store failure, requests bypass the store this long before it is tried again. */
const RETRY_STORE_MS = 5000;

class StoreFailure extends Error {
  constructor(cause: unknown) {
    super(`history store failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'StoreFailure';
  }
}

class UnknownSymbol {}

/** A closed range is missing and this pass may not fetch it: the fleet's series lock is needed. */
class NeedLock {}

/** No provisional bars: a final fill's coverage needs no re-fetch. */
const FINAL: RevisionPolicy = { bars: { '1m': 0, '1d': 0 } };

/** How one pass over a series runs (see candles()). */
interface ServeMode {
  /** Serve only what needs no vendor call of a closed range; throw NeedLock at the first one. */
  gapFree?: boolean;
  /** The first vendor call's deadline starts here (the fill waited for a lock first). */
  since?: number;
  /** What is fetched is final (the recorder, after a close plus its settling delay): no provisional re-fetch. */
  final?: boolean;
}

/** What health() reports: `since` is when the failure began (epoch ms). */
export interface StoreHealth {
  ok: boolean;
  backend: 'sqlite' | 'postgres';
  error?: string;
  since?: number;
  /** The store's file is damaged (corrupt, not a database, I/O errors): sticky until restart. */
  damaged?: boolean;
  /** The store cannot be written (disk full, read-only, permissions): until a write succeeds. */
  unwritable?: boolean;
}

/** SQLite result codes (low byte of node:sqlite's `errcode`) that mean the file itself is damaged. */
const SQLITE_DAMAGE = new Set([10 /* IOERR */, 11 /* CORRUPT */, 26 /* NOTADB */]);

function isDamage(error: unknown): boolean {
  // A block whose checksum does not match (blocks.ts CorruptBlockError) is damage too.
  if ((error as { code?: unknown })?.code === 'MDQS_BLOCK_CORRUPT') return true;
  const errcode = (error as { errcode?: unknown })?.errcode;
  return typeof errcode === 'number' && SQLITE_DAMAGE.has(errcode & 0xff);
}

/**
 * SQLite result codes of a write that mean the file cannot be written now (its disk or its mount,
 * not its content): PERM, READONLY, IOERR (ENOSPC, EROFS and EIO on a write), FULL, CANTOPEN.
 */
const SQLITE_UNWRITABLE = new Set([3, 8, 10, 13, 14]);

function isUnwritable(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown })?.errcode;
  return typeof errcode === 'number' && SQLITE_UNWRITABLE.has(errcode & 0xff);
}

export interface CandleStoreOptions {
  backend: Backend;
  now: () => number;
  revision: RevisionPolicy;
  metrics: HistoryMetrics;
  log?: { warn(obj: object, msg: string): void; error?(obj: object, msg: string): void };
  /**
   * The fleet-wide lock per series (series-lock.ts) of a store shared by several instances: a fill
   * that found a closed gap takes it before the vendor call. Absent: the in-process lock only.
   */
  seriesLock?: SeriesLock;
  lockMetrics?: SeriesLockMetrics;
  /** Longest wait for the series lock from when the request reached the store, ms (its upstream deadline). Default 5000. */
  lockWaitMs?: number;
  /** Bytes of hot blocks kept in memory for store hits (block-cache.ts); 0: none. Default BLOCK_CACHE_BYTES. */
  blockCacheBytes?: number;
  /** Longest a cached series' coverage and blocks answer before they are read again, ms. Default BLOCK_CACHE_TTL_MS. */
  blockCacheTtlMs?: number;
  /**
   * Days kept per base period (0 or absent: forever). Retention applies when bars are written: a
   * fill's bars older than this are served and not kept; prune() removes what aged out since.
   */
  retentionDays?: Record<BasePeriod, number>;
  /**
   * Series kept by a retention of their own (a recorder job's): written whole, whatever their
   * age; their own retention trims them. Absent: none.
   */
  ownRetention?: (key: SeriesKey) => boolean;
  /** Days a recorded series (ownRetention) keeps per base period; 0 or absent: forever. */
  recordedRetentionDays?: Record<BasePeriod, number>;
}

/** Hot blocks kept for store hits: ~500 five-year daily series or ~100 sixty-day minute series. */
export const BLOCK_CACHE_BYTES = 16 * 1024 * 1024;
/** A drop or retention pass by another process (a shared store) is seen within this long. */
export const BLOCK_CACHE_TTL_MS = 60_000;

export class CandleStore {
  readonly #o: CandleStoreOptions;
  readonly #locks = new Map<string, Promise<unknown>>();
  readonly #lockMetrics: SeriesLockMetrics;
  readonly #blocks: BlockCache;
  #downUntil = -Infinity;
  #error: string | undefined;
  #errorSince = 0;
  #fault: { error: string; since: number } | undefined;
  /** A write failed for want of a writable file (SQLITE_FULL, READONLY, …): reported until one succeeds. */
  #unwritable: { error: string; since: number } | undefined;

  constructor(options: CandleStoreOptions) {
    this.#o = options;
    this.#lockMetrics = options.lockMetrics ?? { observe() {} };
    this.#blocks = new BlockCache({ maxBytes: options.blockCacheBytes ?? BLOCK_CACHE_BYTES, ttlMs: options.blockCacheTtlMs ?? BLOCK_CACHE_TTL_MS });
  }

  get backend(): Backend {
    return this.#o.backend;
  }

  /** Bytes the hot-block cache holds now. */
  get blockCacheBytes(): number {
    return this.#blocks.bytes;
  }

  health(): StoreHealth {
    const kind = this.#o.backend.kind;
    const fault = this.#fault ?? this.#unwritable ?? (this.#error === undefined ? undefined : { error: this.#error, since: this.#errorSince });
    if (fault === undefined) return { ok: true, backend: kind };
    const flag = this.#fault !== undefined ? { damaged: true } : this.#unwritable !== undefined ? { unwritable: true } : {};
    return { ok: false, backend: kind, error: fault.error, since: fault.since, ...flag };
  }

  #probedAt = -Infinity;
  #probing: Promise<void> | undefined;
  #probesStopped = false;

  /**
   * health() after probing the store (readiness; for a shared store also a background timer),
   * at most every PROBE_EVERY_MS: a read from the store itself (the file, not a cache; the
   * database server), and while a write failure is reported a write too. A probe that succeeds
   * ends the bypass after a failure (RETRY_STORE_MS) at once; one that fails starts it.
   */
  async probe(): Promise<StoreHealth> {
    // Real time, not the injectable clock: this bounds the probe's cost.
    const now = performance.now();
    if (this.#fault === undefined && !this.#probesStopped && this.#probing === undefined && this.#o.backend.probe !== undefined
      && now - this.#probedAt >= PROBE_EVERY_MS) {
      this.#probedAt = now;
      this.#probing = this.#probeOnce().finally(() => {
        this.#probing = undefined;
      });
    }
    await this.#probing;
    return this.health();
  }

  /** No probe starts after this; resolves once the one under way (if any) ended (close). */
  async stopProbing(): Promise<void> {
    this.#probesStopped = true;
    await this.#probing;
  }

  async #probeOnce(): Promise<void> {
    const backend = this.#o.backend;
    try {
      await this.#db(() => backend.probe!());
    } catch (error) {
      const cause = (error as StoreFailure).cause;
      if (this.#fault !== undefined) {
        this.#o.log?.warn({ err: cause }, 'history store damaged');
        return;
      }
      if (this.#error === undefined) this.#o.log?.warn({ err: cause }, 'history store probe failed');
      this.#error = (error as Error).message;
      this.#downUntil = this.#o.now() + RETRY_STORE_MS;
      return;
    }
    // A write failure is over only when a write succeeds: while one is reported the probe writes.
    if (this.#unwritable !== undefined) {
      try {
        await this.#db(() => backend.probe!({ write: true }), true);
      } catch {
        return;
      }
    }
    this.#downUntil = -Infinity;
  }

  /** `work` against the backend; `write`: it writes (a fill, reference data, the write probe). */
  async #db<T>(work: () => Promise<T>, write = false): Promise<T> {
    try {
      const out = await work();
      this.#error = undefined;
      if (write && this.#unwritable !== undefined) {
        this.#unwritable = undefined;
        this.#o.log?.warn({}, 'history store written again');
      }
      return out;
    } catch (error) {
      // A write that fails for want of a writable file (a full disk, a read-only mount, lost
      // permissions) stays reported when reads succeed: the instance cannot keep what it fetches
      // (for its own SQLite store, not ready by the readiness policy), until a write succeeds.
      if (write && this.#fault === undefined && isUnwritable(error)) {
        if (this.#unwritable === undefined) {
          this.#o.log?.error?.({ err: error }, 'history store cannot be written: answers come from the vendor and are not kept until a write succeeds again');
        }
        this.#unwritable = { error: `history store cannot be written: ${(error as Error).message}`, since: this.#unwritable?.since ?? this.#o.now() };
      } else if (this.#fault === undefined && isDamage(error)) {
        // A damaged file (corrupt pages, not a database, I/O errors) does not heal when another
        // series reads fine: it stays reported until the process restarts on a repaired store.
        this.#fault = { error: `history store damaged: ${(error as Error).message}`, since: this.#o.now() };
        this.#o.log?.error?.({ err: error }, 'history store damaged: reads and writes of its file fail; this instance reports not ready until it restarts on a repaired or new store');
      }
      if (this.#error === undefined) this.#errorSince = this.#o.now();
      throw new StoreFailure(error);
    }
  }

  /** Waits for this process's earlier passes over `key` (one pass at a time per series); returns the release. */
  async #lockLocal(key: string): Promise<() => void> {
    const before = this.#locks.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = before.then(() => mine);
    this.#locks.set(key, tail);
    await before;
    return () => {
      release();
      if (this.#locks.get(key) === tail) this.#locks.delete(key);
    };
  }

  /**
   * A window the store holds whole, answered without any vendor call (no lock, no write); undefined
   * when a vendor call is needed (a gap, an expired provisional range, the forming bar, a series
   * never stored) or the store is failing. The loader asks this of every adapter of the chain
   * before it asks any vendor.
   */
  async stored(adapterId: string, query: CandleQuery): Promise<Candles | undefined> {
    if (this.#o.now() < this.#downUntil) return undefined;
    const key: SeriesKey = { adapter: adapterId, symbol: query.symbol.symbol, period: query.period };
    try {
      return await this.#stored(key, `${adapterId}|${key.symbol}|${key.period}`, query);
    } catch (error) {
      if (!(error instanceof StoreFailure)) throw error;
      this.#failed(error, key);
      return undefined;
    }
  }

  /**
   * A pass over one series, without I/O of its own to the vendor (sans-I/O): it yields each vendor
   * request it needs (one logical call each) and takes the answer back (`undefined`: the vendor does
   * not know the symbol), stores what is closed and returns the window (`undefined`: unknown
   * symbol). The caller (the loader) runs the requests under the adapter's resilience layer and
   * throws a vendor failure into the pass, which then ends, releasing its locks.
   *
   * In this process one pass at a time per series. With a fleet lock (a shared store), a pass first
   * serves what needs no vendor call of a closed range; at the first gap it takes the series'
   * fleet-wide lock and serves again under it, reading the coverage afresh, so a gap another
   * instance filled meanwhile is not fetched twice. Waits for either lock happen before any vendor
   * call, whose deadline then starts when the wait ended. The forming bar is asked for after the
   * locks are released.
   */
  async *pass(adapterId: string, query: CandleQuery, maxBarsPerCall = DEFAULT_MAX_BARS_PER_CALL, final = false): StorePass {
    if (this.#o.now() < this.#downUntil) return yield* this.#direct(query);
    const key: SeriesKey = { adapter: adapterId, symbol: query.symbol.symbol, period: query.period };
    const series = `${adapterId}|${key.symbol}|${key.period}`;
    const max = Math.max(1, Math.floor(maxBarsPerCall));
    const arrived = performance.now();
    try {
      const release = await this.#lockLocal(series);
      let part: Part;
      try {
        const gate = this.#o.seriesLock;
        // Waited behind another pass of this process: the vendor deadline starts now.
        const since = performance.now() - arrived >= 1 ? this.#o.now() : undefined;
        if (gate === undefined) part = yield* this.#serve(key, query, max, { since, final });
        else {
          const gapFree = () => this.#gapFree(key, query, max, since);
          const first = await gapFree();
          if (first !== undefined) part = first;
          else {
            const waitMs = Math.max(0, (this.#o.lockWaitMs ?? 5000) - (performance.now() - arrived));
            const held = await holdMeasured(gate, this.#lockMetrics, series, waitMs, gapFree);
            if (!held.held) part = held.value;
            else {
              try {
                part = yield* this.#serve(key, query, max, { since: this.#o.now(), final });
              } finally {
                held.release();
              }
            }
          }
        }
      } finally {
        release();
        // The pass may have written the series: its cached blocks go.
        this.#blocks.forget(series);
      }
      return yield* this.#finish(key, query, part);
    } catch (error) {
      if (error instanceof UnknownSymbol) return await this.#delisted(key, query);
      if (!(error instanceof StoreFailure)) throw error;
      this.#failed(error, key);
      return yield* this.#direct(query);
    }
  }

  /**
   * The vendor does not know a symbol (delisted, or out of its listing): the bars of the window
   * the store holds for it, newest `count` of them (its history ends at its last stored bar);
   * undefined when the store holds none of them (unknown: nothing is invented).
   */
  async #delisted(key: SeriesKey, query: CandleQuery): Promise<Candles | undefined> {
    try {
      if ((await this.#db(() => this.#o.backend.coverage(key))).length === 0) return undefined;
      const w = windowFor(calendarKeyOf(query.symbol), query.period, query, this.#o.now());
      if (w.upper < w.lo || (query.count !== undefined && query.count <= 0)) return emptyCandles(true);
      const out = await this.#db(() => this.#o.backend.read(key, w.lo, w.upper, query.count));
      // None held in the window: unknown as before (the recorder counts such a member unknown).
      if (out.timestamp.length === 0) return undefined;
      this.#o.metrics.bars(query.period, 'store', out.timestamp.length);
      return out;
    } catch (error) {
      if (!(error instanceof StoreFailure)) throw error;
      this.#failed(error, key);
      return undefined;
    }
  }

  /** `pass` driven by `fetchRange` after `stored` (operator commands, tests, benchmarks). */
  async candles(adapterId: string, query: CandleQuery, fetchRange: FetchRange, maxBarsPerCall = DEFAULT_MAX_BARS_PER_CALL): Promise<Candles | undefined> {
    return (await this.stored(adapterId, query)) ?? runPass(this.pass(adapterId, query, maxBarsPerCall), fetchRange);
  }

  /**
   * The vendor chain failed: the closed bars of `query` the store holds, if every label of the
   * window's closed part was fetched once (coverage in any state, a provisional range past its
   * recheck included), newest `count` of them. undefined when part of it was never fetched (the
   * answer would have a silent hole) or the store is failing. The forming bar is not stored.
   */
  async salvage(adapterId: string, query: CandleQuery): Promise<Candles | undefined> {
    if (this.#o.now() < this.#downUntil) return undefined;
    const key: SeriesKey = { adapter: adapterId, symbol: query.symbol.symbol, period: query.period };
    const { backend } = this.#o;
    const region = calendarKeyOf(query.symbol);
    const now = this.#o.now();
    const w = windowFor(region, query.period, query, now);
    const need = query.count === undefined ? (query.start === undefined ? Infinity : undefined) : query.count;
    try {
      const segments = await this.#db(() => backend.coverage(key));
      if (segments.length === 0) return undefined;
      if (w.upper < w.lo || (need !== undefined && need <= 0)) return emptyCandles(true);
      if (need === undefined || need === Infinity) {
        if (!coveredWhole(segments, w.lo, w.upper)) return undefined;
        return await this.#db(() => backend.read(key, w.lo, w.upper));
      }
      // Newest `need`: the covered run that reaches the window's end, back as far as it goes.
      const run = coveredRunEndingAt(segments, w.upper);
      const range = countRange(region, query.period, w.lo, w.upper, need) as Interval;
      if (run === undefined || run.lo > range.lo) return undefined;
      const out = await this.#db(() => backend.read(key, Math.max(w.lo, run.lo), w.upper, need));
      this.#o.metrics.bars(query.period, 'store', out.timestamp.length);
      return out;
    } catch (error) {
      if (!(error instanceof StoreFailure)) throw error;
      this.#failed(error, key);
      return undefined;
    }
  }

  /** A store failure at run time: reported in health(), and the store bypassed for RETRY_STORE_MS. */
  #failed(error: StoreFailure, key: object): void {
    this.#error = error.message;
    this.#downUntil = this.#o.now() + RETRY_STORE_MS;
    this.#o.metrics.error();
    this.#o.log?.warn({ err: error.cause, ...key }, 'history store failed; serving from the vendor');
  }

  /**
   * The stored reference documents (ex-factors, instruments) of `adapterId` for `symbols`, parsed;
   * empty while the store is failing (the vendor answers then).
   */
  async reference(kind: ReferenceKind, adapterId: string, symbols: readonly string[]): Promise<Map<string, { value: unknown; fetchedAt: number }>> {
    const out = new Map<string, { value: unknown; fetchedAt: number }>();
    if (this.#o.now() < this.#downUntil || symbols.length === 0) return out;
    try {
      const rows = await this.#db(() => this.#o.backend.referenceGet(kind, adapterId, symbols));
      for (const row of rows) out.set(row.symbol, { value: JSON.parse(row.data), fetchedAt: row.fetchedAt });
    } catch (error) {
      if (!(error instanceof StoreFailure)) throw error;
      this.#failed(error, { adapter: adapterId, resource: kind });
    }
    return out;
  }

  /** Keeps what the vendor just sent (each symbol's document replaced); a failing store only logs. */
  async keepReference(kind: ReferenceKind, adapterId: string, entries: ReadonlyArray<{ symbol: string; value: unknown }>): Promise<void> {
    if (this.#o.now() < this.#downUntil || entries.length === 0) return;
    const fetchedAt = this.#o.now();
    try {
      await this.#db(() => this.#o.backend.referencePut(kind, adapterId, entries.map((e) => ({ symbol: e.symbol, fetchedAt, data: JSON.stringify(e.value) }))), true);
    } catch (error) {
      if (!(error instanceof StoreFailure)) throw error;
      this.#failed(error, { adapter: adapterId, resource: kind });
    }
  }

  /** #serve without any vendor call of a closed range: its part, or undefined at the first gap. */
  async #gapFree(key: SeriesKey, query: CandleQuery, max: number, since: number | undefined): Promise<Part | undefined> {
    const pass = this.#serve(key, query, max, { gapFree: true, since });
    try {
      const step = await pass.next();
      if (!step.done) throw new Error('history store: a gap-free pass asked the vendor');
      return step.value;
    } catch (error) {
      if (error instanceof NeedLock) return undefined;
      throw error;
    }
  }

  /**
   * The store hit: a closed window the store covers whole, answered from one backend read (the
   * coverage and the bars from one snapshot, one statement) with no vendor call, no lock and no
   * write; undefined when anything else is needed (a gap, an expired provisional range, a newest-N
   * walk past suspensions, the forming bar, a series never stored): #serve then runs as before.
   * The answer is #serve's for the same state: the bars of [range.lo, upper] that #serve would
   * count and read, the newest `count` of them.
   */
  async #stored(key: SeriesKey, series: string, query: CandleQuery): Promise<Candles | undefined> {
    const { backend } = this.#o;
    if (backend.window === undefined) return undefined;
    const region = calendarKeyOf(query.symbol);
    const period = query.period;
    const now = this.#o.now();
    const w = windowFor(region, period, query, now);
    const need = query.count === undefined ? (query.start === undefined ? Infinity : undefined) : query.count;
    if (w.open !== undefined || w.upper < w.lo || need === Infinity || (need !== undefined && need <= 0)) return undefined;
    const range = need === undefined ? { lo: w.lo, hi: w.upper } : countRange(region, period, w.lo, w.upper, need) as Interval;
    // Hot blocks first (block-cache.ts); else one statement, whose blocks are verified and kept.
    let read: { bars: Candles; held: number };
    const cached = this.#blocks.get(series, period, range.lo, range.hi, now);
    if (cached !== undefined && coveredWhole(activeAt(cached.coverage, now), range.lo, range.hi)) {
      read = readBlocks(cached.blobs, range.lo, range.hi, need, true);
    } else {
      const snap = await this.#db(() => backend.window!(key, range.lo, range.hi));
      // A gap: the full pass reads what it needs itself (nothing decoded or kept here).
      if (snap === undefined || !coveredWhole(activeAt(snap.coverage, now), range.lo, range.hi)) return undefined;
      read = await this.#db(async () => readBlocks(snap.blocks.map((b) => b.data), range.lo, range.hi, need));
      this.#blocks.put(series, period, range.lo, range.hi, snap.coverage, snap.blocks, now);
    }
    // #serve walks further back only while fewer than `need` bars are held above the query's start.
    if (need !== undefined && read.held < need && range.lo > w.lo) return undefined;
    this.#o.metrics.bars(period, 'store', read.bars.timestamp.length);
    return read.bars;
  }

  async *#direct(query: CandleQuery, since?: number): AsyncGenerator<VendorRequest, Candles | undefined, Candles | undefined> {
    const raw = yield { query, neededAt: since };
    if (raw === undefined) return undefined;
    const { candles } = validateCandles(raw);
    this.#o.metrics.bars(query.period, 'upstream', candles.timestamp.length);
    return candles;
  }

  /** The forming bar (asked for after the locks), joined to the closed part and cut to `count`. */
  async *#finish(key: SeriesKey, query: CandleQuery, part: Part): AsyncGenerator<VendorRequest, Candles | undefined, Candles | undefined> {
    if (part.kind === 'direct') return yield* this.#direct(query, part.since);
    const { metrics } = this.#o;
    let open = part.open;
    if (part.openWanted !== undefined) {
      metrics.fill(key.adapter, query.period);
      const raw = yield { query: part.openWanted, neededAt: part.calls === 0 ? part.since : undefined };
      if (raw === undefined) throw new UnknownSymbol();
      metrics.bars(query.period, 'upstream', raw.timestamp.length);
      open = windowCandles(validateCandles(raw).candles, { start: part.openWanted.start, end: query.end });
      const n = open.timestamp.length;
      if (n > 0) part.fetched.push({ lo: open.timestamp[0], hi: open.timestamp[n - 1] });
    }
    let result = open === undefined ? part.closed : concatCandles(part.closed, open);
    if (query.count !== undefined) result = windowCandles(result, { count: query.count });
    metrics.bars(query.period, 'store', result.timestamp.length - barsWithin(result.timestamp, part.fetched));
    return result;
  }

  /** The closed part of a window: stored bars, with vendor requests yielded for what is missing. */
  async *#serve(key: SeriesKey, query: CandleQuery, max: number, mode: ServeMode = {}): AsyncGenerator<VendorRequest, Part, Candles | undefined> {
    const self = this;
    const { backend, metrics } = this.#o;
    const region = calendarKeyOf(query.symbol);
    const period = query.period;
    const now = this.#o.now();
    const w = windowFor(region, period, query, now);
    /** Label spans of what this call fetched (for the store/upstream bar counts). */
    const fetched: Interval[] = [];
    const sawFetched = (c: Candles) => {
      const n = c.timestamp.length;
      if (n > 0) fetched.push({ lo: c.timestamp[0], hi: c.timestamp[n - 1] });
    };
    /** What this call stored, for a series that was empty before it (see fromFilled), and what it served unkept. */
    const filled: Candles[] = [];
    /** What this call fetched older than the retention: served, not written (nor its coverage). */
    const unkept = new Unkept(this.#keepFrom(key, now));
    /** The stored coverage as this call sees it: with what it fetched and did not keep. */
    const coverage = async () => unkept.over(await self.#db(() => backend.coverage(key)));
    /** Bars held in [lo, hi] for this call: stored, and fetched by it unkept. */
    const held = async (lo: number, hi: number) => await self.#db(() => backend.countBars(key, lo, hi)) + unkept.count(lo, hi);
    const initial = await this.#db(() => backend.coverage(key));
    let calls = 0;

    /** A vendor call filling a closed range (never made by a gap-free pass). */
    async function* call(q: CandleQuery): AsyncGenerator<VendorRequest, Candles, Candles | undefined> {
      if (mode.gapFree === true) throw new NeedLock();
      const first = calls === 0;
      calls += 1;
      metrics.fill(key.adapter, period);
      const raw = yield { query: q, neededAt: first ? mode.since : undefined };
      if (raw === undefined) throw new UnknownSymbol();
      metrics.bars(period, 'upstream', raw.timestamp.length);
      return raw;
    }

    const store = async (raw: Candles, cover: Interval, expired: readonly Segment[]) => {
      const { candles, dropped } = validateCandles(raw);
      if (dropped > 0) this.#o.log?.warn({ adapter: key.adapter, symbol: key.symbol, period, dropped }, 'history store: invalid bars not stored');
      const inside = windowCandles(candles, { start: cover.lo, end: Math.min(cover.hi, w.closedEnd) });
      // Retention applies here: what is older than it is served (and planned around in this call)
      // but neither written nor recorded as covered, so the store never claims a bar it lacks.
      const kept = unkept.keep(inside, cover);
      if (kept !== undefined) {
        const covers = coverageFor(region, period, kept.cover, now, mode.final === true ? FINAL : this.#o.revision, expired);
        await this.#db(() => backend.fill({ key, bars: kept.bars, covers }), true);
      }
      filled.push(inside);
      sawFetched(inside);
    };

    // The still-forming bar counts towards `count` and is never stored. It comes with the vendor
    // call that fills the newest closed gap (one request, split here: the closed part stored, the
    // rest returned), or, when the closed part is all stored, with a call of its own (#finish).
    let open: Candles | undefined;
    let openPending = w.open !== undefined;
    const takeOpen = (raw: Candles) => {
      open = windowCandles(validateCandles(raw).candles, { start: w.closedEnd + 1, end: query.end });
      openPending = false;
      sawFetched(open);
    };
    /** Reaches the forming bar: the newest closed gap, while the forming bar is still wanted. */
    const reachesOpen = (hi: number) => openPending && hi >= w.upper && w.upper === w.closedEnd;

    /** Makes [lo, hi] covered: missing pieces fetched as range calls. */
    async function* ensure(lo: number, hi: number): AsyncGenerator<VendorRequest, void, Candles | undefined> {
      const segments = calls === 0 ? initial : await coverage();
      const plan = planFetches(region, period, activeAt(segments, now), lo, hi, max);
      const expired = expiredAt(segments, now);
      for (const f of plan.fetches) {
        const withOpen = reachesOpen(f.cover.hi);
        const raw = yield* call({ symbol: query.symbol, period, start: f.lo, end: withOpen ? query.end : f.hi });
        await store(raw, f.cover, expired);
        if (withOpen) takeOpen(raw);
      }
      // Label-free gaps (weekends, lunch, holidays) join the coverage once the series is known.
      const free = initial.length > 0 || calls > 0 ? unkept.keepFree(plan.free) : [];
      if (free.length > 0) {
        await self.#db(() => backend.fill({ key, bars: emptyCandles(), covers: free.map((g) => ({ ...g, recheckAt: null })) }), true);
      }
    }

    // `count` is met from closed bars alone (the forming bar, when there is one, makes one bar
    // more than needed, trimmed in #finish): the closed part is planned before the forming bar is known.
    const need = query.count === undefined ? (query.start === undefined ? Infinity : undefined) : query.count;

    if (w.upper >= w.lo && (need === undefined || need > 0)) {
      if (need === undefined) {
        yield* ensure(w.lo, w.upper);
      } else {
        let got = 0;
        let cursor = w.upper;
        if (need !== Infinity) {
          const range = countRange(region, period, w.lo, w.upper, need) as Interval;
          yield* ensure(range.lo, range.hi);
          got = await held(range.lo, range.hi);
          cursor = range.lo - 1;
        }
        // Suspensions, holidays the tables lack, or history ending: walk back with count calls
        // until enough bars are held or the vendor runs out (recorded as covered, so never again,
        // within the retention; older ranges count as covered for this call only).
        while (got < need && cursor >= w.lo) {
          const segments = await coverage();
          const step = deficitStep(activeAt(segments, now), cursor, w.lo);
          if (step.kind === 'covered') {
            const from = Math.max(w.lo, step.segment.lo);
            if (need !== Infinity) got += await held(from, cursor);
            cursor = step.segment.lo - 1;
            continue;
          }
          const ask = need === Infinity ? max : Math.min(max, need - got);
          const withOpen = reachesOpen(step.hi);
          const raw = yield* call({
            symbol: query.symbol, period, start: step.lo > floorMs(region) ? step.lo : undefined,
            end: withOpen ? query.end : step.hi, count: withOpen ? ask + 1 : ask,
          });
          if (withOpen) takeOpen(raw);
          const inside = windowCandles(raw, { start: step.lo, end: step.hi });
          const n = inside.timestamp.length;
          const coverLo = n >= ask ? inside.timestamp[0] : step.lo;
          await store(inside, { lo: coverLo, hi: step.hi }, expiredAt(segments, now));
          got += n;
          cursor = coverLo - 1;
        }
      }
    }

    // A series the store has never seen and no call was needed: only the vendor knows whether the
    // symbol exists, so ask it once (not stored: nothing closed was asked for).
    if (calls === 0 && initial.length === 0 && !openPending) return { kind: 'direct', since: mode.since };

    let closed: Candles;
    if (w.upper < w.lo || need === 0 || (need !== undefined && need < 0)) closed = emptyCandles(true);
    else {
      const newest = need === undefined || need === Infinity ? undefined : need;
      // A series first seen by this call holds exactly what it just stored: build the answer from
      // that instead of reading back the rows just written (a read was ~13% of a cold request).
      closed = (initial.length === 0 ? fromFilled(filled, w.lo, w.upper, newest) : undefined)
        ?? unkept.merge(await this.#db(() => backend.read(key, w.lo, w.upper, newest)), w.lo, w.upper, newest);
    }
    const openWanted = openPending ? { symbol: query.symbol, period, start: Math.max(w.lo, w.closedEnd + 1), end: query.end } : undefined;
    return { kind: 'window', closed, open, openWanted, fetched, calls, since: mode.since };
  }

  /** Bars of `key` labelled before this are not written (-Infinity: all are), as of `now`. */
  #keepFrom(key: SeriesKey, now: number): number {
    const days = this.#o.ownRetention?.(key) === true ? this.#o.recordedRetentionDays?.[key.period] ?? 0 : this.#o.retentionDays?.[key.period] ?? 0;
    if (days <= 0) return -Infinity;
    return now - days * DAY_MS;
  }

  async stats(): Promise<HistoryStats> {
    return this.#o.backend.stats();
  }

  async drop(filter: DropFilter): Promise<number> {
    try {
      return await this.#o.backend.drop(filter);
    } finally {
      this.#blocks.clear();
    }
  }

  /** Retention: ad-hoc series by `retentionDays`, recorded ones (ledger 'series') by `recordedDays` (0 or absent: forever). */
  async prune(retentionDays: Record<BasePeriod, number>, signal?: AbortSignal, recordedDays?: Record<BasePeriod, number>): Promise<number> {
    let deleted = 0;
    for (const period of ['1m', '1d'] as const) {
      const days = retentionDays[period];
      if (days > 0) deleted += await this.#o.backend.prune(period, this.#o.now() - days * DAY_MS, signal, 'adhoc');
      const kept = recordedDays?.[period] ?? 0;
      if (kept > 0) deleted += await this.#o.backend.prune(period, this.#o.now() - kept * DAY_MS, signal, 'recorded');
    }
    if (deleted > 0) this.#blocks.clear();
    return deleted;
  }
}

/** The union of touching `segments` (ascending, disjoint) that contains `at`, or undefined. */
function coveredRunEndingAt(segments: readonly Interval[], at: number): Interval | undefined {
  let run: Interval | undefined;
  for (const s of segments) {
    if (run !== undefined && s.lo <= run.hi + 1) run = { lo: run.lo, hi: Math.max(run.hi, s.hi) };
    else run = { lo: s.lo, hi: s.hi };
    if (run.hi >= at) return run.lo <= at ? run : undefined;
  }
  return undefined;
}

/** No part of [lo, hi] lies outside `segments` (ascending, disjoint; touching ones may differ in state). */
function coveredWhole(segments: readonly Interval[], lo: number, hi: number): boolean {
  let cursor = lo;
  for (const s of segments) {
    if (s.hi < cursor) continue;
    if (s.lo > cursor) return false;
    cursor = s.hi + 1;
    if (cursor > hi) return true;
  }
  return false;
}

/**
 * How many of `ts` (ascending) lie in the union of `spans`. A bar inside a span this call fetched
 * counts as fetched: the store holds that span's bars as the vendor just sent them.
 */
export function barsWithin(ts: readonly number[], spans: readonly Interval[]): number {
  const sorted = [...spans].sort((a, b) => a.lo - b.lo);
  let n = 0;
  let reach = -Infinity;
  for (const { lo, hi } of sorted) {
    const from = Math.max(lo, reach + 1);
    if (hi >= from) n += upperBound(ts, hi) - lowerBound(ts, from);
    reach = Math.max(reach, hi);
  }
  return n;
}

/**
 * What `backend.read(lo, hi, newest)` returns for a series whose only bars are `filled` (stored
 * by one call, in any order, not overlapping): the bars in [lo, hi], the newest `newest` of them.
 * undefined when that is not certain (nothing stored, overlapping pieces, prev_close on some
 * pieces or bars only, a futures column on some pieces only): the caller then reads the store.
 */
export function fromFilled(filled: readonly Candles[], lo: number, hi: number, newest: number | undefined): Candles | undefined {
  const parts = filled.filter((c) => c.timestamp.length > 0).sort((a, b) => a.timestamp[0] - b.timestamp[0]);
  if (parts.length === 0) return undefined;
  const withPrev = parts[0].prev_close !== undefined;
  for (const part of parts) {
    if ((part.prev_close !== undefined) !== withPrev) return undefined;
    if (part.prev_close?.some((v) => typeof v !== 'number') === true) return undefined;
    // A futures column on some pieces only: the store keeps it for the bars that have it.
    for (const name of FUTURES_COLUMNS) if ((part[name] !== undefined) !== (parts[0][name] !== undefined)) return undefined;
  }
  for (let i = 1; i < parts.length; i++) {
    const before = parts[i - 1].timestamp;
    if (parts[i].timestamp[0] <= before[before.length - 1]) return undefined;
  }
  const out = joinCandles(parts, { start: lo, end: hi, count: newest });
  return out.timestamp.length > 0 ? out : undefined;
}
