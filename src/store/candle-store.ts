// The candle store (one meaning of "store"; a cache "tier" is src/cache/tier.ts): answers a raw candle query from stored closed bars and asks the vendor only
// for what is missing (plan.ts), stores what comes back (one transaction per fill), and fetches
// the still-forming bar fresh every time without storing it. A store failure at run time sends
// the query to the vendor whole and shows in health() until the store works again.
import type { CandleQuery } from '../../adapters/types.ts';
import { concatCandles, emptyCandles, joinCandles, lowerBound, upperBound, windowCandles } from '../candles/window.ts';
import type { BasePeriod, Candles } from '../domain.ts';
import { activeAt, expiredAt, type Interval, type Segment } from './coverage.ts';
import type { Backend, DropFilter, HistoryStats, SeriesKey } from './backend.ts';
import { BlockCache } from './block-cache.ts';
import { readBlocks } from './blocks.ts';
import { floorMs } from './labels.ts';
import type { HistoryMetrics } from './metrics.ts';
import { countRange, coverageFor, deficitStep, planFetches, windowFor, type RevisionPolicy } from './plan.ts';
import { runMeasured, type SeriesLock, type SeriesLockMetrics } from './series-lock.ts';
import { validateCandles } from './validate.ts';

/**
 * One vendor call for `q`. `options.neededAt`: when the call's deadline starts, given by a fill
 * that waited for a series lock first (no lock wait counts against a vendor call's deadline).
 */
export type FetchRange = (q: CandleQuery, options?: { neededAt?: number }) => Promise<Candles | undefined>;

/** Most bars one vendor call is asked for when the caller does not say. */
export const DEFAULT_MAX_BARS_PER_CALL = 5000;
/** Readiness reads the store's file at most this often. */
const PROBE_EVERY_MS = 1000;
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

/** How one pass over a series runs (see candles()). */
interface ServeMode {
  /** Serve only what needs no vendor call of a closed range; throw NeedLock at the first one. */
  gapFree?: boolean;
  /** The first vendor call's deadline starts here (the fill waited for a lock first). */
  since?: number;
}

/** What health() reports: `since` is when the failure began (epoch ms). */
export interface StoreHealth {
  ok: boolean;
  backend: 'sqlite' | 'postgres';
  error?: string;
  since?: number;
  /** The store's file is damaged (corrupt, not a database, I/O errors): sticky until restart. */
  damaged?: boolean;
}

/** SQLite result codes (low byte of node:sqlite's `errcode`) that mean the file itself is damaged. */
const SQLITE_DAMAGE = new Set([10 /* IOERR */, 11 /* CORRUPT */, 26 /* NOTADB */]);

