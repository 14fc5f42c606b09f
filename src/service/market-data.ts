// The market-data service: the seam between routes and adapters. Per resource it routes to the
// adapter chain of each market, batches by region, runs the candle engine, and reports which
// symbols are missing. Caching and single-flight wrap the adapter calls (see data-source.ts).
import type { Adapter, CandleQuery } from '../../adapters/types.ts';
import { buildCandles } from '../candles/pipeline.ts';
import type { AdjustEvent } from '../candles/adjust.ts';
import { lowerBound } from '../candles/window.ts';
import type {
  AdjustType, Candles, Depth, ExFactor, Instrument, MinutePeriod, Period, PoolDetail, PoolId, Quote, Region, SymbolRef,
} from '../domain.ts';
import { AppError, isAppError } from '../errors.ts';
import { localDate, localMidnight, prevTradingDay } from '../markets/calendar.ts';
import { aggregationFor, baseFetchFor, tradeDateStartFn } from './candle-plan.ts';
import type { DataSource } from './data-source.ts';
import { recordFailure } from './cache-report.ts';

export interface BatchResult<T> {
  /** Found items by normalised symbol. */
  items: Map<string, T>;
  /** Unknown symbols and symbols that failed upstream, in request order. */
  missing: string[];
  /** Adapter ids that answered. */
  upstreams: Set<string>;
}

export interface CandleParams {
  period: Period;
  count: number;
  start?: number;
  end?: number;
  adjust: AdjustType;
}

function groupByRegion(refs: readonly SymbolRef[]): Map<Region, SymbolRef[]> {
  const groups = new Map<Region, SymbolRef[]>();
  for (const ref of refs) {
    const group = groups.get(ref.region);
    if (group) group.push(ref);
    else groups.set(ref.region, [ref]);
  }
  return groups;
}

export class MarketDataService {
  readonly source: DataSource;
  readonly now: () => number;

  constructor(source: DataSource, now: () => number) {
    this.source = source;
    this.now = now;
  }

