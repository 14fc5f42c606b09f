// The recorder: the store as the team's own archive. For each job of `history.record`, after each
// of its markets closes (its calendar, plus `delayMinutes`), the day's closed bars of every member
// are fetched once per base period and kept by the recorder's retention (default forever), with
// the members' ex-factors and instruments and each universe's membership that day. On start it
// catches up the missed trading days the vendor still serves (`catchUpDays`, capped by the
// adapter's `historyDays`).
//
// - It never delays a user request: every vendor call goes through the adapter's background lane
//   (upstream/lanes.ts: it holds at most concurrency − 1 slots and waits behind user calls), waits
//   while less than `budgetReserve` of the vendor's request budget is left, and a budget refusal
//   is waited out (Retry-After), not counted as a failure.
// - It is resumable: a day's progress is a ledger row (store schema 4) and each member-day's bars
//   are store coverage, so a rerun (this instance restarted, or another one taking over) asks the
//   vendor only for what is not stored yet.
// - One runner per store (runner-lock.ts): the others stand by and take over when its lease lapses.
//
//   const recorder = new Recorder({ store, router, settings, lock, now, log });
//   recorder.start();  …  await recorder.runDue();  …  await recorder.stop();
import type { Adapter, CandleQuery } from '../../adapters/types.ts';
import type { BasePeriod, Candles, Market, PoolId, Region, SymbolRef } from '../domain.ts';
import { isAppError } from '../errors.ts';
import { addDays, isTradingDay, latestTradingDay, localMidnight, prevTradingDay } from '../markets/calendar.ts';
import { POOL_REGION, resolvePoolId } from '../markets/pools.ts';
import { calendarKeyOf, marketOf, parseSymbol } from '../markets/symbols.ts';
import { runPass, type HistoryStore } from '../store/index.ts';
import type { RecordJob, RecordSettings } from '../store/settings.ts';
import type { AdapterRouter } from '../upstream/router.ts';
import type { RecorderMetrics } from './metrics.ts';
import type { RunnerLock } from './runner-lock.ts';
import { closeOf, dueDays, nextRecordableAt } from './schedule.ts';

export interface RecorderLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface RecorderDeps {
  store: HistoryStore;
  router: AdapterRouter;
  settings: RecordSettings;
  lock: RunnerLock;
  now: () => number;
  log: RecorderLog;
  metrics?: RecorderMetrics;
  /** Adapters whose candles bypass the store: never recorded from. */
  offFor?: ReadonlySet<string>;
  /** The vendor's request budget (max, remaining), for the reserve left to users. */
  budgetOf?: (adapter: Adapter) => { max: number; remaining: number } | undefined;
  /** How often a standby instance tries to take over, and the runner renews its lease, ms. Default 2000. */
  holdEveryMs?: number;
  /** Longest wait before a failed day is tried again, ms. Default 300000. */
  retryMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** One job's progress on one market's trading day (the ledger 'run' row, `/v1/meta`). */
export interface DayRun {
  job: string;
  /** CN, HK, US, or CN_FUTURES (a job's futures contracts, recorded once every product has closed). */
  market: Market;
  day: string;
  state: 'running' | 'done' | 'failed';
  periods: BasePeriod[];
  members: number;
  done: number;
  bars: Partial<Record<BasePeriod, number>>;
  /** Members recorded (stored, bars or none that day) per period. */
  recorded: Partial<Record<BasePeriod, number>>;
  /** Vendor requests this run made (candles). */
  requests: number;
  failures: Record<string, number>;
  /** Members the vendor does not know (delisted, renamed): recorded as such, not retried. */
  unknown: number;
  /** Members per period not recorded because the day is older than the vendor serves (its `historyDays`). */
  beyond_window: Partial<Record<BasePeriod, number>>;
  started_at: number;
  finished_at?: number;
}

const MAX_BUDGET_WAITS = 20;

/** What recording one series window came to. */
export type SeriesOutcome =
  | { kind: 'bars'; bars: number; requests: number; adapter: string }
  | { kind: 'unknown'; requests: number; adapter: string }
  | { kind: 'beyond'; requests: number }
  | { kind: 'failed'; reason: string; requests: number };

export class Recorder {
  readonly #d: RecorderDeps;
  #timer: NodeJS.Timeout | undefined;
  #holder: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  #stop = new AbortController();

