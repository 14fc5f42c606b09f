// The market-data service: what routes call. Per resource it asks the loader (src/data/loader.ts)
// and applies the one partial-failure policy (settle below) and the candle engine.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { CandleQuery } from '../../adapters/types.ts';
import { buildCandles } from '../candles/pipeline.ts';
import type { AdjustEvent } from '../candles/adjust.ts';
import { concatCandles, lowerBound, sliceCandles } from '../candles/window.ts';
import type { Loader, LoadResult, ResourceSpec } from '../data/loader.ts';
import { totalFailure } from '../data/loader.ts';
import { bucketCount, type Resources } from '../data/resources/index.ts';
import { combineStatus, emptyStatus, mergeStatus, noteForming, type DataStatus } from '../data/status.ts';
import type {
  AdjustType, Candles, Depth, ExFactor, Instrument, MinutePeriod, Period, PoolDetail, PoolId, Quote, Region, SymbolRef,
} from '../domain.ts';
import { AppError, isAppError } from '../errors.ts';
import { localMidnight, prevTradingDay, tradingDayOf } from '../markets/calendar.ts';
import { calendarKeyOf } from '../markets/symbols.ts';
import { isIndexSymbol } from '../markets/indices.ts';
import { windowFor } from '../store/plan.ts';
import { DAY_MS } from '../markets/time.ts';
import { aggregationFor, baseFetchFor, type BaseFetch } from './candle-plan.ts';
import { createCandleBuilder, type CandleBuilder } from './candle-build.ts';
import { createBarsGate, type BarsGate } from './bars-gate.ts';

export interface BatchResult<T> {
  /** Found items by normalised symbol. */
  items: Map<string, T>;
  /** Symbols the vendor does not know (an answer: cached), request order. */
  unknown: string[];
  /** Symbols whose upstream failed (never cached, never "unknown"), request order. */
  failed: string[];
  /** unknown then failed: what is absent from `items`. */
  missing: string[];
  /** Adapter ids that answered. */
  upstreams: Set<string>;
  status: DataStatus;
}

export interface CandleParams {
  period: Period;
  count: number;
  start?: number;
  end?: number;
  adjust: AdjustType;
}

export interface Sourced<T> {
  candles: T;
  adapter: string;
  status: DataStatus;
  /**
   * Older bars exist before the first one inside the requested range (the answer was cut by
   * `count`): the timestamp of the newest of them, i.e. the end_time of the next, older page.
   */
  next?: number;
  /**
   * The limits that made the answer shorter than `count` (X-Limited-By), each as
   * `<name>; limit=<n>`: `base-bars` (MAX_BASE_BARS, candle-plan.ts).
   */
  limits?: string[];
}

/**
 * A series built with one bar more than asked (count + 1) as the answer: the extra, oldest bar is
 * the next page's newest, so its timestamp is the cursor (end_time, inclusive) and a walk of pages
 * loses or repeats no bar whatever the period (a week's bar is stamped with its last trading day,
 * so end_time = that stamp takes the whole week). `cut`: the raw fetch itself was cut by its count
 * inside the range, so its first output bar may be partial and older bars may exist: that bar goes
 * to the next page too.
 */
function paged(built: Candles, count: number, cut: boolean): { candles: Candles; next?: number } {
  const n = built.timestamp.length;
  if (n === 0 || (n <= count && !cut)) return { candles: built };
  return { candles: sliceCandles(built, 1, n), next: built.timestamp[0] };
}

/**
 * The partial-failure policy, in one place (docs/contract.md#symbols-regions-pools): unknown symbols are answers; failed
 * symbols are listed apart; when every requested symbol failed upstream, the upstream error
 * answers (502/503/504), never an empty 200.
 */
export function settle<T>(refs: readonly SymbolRef[], result: LoadResult<T>): BatchResult<T> {
  if (refs.length > 0 && result.failed.size === refs.length) throw totalFailure(result.failed);
  const failed = refs.filter((ref) => result.failed.has(ref.symbol)).map((ref) => ref.symbol);
  return {
    items: result.items,
    unknown: result.unknown,
    failed,
    missing: [...result.unknown, ...failed],
    upstreams: new Set(result.status.adapters),
    status: result.status,
  };
}

/** The resources keyed by symbol (their loader spec takes a SymbolRef). */
type BySymbolResource = { [N in keyof Resources]: Resources[N] extends ResourceSpec<SymbolRef, unknown> ? N : never }[keyof Resources];
type ValueOf<N extends keyof Resources> = Resources[N] extends ResourceSpec<SymbolRef, infer T> ? T : never;

/** Series over this many base bars are built in the worker thread (candle-build.ts). */
export const INLINE_MAX_BARS = 20_000;
/** Base bars that series built in the worker may hold at once (~16 MiB of columns; bars-gate.ts). */
export const HEAVY_BARS_IN_FLIGHT = 262_144;