  /**
   * A batch over symbols of any markets: one call per market chain. Symbols of a market whose
   * chain failed are missing; if every symbol failed upstream, the upstream error is thrown
   * (DESIGN.md 4.1: never an empty 200 for a total failure).
   */
  async #batch<T>(
    refs: readonly SymbolRef[],
    fetchGroup: (region: Region, group: SymbolRef[]) => Promise<{ items: Map<string, T>; adapter: string }>,
  ): Promise<BatchResult<T>> {
    const items = new Map<string, T>();
    const upstreams = new Set<string>();
    const failed = new Set<string>();
    let lastError: unknown;
    await Promise.all([...groupByRegion(refs)].map(async ([region, group]) => {
      try {
        const result = await fetchGroup(region, group);
        upstreams.add(result.adapter);
        for (const [symbol, item] of result.items) items.set(symbol, item);
      } catch (error) {
        if (isAppError(error) && error.status < 500) throw error;
        lastError = error;
        recordFailure();
        for (const ref of group) failed.add(ref.symbol);
      }
    }));
    if (refs.length > 0 && failed.size === refs.length) throw lastError;
    const missing = refs.filter((ref) => !items.has(ref.symbol)).map((ref) => ref.symbol);
    return { items, missing, upstreams };
  }

  quotes(refs: readonly SymbolRef[]): Promise<BatchResult<Quote>> {
    return this.#batch(refs, (region, group) => this.source.batch('quotes', region, group));
  }

  depth(refs: readonly SymbolRef[]): Promise<BatchResult<Depth>> {
    return this.#batch(refs, (region, group) => this.source.batch('depth', region, group));
  }

  instruments(refs: readonly SymbolRef[]): Promise<BatchResult<Instrument>> {
    return this.#batch(refs, (region, group) => this.source.batch('instruments', region, group));
  }

  async exFactors(refs: readonly SymbolRef[], start?: number, end?: number): Promise<BatchResult<ExFactor[]>> {
    const result = await this.#batch(refs, (region, group) => this.source.batch('exFactors', region, group));
    if (start !== undefined || end !== undefined) {
      const lo = start ?? Number.NEGATIVE_INFINITY;
      const hi = end ?? Number.POSITIVE_INFINITY;
      for (const [symbol, events] of result.items) {
        result.items.set(symbol, events.filter((e) => e.timestamp >= lo && e.timestamp <= hi));
      }
    }
    return result;
  }

  pool(id: PoolId, region: Region): Promise<{ value: PoolDetail | undefined; adapter: Adapter }> {
    return this.source.pool(id, region);
  }

  /** Candles for one symbol; `undefined` when the symbol is unknown. */
  async candles(ref: SymbolRef, params: CandleParams): Promise<{ candles: Candles; adapter: string } | undefined> {
    const fetch = baseFetchFor(params.period, params);
    const query: CandleQuery = { symbol: ref, period: fetch.period, start: fetch.start, end: fetch.end, count: fetch.count };
    const raw = await this.source.candles(query);
    if (raw.value === undefined) return undefined;
    const events = params.adjust === 'none' ? [] : await this.#adjustEvents(ref, params.adjust);
    const candles = buildCandles({
      raw: raw.value,
      events,
      adjust: params.adjust,
      tradeDateStart: fetch.period === '1m' ? tradeDateStartFn(ref.region) : undefined,
      aggregate: aggregationFor(params.period, ref.region),
      window: { start: params.start, end: params.end, count: params.count },
    });
    return { candles, adapter: raw.adapter };
  }

  /** The latest session's bars (DESIGN.md 4.3), aggregated to `period`, newest `count`. */
  async intraday(ref: SymbolRef, period: MinutePeriod, count: number | undefined): Promise<{ candles: Candles; adapter: string } | undefined> {
    const raw = await this.source.intraday(ref);
    if (raw.value === undefined) return undefined;
    const bars = raw.value;
    let firstPrev: number | undefined;
    if (bars.timestamp.length > 0) {
      // The first bar's predecessor is the previous trading day's last bar, i.e. its daily close.
      const day = localDate(ref.region, bars.timestamp[0]);
      const prevDay = localMidnight(ref.region, prevTradingDay(ref.region, day));
      const daily = await this.source.candles({ symbol: ref, period: '1d', start: prevDay, end: prevDay, count: 1 });
      firstPrev = daily.value?.close.at(-1);
    }
    const withLead: Candles = firstPrev === undefined ? bars : { ...bars, prev_close: bars.close.map((_, k) => (k === 0 ? firstPrev : NaN)) };
    const candles = buildCandles({
      raw: withLead,
      events: [],
      adjust: 'none',
      aggregate: aggregationFor(period, ref.region),
      window: count === undefined ? undefined : { count },
    });
    return { candles, adapter: raw.adapter };
  }

  /**
   * The symbol's events with P_prev for each: the additive methods need the raw close before
   * every event, even when it lies outside the requested window.
   */
  async #adjustEvents(ref: SymbolRef, adjust: AdjustType): Promise<AdjustEvent[]> {
    const result = await this.source.batch('exFactors', ref.region, [ref]);
    const factors = result.items.get(ref.symbol) ?? [];
    if (factors.length === 0) return [];
    if (adjust !== 'forward_additive' && adjust !== 'backward_additive') {
      return factors.map((f) => ({ timestamp: f.timestamp, ex_factor: f.ex_factor, prevClose: Number.NaN }));
    }
    const first = factors[0].timestamp;
    const last = factors[factors.length - 1].timestamp;
    const daily = await this.source.candles({ symbol: ref, period: '1d', start: first - 30 * 86_400_000, end: last - 1 });
    const bars = daily.value;
    return factors.map((f) => {
      // The last raw daily close stamped before the ex-date.
      const index = bars === undefined ? -1 : lowerBound(bars.timestamp, f.timestamp) - 1;
      if (bars === undefined || index < 0) {
        throw new AppError('UPSTREAM_BAD_RESPONSE', 'the upstream has no close before an ex-date', {
          details: { symbol: ref.symbol, ex_date: f.timestamp },
        });
      }
      return { timestamp: f.timestamp, ex_factor: f.ex_factor, prevClose: bars.close[index] };
    });
  }
}