  constructor(deps: RecorderDeps) {
    this.#d = deps;
  }

  /** Starts the loop: try to hold the runner lock now and every holdEveryMs; the holder records what is due. */
  start(): void {
    if (this.#d.settings.jobs.length === 0) return;
    const every = this.#d.holdEveryMs ?? 2000;
    const hold = async () => {
      const held = await this.#d.lock.tryHold();
      this.#d.metrics?.runner(held);
      if (held && this.#running === undefined && !this.#stopped) void this.#cycle();
    };
    this.#holder = setInterval(() => void hold(), every);
    this.#holder.unref();
    setImmediate(() => void hold());
    void this.refreshCompleteness().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#stop.abort();
    clearInterval(this.#holder);
    clearTimeout(this.#timer);
    await this.#running?.catch(() => undefined);
    await this.#d.lock.release();
    this.#d.metrics?.runner(false);
  }

  /** One pass over what is due, then sleep until the next close (or a retry of a failed day). */
  #cycle(): Promise<void> {
    this.#running = this.runDue().catch((error: unknown) => {
      this.#d.log.warn({ err: error }, 'recorder: pass failed');
    }).finally(() => {
      this.#running = undefined;
      if (this.#stopped) return;
      clearTimeout(this.#timer);
      const wake = Math.max(1000, this.#nextWake() - this.#d.now());
      this.#timer = setTimeout(() => {
        if (this.#d.lock.held() && this.#running === undefined) void this.#cycle();
      }, wake);
      this.#timer.unref();
    });
    return this.#running;
  }

  #nextWake(): number {
    const now = this.#d.now();
    let at = now + (this.#d.retryMs ?? 300_000);
    for (const job of this.#d.settings.jobs) {
      for (const market of marketsOf(job)) at = Math.min(at, nextRecordableAt(market, now, this.#d.settings.delayMinutes));
    }
    return at;
  }

  /** Records every job's due days (oldest first); returns when done or when the lock is lost. */
  async runDue(): Promise<void> {
    for (const job of this.#d.settings.jobs) {
      for (const market of marketsOf(job)) {
        const name = `${job.id}/${market}`;
        const rows = await this.#d.store.ledgerGet('run', { name });
        const done = new Set(rows.filter((r) => (JSON.parse(r.data) as DayRun).state === 'done').map((r) => r.day));
        const days = dueDays(market, this.#d.now(), {
          delayMinutes: this.#d.settings.delayMinutes, catchUpDays: this.#d.settings.catchUpDays, done,
        });
        for (const day of days) {
          if (!this.#holding()) return;
          await this.recordDay(job, market, day, day === days[days.length - 1]);
        }
      }
    }
  }

  #holding(): boolean {
    return !this.#stopped && this.#d.lock.held();
  }

  /** The first adapter of `region`'s candle chain that records `period` into the store (warm's "via"). */
  candleAdapter(region: Market, period: BasePeriod): Adapter | undefined {
    return this.#d.router.chain('candles', region, { period, rawPrices: true }).find((a) => this.#d.offFor?.has(a.id) !== true);
  }

  /** Records one job's members of `market` on `day` (reference data too when `newest`). */
  async recordDay(job: RecordJob, market: Market, day: string, newest = true): Promise<DayRun> {
    const d = this.#d;
    const members = await this.#members(job, market, day);
    const run: DayRun = {
      job: job.id, market, day, state: 'running', periods: job.periods, members: members.length, done: 0,
      bars: {}, recorded: {}, requests: 0, failures: {}, unknown: 0, beyond_window: {}, started_at: d.now(),
    };
    const name = `${job.id}/${market}`;
    const save = () => d.store.ledgerPut('run', [{ name, day, updatedAt: d.now(), data: JSON.stringify(run) }]);
    await save();
    d.metrics?.progress(job.id, run.done, run.members);
    d.log.info({ job: job.id, market, day, members: members.length, periods: job.periods }, 'recorder: recording a day');
    let next = 0;
    let lastSave = d.now();
    const worker = async () => {
      for (;;) {
        if (!this.#holding()) return;
        const i = next++;
        if (i >= members.length) return;
        const ref = members[i];
        let failed = false;
        for (const period of job.periods) {
          const outcome = await this.recordSeries(ref, period, day);
          run.requests += outcome.requests;
          if (outcome.kind === 'bars') {
            run.bars[period] = (run.bars[period] ?? 0) + outcome.bars;
            run.recorded[period] = (run.recorded[period] ?? 0) + 1;
            d.metrics?.bars(job.id, period, outcome.bars);
          } else if (outcome.kind === 'unknown') {
            run.unknown += 1;
            break;
          } else if (outcome.kind === 'beyond') {
            run.beyond_window[period] = (run.beyond_window[period] ?? 0) + 1;
          } else if (outcome.kind === 'failed') {
            failed = true;
            run.failures[outcome.reason] = (run.failures[outcome.reason] ?? 0) + 1;
            d.metrics?.failure(job.id, outcome.reason);
          }
        }
        if (!failed) run.done += 1;
        d.metrics?.progress(job.id, run.done, run.members);
        if (d.now() - lastSave > 2000) {
          lastSave = d.now();
          await save();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(d.settings.concurrency, Math.max(1, members.length)) }, worker));
    if (!this.#holding()) {
      await save();
      return run;
    }
    if (newest) await this.recordReference(job, members);
    const failures = Object.values(run.failures).reduce((a, b) => a + b, 0);
    run.state = failures === 0 ? 'done' : 'failed';
    run.finished_at = d.now();
    await save();
    d.metrics?.finished(job.id, run.finished_at);
    await this.refreshCompleteness().catch(() => undefined);
    const fields = { job: job.id, market, day, members: run.members, done: run.done, unknown: run.unknown, bars: run.bars, requests: run.requests, failures: run.failures };
    if (run.state === 'done') d.log.info(fields, 'recorder: day recorded');
    else d.log.warn(fields, 'recorder: day recorded with failures; the failed members are tried again later');
    return run;
  }

  /** The job's members of `market` on `day`: its symbols and its universes' members (their snapshot kept). */
  async #members(job: RecordJob, market: Market, day: string): Promise<SymbolRef[]> {
    const out = new Map<string, SymbolRef>();
    for (const s of job.symbols) {
      const ref = parseSymbol(s);
      if (ref !== undefined && marketOf(ref) === market) out.set(ref.symbol, ref);
    }
    for (const u of job.universes) {
      const pool = resolvePoolId(u);
      if (pool === undefined || POOL_REGION[pool] !== market) continue;
      for (const s of await this.#membership(pool, job.membership, day)) {
        const ref = parseSymbol(s);
        if (ref !== undefined) out.set(ref.symbol, ref);
      }
    }
    return [...out.values()];
  }

  /** The pool's members from the vendor (kept as the day's snapshot), else the newest snapshot kept. */
  async #membership(pool: PoolId, keep: boolean, day: string): Promise<string[]> {
    const d = this.#d;
    const region = POOL_REGION[pool];
    for (const adapter of d.router.chain('pools', region)) {
      try {
        const detail = await d.router.call(adapter, 'pools', (ctx) => adapter.listPool!(pool, ctx), undefined, 'background');
        if (detail === undefined) continue;
        if (keep) {
          // A snapshot on each day the membership changed (as_of reads the newest at or before a date).
          const [before] = await d.store.ledgerGet('members', { name: pool, to: day, last: true });
          const symbols = [...detail.symbols].sort();
          const same = before !== undefined && sameList((JSON.parse(before.data) as { symbols: string[] }).symbols, symbols);
          if (!same) await d.store.ledgerPut('members', [{ name: pool, day, updatedAt: d.now(), data: JSON.stringify({ adapter: adapter.id, symbols }) }]);
        }
        return detail.symbols;
      } catch (error) {
        d.log.warn({ pool, adapter: adapter.id, err: errorText(error) }, 'recorder: listing a universe failed');
      }
    }
    const kept = await d.store.ledgerGet('members', { name: pool, to: day, last: true });
    if (kept.length > 0) return (JSON.parse(kept[0].data) as { symbols: string[] }).symbols;
    d.metrics?.failure('', 'membership');
    return [];
  }

  /** The chain's adapters that may record `period` of `ref` into the store, in chain order. */
  #candleChain(ref: SymbolRef, period: BasePeriod): Adapter[] {
    return this.#d.router.chain('candles', marketOf(ref), { period, rawPrices: true }).filter((a) => this.#d.offFor?.has(a.id) !== true);
  }

  /**
   * The closed `period` bars of `ref` on `day` into the store (one vendor request when not stored
   * yet; none when they are), from the first adapter of the chain that answers.
   */
  async recordSeries(ref: SymbolRef, period: BasePeriod, day: string): Promise<SeriesOutcome> {
    // From the day after the previous trading day: the weekend or holiday before `day` holds no
    // bar, and covering it keeps consecutive recorded days one covered run (a window across them,
    // or a first bar's prev_close, then needs no vendor).
    const key = calendarKeyOf(ref);
    const futures = futuresDays(ref, period === '1d' ? prevTradingDay(key, day) : day, day);
    if (futures !== undefined) {
      // A contract's daily bar is stored provisional: its settlement is the day's VWAP until the
      // vendor's next daily row states the exchange's (CFFEX settles on its last hour). So the
      // daily window reaches back over the day before, whose provisional bar the same request
      // re-fetches (its recheck is due at this close) and makes final with the stated settlement.
      return this.recordWindow(ref, period, futures.start, futures.end, { final: period !== '1d', day, mark: true });
    }
    const from = addDays(prevTradingDay(ref.region, day), 1);
    const start = localMidnight(ref.region, from);
    const end = localMidnight(ref.region, addDays(day, 1)) - 1;
    return this.recordWindow(ref, period, start, end, { final: true, day, mark: true });
  }

  /**
   * The closed `period` bars of `ref` in [start, end] into the store, from the first adapter of
   * the chain that answers: what is stored costs nothing, the rest one vendor request per
   * missing run (bounded by the store's bars per call). `final`: no provisional re-fetch (the
   * recorder, after a close and its delay); `mark`: the series keeps the recorder's retention;
   * `day`: skip adapters whose history window (capabilities.historyDays) ended before it.
   */
  async recordWindow(ref: SymbolRef, period: BasePeriod, start: number, end: number, o: { final?: boolean; day?: string; mark?: boolean } = {}): Promise<SeriesOutcome> {
    const d = this.#d;
    const query: CandleQuery = { symbol: ref, period, start, end };
    let requests = 0;
    let reason = 'unserved';
    let beyond = false;
    for (const adapter of this.#candleChain(ref, period)) {
      // Older than the vendor serves: an empty answer there would read as "no bars that day".
      const window = adapter.capabilities.historyDays?.[period];
      if (o.day !== undefined && window !== undefined && o.day < oldestServed(ref.region, d.now(), window)) {
        beyond = true;
        continue;
      }
      const key = { adapter: adapter.id, symbol: ref.symbol, period };
      try {
        if (o.mark === true) await d.store.markRecorded([key]);
        const whole = await d.store.stored(adapter.id, query);
        const bars = whole ?? await runPass(d.store.pass(adapter.id, query, { final: o.final === true }), (q) => {
          requests += 1;
          return this.#call(adapter, 'candles', (ctx) => adapter.getCandles!(q, ctx));
        });
        if (bars === undefined) return { kind: 'unknown', requests, adapter: adapter.id };
        return { kind: 'bars', bars: closedCount(bars), requests, adapter: adapter.id };
      } catch (error) {
        reason = reasonOf(error);
        if (reason === 'aborted') return { kind: 'failed', reason, requests };
      }
    }
    if (beyond && reason === 'unserved') return { kind: 'beyond', requests };
    return { kind: 'failed', reason, requests };
  }

  /**
   * Ex-factors and instruments of the members (of one market), in the adapters' native batches,
   * into the store's reference table. Returns the vendor requests made and the failed batches.
   */
  async recordReference(job: Pick<RecordJob, 'id' | 'exFactors' | 'instruments'>, members: SymbolRef[]): Promise<{ requests: number; failed: number }> {
    const d = this.#d;
    const out = { requests: 0, failed: 0 };
    const kinds = [
      ...(job.exFactors ? [['exFactors', 'getExFactors'] as const] : []),
      ...(job.instruments ? [['instruments', 'getInstruments'] as const] : []),
    ];
    if (members.length === 0) return out;
    const region = marketOf(members[0]);
    for (const [kind, method] of kinds) {
      const adapter = d.router.chain(kind, region)[0];
      if (adapter === undefined || adapter[method] === undefined) continue;
      const size = Math.max(1, adapter.capabilities.maxBatch);
      for (let i = 0; i < members.length && this.#holding(); i += size) {
        const batch = members.slice(i, i + size);
        out.requests += 1;
        try {
          const found = await this.#call<Map<string, unknown>>(adapter, kind, (ctx) => (adapter[method] as (s: SymbolRef[], c: typeof ctx) => Promise<Map<string, unknown>>)(batch, ctx));
          await d.store.keepReference(kind, adapter.id, [...found].map(([symbol, value]) => ({ symbol, value })));
        } catch (error) {
          const reason = reasonOf(error);
          out.failed += 1;
          d.metrics?.failure(job.id, `${kind}_${reason}`);
          d.log.warn({ job: job.id, kind, adapter: adapter.id, err: errorText(error) }, 'recorder: reference data not recorded');
        }
      }
    }
    return out;
  }

  /**
   * One vendor call in the background lane: first waits while the vendor's budget is below the
   * users' reserve; a refusal of the vendor's budget (spent, or paused by its 429) is waited out and tried again.
   */
  async #call<T>(adapter: Adapter, resource: Parameters<AdapterRouter['call']>[1], fn: Parameters<AdapterRouter['call']>[2]): Promise<T> {
    const d = this.#d;
    const signal = this.#stop.signal;
    const sleep = d.sleep ?? ((ms: number) => new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    }));
    for (let waits = 0; ; waits++) {
      if (this.#stop.signal.aborted) throw new Error('aborted');
      const budget = d.budgetOf?.(adapter);
      if (budget !== undefined && budget.remaining < Math.ceil(budget.max * d.settings.budgetReserve) && waits < MAX_BUDGET_WAITS) {
        await sleep(500);
        continue;
      }
      try {
        return await d.router.call(adapter, resource, fn as (ctx: object) => Promise<T>, undefined, 'background');
      } catch (error) {
        // The vendor's budget is spent or paused (its 429): waited out. An open circuit is a failure, tried again later.
        if (isAppError(error) && (error.details as { budget?: string } | undefined)?.budget !== undefined && waits < MAX_BUDGET_WAITS) {
          await sleep(Math.min(30_000, (error.retryAfterSeconds ?? 1) * 1000));
          continue;
        }
        throw error;
      }
    }
  }