export class MarketDataService {
  readonly #loader: Loader;
  readonly #heavy: BarsGate = createBarsGate(HEAVY_BARS_IN_FLIGHT);
  readonly #resources: Resources;
  readonly #builder: CandleBuilder;
  readonly now: () => number;

  constructor(loader: Loader, resources: Resources, now: () => number, builder: CandleBuilder = createCandleBuilder({ inlineMaxBars: INLINE_MAX_BARS })) {
    this.#loader = loader;
    this.#resources = resources;
    this.#builder = builder;
    this.now = now;
  }

  close(): Promise<void> {
    return this.#builder.close();
  }

  /**
   * Any resource keyed by symbol, with the partial-failure policy: what a route of a new by-symbol
   * resource calls (its descriptor is all the service needs).
   */
  async bySymbol<N extends BySymbolResource>(name: N, refs: readonly SymbolRef[]): Promise<BatchResult<ValueOf<N>>> {
    const spec = this.#resources[name] as unknown as ResourceSpec<SymbolRef, ValueOf<N>>;
    return settle(refs, await this.#loader.load(spec, refs));
  }

  async quotes(refs: readonly SymbolRef[]): Promise<BatchResult<Quote>> {
    return this.bySymbol('quotes', refs);
  }

  /** Indices have no order book: they are absent (unknown) without asking a vendor. */
  async depth(refs: readonly SymbolRef[]): Promise<BatchResult<Depth>> {
    if (!refs.some(isIndexSymbol)) return this.bySymbol('depth', refs);
    const books = refs.filter((ref) => !isIndexSymbol(ref));
    const result = books.length === 0 ? undefined : await this.bySymbol('depth', books);
    const unknown = refs.filter((ref) => isIndexSymbol(ref) || result?.unknown.includes(ref.symbol) === true).map((ref) => ref.symbol);
    const failed = result?.failed ?? [];
    return {
      items: result?.items ?? new Map(), unknown, failed, missing: [...unknown, ...failed],
      upstreams: result?.upstreams ?? new Set(), status: result?.status ?? emptyStatus(),
    };
  }

  async instruments(refs: readonly SymbolRef[]): Promise<BatchResult<Instrument>> {
    return this.bySymbol('instruments', refs);
  }

  /** An index has no ex-rights events: an empty list, without asking a vendor. */
  async exFactors(refs: readonly SymbolRef[], start?: number, end?: number): Promise<BatchResult<ExFactor[]>> {
    const securities = refs.filter((ref) => !isIndexSymbol(ref));
    const loaded = securities.length === 0
      ? { items: new Map<string, ExFactor[]>(), unknown: [], failed: new Map(), status: emptyStatus() }
      : await this.#loader.load(this.#resources.exFactors, securities);
    const result = settle(securities, loaded);
    if (securities.length < refs.length) {
      // Request order, as the loader keeps it.
      const items = new Map<string, ExFactor[]>();
      for (const ref of refs) {
        const events = isIndexSymbol(ref) ? [] : result.items.get(ref.symbol);
        if (events !== undefined) items.set(ref.symbol, events);
      }
      result.items = items;
    }
    if (start !== undefined || end !== undefined) {
      const lo = start ?? Number.NEGATIVE_INFINITY;
      const hi = end ?? Number.POSITIVE_INFINITY;
      const items = new Map<string, ExFactor[]>();
      for (const [symbol, events] of result.items) items.set(symbol, events.filter((e) => e.timestamp >= lo && e.timestamp <= hi));
      return { ...result, items };
    }
    return result;
  }

  async pool(id: PoolId, region: Region): Promise<{ value: PoolDetail | undefined; adapter: string; status: DataStatus }> {
    const { value, status } = await this.#loader.loadOne(this.#resources.pools, { id, region });
    return { value, adapter: status.adapters[0] ?? 'none', status };
  }

  /** Raw base-period candles through the loader; newest-N requests share a bucketed fetch. */
  async #raw(query: CandleQuery): Promise<{ value: Candles | undefined; status: DataStatus }> {
    const bucketed = query.start === undefined && query.end === undefined && query.count !== undefined;
    const fetchQuery: CandleQuery = bucketed ? { ...query, count: bucketCount(query.count as number) } : query;
    const loaded = await this.#loader.loadOne(this.#resources.candles, fetchQuery);
    let value = loaded.value;
    const status = loaded.status;
    if (value !== undefined && query.period === '1d' && status.formingAbsent?.includes(query.symbol.symbol) === true) {
      // Answered from stored bars while the vendors fail, with no forming bar in any tier: the
      // last quote the gateway holds is today's bar so far.
      const quote = await this.#loader.peek(this.#resources.quotes, query.symbol);
      const forming = quote === undefined ? undefined : dailyBarFromQuote(value, quote.value, this.now());
      if (forming !== undefined) {
        value = concatCandles(value, forming);
        noteForming(status, query.symbol.symbol, 'stale');
        status.maxAgeMs = Math.max(status.maxAgeMs, quote!.ageMs);
      }
    }
    return { value: value !== undefined && bucketed ? newestCount(value, query.count as number) : value, status };
  }