function isDamage(error: unknown): boolean {
  // A block whose checksum does not match (blocks.ts CorruptBlockError) is damage too.
  if ((error as { code?: unknown })?.code === 'MDQS_BLOCK_CORRUPT') return true;
  const errcode = (error as { errcode?: unknown })?.errcode;
  return typeof errcode === 'number' && SQLITE_DAMAGE.has(errcode & 0xff);
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
    const fault = this.#fault ?? (this.#error === undefined ? undefined : { error: this.#error, since: this.#errorSince });
    return fault === undefined ? { ok: true, backend: kind } : { ok: false, backend: kind, error: fault.error, since: fault.since, ...(this.#fault ? { damaged: true } : {}) };
  }

  #probedAt = -Infinity;

  /** health() after reading the store from its file, at most every PROBE_EVERY_MS (readiness). */
  async probe(): Promise<StoreHealth> {
    // Real time, not the injectable clock: this bounds the probe's cost.
    const now = performance.now();
    if (this.#fault === undefined && this.#o.backend.probe !== undefined && now - this.#probedAt >= PROBE_EVERY_MS) {
      this.#probedAt = now;
      await this.#db(() => this.#o.backend.probe!()).catch((error: unknown) => {
        const cause = (error as StoreFailure).cause;
        if (this.#fault === undefined) {
          this.#error = (error as Error).message;
          this.#o.log?.warn({ err: cause }, 'history store probe failed');
        } else this.#o.log?.warn({ err: cause }, 'history store damaged');
      });
    }
    return this.health();
  }

  async #db<T>(work: () => Promise<T>): Promise<T> {
    try {
      const out = await work();
      this.#error = undefined;
      return out;
    } catch (error) {
      // A damaged file (corrupt pages, not a database, I/O errors) does not heal when another
      // series reads fine: it stays reported until the process restarts on a repaired store.
      if (this.#fault === undefined && isDamage(error)) {
        this.#fault = { error: `history store damaged: ${(error as Error).message}`, since: this.#o.now() };
        this.#o.log?.error?.({ err: error }, 'history store damaged: reads and writes of its file fail; this instance reports not ready until it restarts on a repaired or new store');
      }
      if (this.#error === undefined) this.#errorSince = this.#o.now();
      throw new StoreFailure(error);
    }
  }

  /** Serialises work on one series inside this process, so concurrent requests fetch a gap once. */
  async #locked<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.#locks.get(key) ?? Promise.resolve();
    const run = before.then(work, work);
    const tail = run.catch(() => undefined);
    this.#locks.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.#locks.get(key) === tail) this.#locks.delete(key);
    }
  }

  /**
   * A window of one series: in this process one pass at a time per series (#locked). With a fleet
   * lock (a shared store), a pass first serves what needs no vendor call of a closed range; at the
   * first gap it takes the series' fleet-wide lock and serves again under it, reading the coverage
   * afresh, so a gap another instance filled meanwhile is not fetched twice. Waits for either lock
   * happen before any vendor call, whose deadline then starts when the wait ended.
   */
  async candles(adapterId: string, query: CandleQuery, fetchRange: FetchRange, maxBarsPerCall = DEFAULT_MAX_BARS_PER_CALL): Promise<Candles | undefined> {
    if (this.#o.now() < this.#downUntil) return this.#direct(query, fetchRange);
    const key: SeriesKey = { adapter: adapterId, symbol: query.symbol.symbol, period: query.period };
    const series = `${adapterId}|${key.symbol}|${key.period}`;
    const max = Math.max(1, Math.floor(maxBarsPerCall));
    const arrived = performance.now();
    let full = false;
    try {
      // A window the store holds whole is answered from one read, without the locks (#stored).
      const stored = await this.#stored(key, series, query);
      if (stored !== undefined) return stored;
      // The full pass may write the series: its cached blocks go once it is done (finally below).
      full = true;
      return await this.#locked(series, async () => {
        const gate = this.#o.seriesLock;
        // Waited behind another pass of this process: the vendor deadline starts now.
        const since = performance.now() - arrived >= 1 ? this.#o.now() : undefined;
        if (gate === undefined) return this.#serve(key, query, fetchRange, max, { since });
        const gapFree = () => this.#serve(key, query, fetchRange, max, { gapFree: true, since });
        try {
          return await gapFree();
        } catch (error) {
          if (!(error instanceof NeedLock)) throw error;
        }
        const waitMs = Math.max(0, (this.#o.lockWaitMs ?? 5000) - (performance.now() - arrived));
        return runMeasured(gate, this.#lockMetrics, series, waitMs,
          () => this.#serve(key, query, fetchRange, max, { since: this.#o.now() }),
          () => gapFree().catch((error: unknown) => {
            if (error instanceof NeedLock) return undefined;
            throw error;
          }));
      });
    } catch (error) {
      if (error instanceof UnknownSymbol) return undefined;
      if (!(error instanceof StoreFailure)) throw error;
      this.#error = error.message;
      this.#downUntil = this.#o.now() + RETRY_STORE_MS;
      this.#o.metrics.error();
      this.#o.log?.warn({ err: error.cause, adapter: adapterId, symbol: key.symbol, period: key.period }, 'history store failed; serving from the vendor');
      return this.#direct(query, fetchRange);
    } finally {
      if (full) this.#blocks.forget(series);
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
    const region = query.symbol.region;
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

  async #direct(query: CandleQuery, fetchRange: FetchRange, since?: number): Promise<Candles | undefined> {
    const raw = await fetchRange(query, since === undefined ? undefined : { neededAt: since });
    if (raw === undefined) return undefined;
    const { candles } = validateCandles(raw);
    this.#o.metrics.bars(query.period, 'upstream', candles.timestamp.length);
    return candles;
  }

  async #serve(key: SeriesKey, query: CandleQuery, fetchRange: FetchRange, max: number, mode: ServeMode = {}): Promise<Candles | undefined> {
    const { backend, metrics } = this.#o;
    const region = query.symbol.region;
    const period = query.period;
    const now = this.#o.now();
    const w = windowFor(region, period, query, now);
    /** Label spans of what this call fetched (for the store/upstream bar counts). */
    const fetched: Interval[] = [];
    const sawFetched = (c: Candles) => {
      const n = c.timestamp.length;
      if (n > 0) fetched.push({ lo: c.timestamp[0], hi: c.timestamp[n - 1] });
    };
    /** What this call stored, for a series that was empty before it (see fromFilled). */
    const filled: Candles[] = [];
    const initial = await this.#db(() => backend.coverage(key));
    let calls = 0;

    /** A vendor call; `closed`: it fills a closed range (false: only the forming bar). */
    const call = async (q: CandleQuery, closed = true): Promise<Candles> => {
      if (closed && mode.gapFree === true) throw new NeedLock();
      const first = calls === 0;
      calls += 1;
      metrics.fill(key.adapter, period);
      const raw = await fetchRange(q, first && mode.since !== undefined ? { neededAt: mode.since } : undefined);
      if (raw === undefined) throw new UnknownSymbol();
      metrics.bars(period, 'upstream', raw.timestamp.length);
      return raw;
    };

    const store = async (raw: Candles, cover: Interval, expired: readonly Segment[]) => {
      const { candles, dropped } = validateCandles(raw);
      if (dropped > 0) this.#o.log?.warn({ adapter: key.adapter, symbol: key.symbol, period, dropped }, 'history store: invalid bars not stored');
      const inside = windowCandles(candles, { start: cover.lo, end: Math.min(cover.hi, w.closedEnd) });
      const covers = coverageFor(region, period, cover, now, this.#o.revision, expired);
      await this.#db(() => backend.fill({ key, bars: inside, covers }));
      filled.push(inside);
      sawFetched(inside);
    };

    // The still-forming bar counts towards `count` and is never stored. It comes with the vendor
    // call that fills the newest closed gap (one request, split here: the closed part stored, the
    // rest returned), or, when the closed part is all stored, with a call of its own at the end.
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
    const ensure = async (lo: number, hi: number) => {
      const segments = calls === 0 ? initial : await this.#db(() => backend.coverage(key));
      const plan = planFetches(region, period, activeAt(segments, now), lo, hi, max);
      const expired = expiredAt(segments, now);
      for (const f of plan.fetches) {
        const withOpen = reachesOpen(f.cover.hi);
        const raw = await call({ symbol: query.symbol, period, start: f.lo, end: withOpen ? query.end : f.hi });
        await store(raw, f.cover, expired);
        if (withOpen) takeOpen(raw);
      }
      // Label-free gaps (weekends, lunch, holidays) join the coverage once the series is known.
      if (plan.free.length > 0 && (initial.length > 0 || calls > 0)) {
        await this.#db(() => backend.fill({ key, bars: emptyCandles(), covers: plan.free.map((g) => ({ ...g, recheckAt: null })) }));
      }
    };

    // `count` is met from closed bars alone (the forming bar, when there is one, makes one bar
    // more than needed, trimmed below): the closed part is planned before the forming bar is known.
    const need = query.count === undefined ? (query.start === undefined ? Infinity : undefined) : query.count;

    if (w.upper >= w.lo && (need === undefined || need > 0)) {
      if (need === undefined) {
        await ensure(w.lo, w.upper);
      } else {
        let got = 0;
        let cursor = w.upper;
        if (need !== Infinity) {
          const range = countRange(region, period, w.lo, w.upper, need) as Interval;
          await ensure(range.lo, range.hi);
          got = await this.#db(() => backend.countBars(key, range.lo, range.hi));
          cursor = range.lo - 1;
        }
        // Suspensions, holidays the tables lack, or history ending: walk back with count calls
        // until enough bars are held or the vendor runs out (recorded as covered, so never again).
        while (got < need && cursor >= w.lo) {
          const segments = await this.#db(() => backend.coverage(key));
          const step = deficitStep(activeAt(segments, now), cursor, w.lo);
          if (step.kind === 'covered') {
            const from = Math.max(w.lo, step.segment.lo);
            if (need !== Infinity) got += await this.#db(() => backend.countBars(key, from, cursor));
            cursor = step.segment.lo - 1;
            continue;
          }
          const ask = need === Infinity ? max : Math.min(max, need - got);
          const withOpen = reachesOpen(step.hi);
          const raw = await call({
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
    if (openPending) {
      takeOpen(await call({ symbol: query.symbol, period, start: Math.max(w.lo, w.closedEnd + 1), end: query.end }, false));
    }

    // A series the store has never seen and no call was needed: only the vendor knows whether the
    // symbol exists, so ask it once (not stored: nothing closed was asked for).
    if (calls === 0 && initial.length === 0) return this.#direct(query, fetchRange, mode.since);

    let closed: Candles;
    if (w.upper < w.lo || need === 0 || (need !== undefined && need < 0)) closed = emptyCandles(true);
    else {
      const newest = need === undefined || need === Infinity ? undefined : need;
      // A series first seen by this call holds exactly what it just stored: build the answer from
      // that instead of reading back the rows just written (a read was ~13% of a cold request).
      closed = (initial.length === 0 ? fromFilled(filled, w.lo, w.upper, newest) : undefined)
        ?? await this.#db(() => backend.read(key, w.lo, w.upper, newest));
    }
    let result = open === undefined ? closed : concatCandles(closed, open);
    if (query.count !== undefined) result = windowCandles(result, { count: query.count });
    metrics.bars(period, 'store', result.timestamp.length - barsWithin(result.timestamp, fetched));
    return result;
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

  async prune(retentionDays: Record<BasePeriod, number>, signal?: AbortSignal): Promise<number> {
    let deleted = 0;
    for (const period of ['1m', '1d'] as const) {
      const days = retentionDays[period];
      if (days > 0) deleted += await this.#o.backend.prune(period, this.#o.now() - days * 86_400_000, signal);
    }
    if (deleted > 0) this.#blocks.clear();
    return deleted;
  }
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
 * pieces or bars only): the caller then reads the store.
 */
export function fromFilled(filled: readonly Candles[], lo: number, hi: number, newest: number | undefined): Candles | undefined {
  const parts = filled.filter((c) => c.timestamp.length > 0).sort((a, b) => a.timestamp[0] - b.timestamp[0]);
  if (parts.length === 0) return undefined;
  const withPrev = parts[0].prev_close !== undefined;
  for (const part of parts) {
    if ((part.prev_close !== undefined) !== withPrev) return undefined;
    if (part.prev_close?.some((v) => typeof v !== 'number') === true) return undefined;
  }
  for (let i = 1; i < parts.length; i++) {
    const before = parts[i - 1].timestamp;
    if (parts[i].timestamp[0] <= before[before.length - 1]) return undefined;
  }
  const out = joinCandles(parts, { start: lo, end: hi, count: newest });
  return out.timestamp.length > 0 ? out : undefined;
}