  /**
   * mdqs_store_completeness per market and period: of the member-days the recorded jobs ran
   * (members the vendor knows, within its window), the share stored. From the store's ledger,
   * so any instance can report it.
   */
  async refreshCompleteness(): Promise<void> {
    const m = this.#d.metrics;
    if (m === undefined) return;
    const jobs = new Set(this.#d.settings.jobs.map((j) => j.id));
    const sums = new Map<string, { stored: number; expected: number }>();
    for (const row of await this.#d.store.ledgerGet('run', {})) {
      const run = JSON.parse(row.data) as DayRun;
      if (!jobs.has(run.job)) continue;
      for (const period of run.periods) {
        const key = `${run.market}|${period}`;
        const sum = sums.get(key) ?? { stored: 0, expected: 0 };
        sum.stored += run.recorded?.[period] ?? 0;
        sum.expected += Math.max(0, run.members - run.unknown - (run.beyond_window?.[period] ?? 0));
        sums.set(key, sum);
      }
    }
    for (const [key, sum] of sums) {
      const [market, period] = key.split('|');
      m.completeness(market, period, sum.expected === 0 ? 1 : sum.stored / sum.expected);
    }
  }

  /** The last run of each job per market, as every instance reads it from the store (`/v1/meta`). */
  async lastRuns(): Promise<DayRun[]> {
    const rows = await this.#d.store.ledgerGet('run', { last: true });
    const jobs = new Set(this.#d.settings.jobs.map((j) => j.id));
    return rows.map((r) => JSON.parse(r.data) as DayRun).filter((r) => jobs.has(r.job));
  }
}

/**
 * A futures contract's trading days `from` … `to` (`to` a non-trading day: through the trading
 * day before it) as one window: from the close of the trading day before `from`, through each
 * night session (held the evening before its day), to the close of the last day. The evening
 * after that close is the next day's night, not included: its bars do not exist yet. Undefined
 * for anything but a futures contract.
 */
export function futuresDays(ref: SymbolRef, from: string, to: string): { start: number; end: number } | undefined {
  const key = calendarKeyOf(ref);
  if (key === ref.region) return undefined;
  const last = isTradingDay(key, to) ? to : prevTradingDay(key, to);
  return { start: closeOf(key, prevTradingDay(key, from)) + 1, end: closeOf(key, last) };
}

/** The markets a job's members trade in (CN_FUTURES for its futures contracts). */
export function marketsOf(job: RecordJob): Market[] {
  const out = new Set<Market>();
  for (const s of job.symbols) {
    const ref = parseSymbol(s);
    if (ref !== undefined) out.add(marketOf(ref));
  }
  for (const u of job.universes) {
    const pool = resolvePoolId(u);
    if (pool !== undefined) out.add(POOL_REGION[pool]);
  }
  return [...out];
}

/** The oldest trading day a vendor serving `window` trading days back still has. */
function oldestServed(region: Region, now: number, window: number): string {
  let day = latestTradingDay(region, now);
  for (let i = 1; i < window; i++) day = prevTradingDay(region, day);
  return day;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const sorted = [...a].sort();
  return sorted.every((s, i) => s === b[i]);
}

function closedCount(bars: Candles): number {
  return bars.timestamp.length;
}

function reasonOf(error: unknown): string {
  if (isAppError(error)) {
    switch (error.reason) {
      case 'UPSTREAM_TIMEOUT': return 'timeout';
      case 'UPSTREAM_UNAVAILABLE': return 'unavailable';
      case 'UPSTREAM_BAD_RESPONSE': return 'bad_response';
      case 'UPSTREAM_ERROR': return 'upstream_error';
      default: return error.reason.toLowerCase();
    }
  }
  if (error instanceof Error && error.message === 'aborted') return 'aborted';
  return 'store';
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