  /**
   * Candles for one symbol; `undefined` when the symbol is unknown; throws when the upstream failed.
   * `batch`: how many symbols the request asks for, so a request whose total base bars pass
   * INLINE_MAX_BARS builds its series in the worker even when each is short (when the build
   * adjusts or aggregates: a plain window is cheaper than the copies to the worker and back).
   */
  async candles(ref: SymbolRef, params: CandleParams, batch = 1): Promise<Sourced<Candles> | undefined> {
    const fetch = baseFetchFor(params.period, params);
    // A series the worker builds waits for room among the others in flight (bars-gate.ts).
    const release = fetch.count > INLINE_MAX_BARS ? await this.#heavy.acquire(fetch.count) : undefined;
    try {
      // A build that only windows raw bars (no adjustment, no aggregation) costs less than the
      // copies to and from the worker: it stays inline, between turns of the loop.
      const works = params.adjust !== 'none' || params.period !== fetch.period;
      return await this.#candles(ref, params, fetch, works && fetch.count * batch > INLINE_MAX_BARS);
    } finally {
      release?.();
    }
  }

  /** Heavy candle requests: bars held now and requests waiting for room (bars-gate.ts). */
  get heavyCandles(): { held: number; waiting: number } {
    return { held: this.#heavy.held, waiting: this.#heavy.waiting };
  }

  async #candles(ref: SymbolRef, params: CandleParams, fetch: BaseFetch, offload: boolean): Promise<Sourced<Candles> | undefined> {
    const raw = await this.#raw({ symbol: ref, period: fetch.period, start: fetch.start, end: fetch.end, count: fetch.count });
    if (raw.value === undefined) return undefined;
    const adjust = params.adjust === 'none' ? { events: [], status: emptyStatus() } : await this.#adjustEvents(ref, params.adjust);
    // Let other requests (and /healthz) in between symbols; long series build off the loop.
    await yieldToLoop();
    const candles = await this.#builder.build({
      raw: raw.value,
      events: adjust.events,
      adjust: params.adjust,
      period: params.period,
      region: calendarKeyOf(ref),
      minuteBase: fetch.period === '1m',
      window: { start: params.start, end: params.end, count: params.count + 1 },
    }, offload);
    const status = combineStatus(raw.status, adjust.status);
    // The store/adapter window was cut by count when it is full and starts inside the range.
    const rawBars = raw.value.timestamp;
    const cut = rawBars.length >= fetch.count && (params.start === undefined || rawBars[0] >= params.start);
    const page = paged(candles, params.count, cut);
    // Cut by the base-bar cap rather than by count: fewer bars than asked, and older ones exist.
    const limited = fetch.capped && page.next !== undefined && page.candles.timestamp.length < params.count;
    return { ...page, ...(limited ? { limits: [`base-bars; limit=${fetch.count}`] } : {}), adapter: raw.status.adapters[0] ?? 'none', status };
  }

  /** The latest session's bars (docs/contract.md#candle-time-semantics), aggregated to `period`, newest `count`. */
  async intraday(ref: SymbolRef, period: MinutePeriod, count: number | undefined): Promise<Sourced<Candles> | undefined> {
    const raw = await this.#loader.loadOne(this.#resources.intraday, ref);
    if (raw.value === undefined) return undefined;
    const bars = raw.value;
    const status = combineStatus(raw.status);
    // The vendor's own previous close (eastmoney, yahoo send it with the bars) saves a lookup.
    const own = bars.prev_close?.[0];
    let firstPrev: number | undefined = own !== undefined && Number.isFinite(own) && own > 0 ? own : undefined;
    if (firstPrev === undefined && bars.timestamp.length > 0) {
      // The first bar's predecessor is the previous trading day's last bar, i.e. its daily close.
      // Without it the engine falls back to the first bar's open: the bars are never dropped.
      // A futures night's bars belong to the next trading day: its trading day, not its date.
      const day = tradingDayOf(calendarKeyOf(ref), bars.timestamp[0]);
      const prevDay = localMidnight(ref.region, prevTradingDay(ref.region, day));
      try {
        const daily = await this.#raw({ symbol: ref, period: '1d', start: prevDay, end: prevDay, count: 1 });
        firstPrev = daily.value?.close.at(-1);
        mergeStatus(status, daily.status);
      } catch (error) {
        if (isAppError(error) && error.status < 500) throw error;
      }
    }
    const { prev_close: _vendorPrev, ...plain } = bars;
    const withLead: Candles = firstPrev === undefined ? plain : { ...plain, prev_close: bars.close.map((_, k) => (k === 0 ? firstPrev : NaN)) };
    const candles = buildCandles({
      raw: withLead,
      events: [],
      adjust: 'none',
      aggregate: aggregationFor(period, calendarKeyOf(ref)),
      window: count === undefined ? undefined : { count: count + 1 },
    });
    // The session's bars are all loaded: only `count` cuts it.
    return { ...(count === undefined ? { candles } : paged(candles, count, false)), adapter: raw.status.adapters[0] ?? 'none', status };
  }

  /** Per-symbol candle loads for the batch routes, under the same partial-failure policy. */
  async perSymbol(refs: readonly SymbolRef[], load: (ref: SymbolRef) => Promise<Sourced<Candles> | undefined>): Promise<BatchResult<Candles>> {
    const settled = await Promise.allSettled(refs.map(load));
    const items = new Map<string, Candles>();
    const unknown: string[] = [];
    const failed = new Map<string, unknown>();
    const status = emptyStatus();
    settled.forEach((outcome, index) => {
      const symbol = refs[index].symbol;
      if (outcome.status === 'rejected') {
        if (isAppError(outcome.reason) && outcome.reason.status < 500) throw outcome.reason;
        failed.set(symbol, outcome.reason);
        // The vendor was asked (and failed): never a HIT.
        status.miss = true;
      } else if (outcome.value === undefined) {
        unknown.push(symbol);
      } else {
        items.set(symbol, outcome.value.candles);
        mergeStatus(status, outcome.value.status);
      }
    });
    return settle(refs, { items, unknown, failed, status });
  }

  /**
   * The symbol's events with P_prev for each: the additive methods need the raw close before
   * every event, even when it lies outside the requested window.
   */
  async #adjustEvents(ref: SymbolRef, adjust: AdjustType): Promise<{ events: AdjustEvent[]; status: DataStatus }> {
    // `adjust` on an index is accepted and changes nothing.
    if (isIndexSymbol(ref)) return { events: [], status: emptyStatus() };
    const loaded = await this.#loader.load(this.#resources.exFactors, [ref]);
    const error = loaded.failed.get(ref.symbol);
    if (error !== undefined) throw error;
    const factors = loaded.items.get(ref.symbol) ?? [];
    if (factors.length === 0) return { events: [], status: loaded.status };
    if (adjust !== 'forward_additive' && adjust !== 'backward_additive') {
      // The ex-rights methods read the event's parts (cash_dividend, bonus_ratio, …) from the record.
      return { events: factors.map((f) => ({ ...f, prevClose: Number.NaN })), status: loaded.status };
    }
    const first = factors[0].timestamp;
    const last = factors[factors.length - 1].timestamp;
    const daily = await this.#raw({ symbol: ref, period: '1d', start: first - 30 * DAY_MS, end: last - 1 });
    const bars = daily.value;
    const events = factors.map((f) => {
      // The last raw daily close stamped before the ex-date.
      const index = bars === undefined ? -1 : lowerBound(bars.timestamp, f.timestamp) - 1;
      if (bars === undefined || index < 0) {
        throw new AppError('UPSTREAM_BAD_RESPONSE', 'the upstream has no close before an ex-date', {
          details: { symbol: ref.symbol, ex_date: f.timestamp },
        });
      }
      return { timestamp: f.timestamp, ex_factor: f.ex_factor, prevClose: bars.close[index] };
    });
    return { events, status: combineStatus(loaded.status, daily.status) };
  }
}

/**
 * Today's daily bar so far from the last quote, when the quote is of today's session (its
 * timestamp at or after the forming bar's label) and `closed` ends before it; else undefined.
 * The quote's volume and amount are the session's totals, like a daily bar's.
 */
export function dailyBarFromQuote(closed: Candles, quote: Quote, now: number): Candles | undefined {
  const label = windowFor(quote.region, '1d', {}, now).open;
  if (label === undefined || quote.timestamp < label || (closed.timestamp.at(-1) ?? -Infinity) >= label) return undefined;
  const prices = [quote.open, quote.high, quote.low, quote.last_price];
  if (!prices.every((p) => Number.isFinite(p) && p > 0)) return undefined;
  const bar: Candles = {
    timestamp: [label], open: [quote.open], high: [quote.high], low: [quote.low], close: [quote.last_price],
    volume: [quote.volume], amount: [quote.amount],
  };
  if (closed.prev_close !== undefined) bar.prev_close = [quote.prev_close];
  return bar;
}

function newestCount(candles: Candles, count: number): Candles {
  const n = candles.timestamp.length;
  if (n <= count) return candles;
  // sliceCandles keeps every column, the futures ones included.
  return sliceCandles(candles, n - count, n);
}
