// The simulated market's state at an instant: which bars exist at `now`, today's partial day, and
// the candle windows the adapter serves. Histories are memoised per symbol in LRUs bounded by bytes
// (memo.ts); the clock only decides what is visible, never what a date's bar looks like.

import { LRUCache } from 'lru-cache';
import type { Candles } from '../../src/domain.ts';
import { copyBar, sizedCandles } from '../../src/candles/window.ts';
import {
  addDays, latestStartedSessionDay, latestTradingDay, localDate, minuteBarLabels, sessions,
} from '../../src/markets/calendar.ts';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  buildDailyHistory, extendDailyHistory, HISTORY_START, lastIndexOnOrBefore, tailOf, trimTail, type DailyHistory, type Midnight,
} from './daily.ts';
import { findSimInstrument, type SimInstrument } from './instruments.ts';
import { aggregateDay, allocMinuteBars, barsAt, buildMinuteBars, type DayBar, type MinuteBars } from './minute.ts';
import { historyBytes, memoBudget, midnightMemo, minuteDayBytes } from './memo.ts';
import { syntheticInstrument } from './synthetic.ts';

/** Most 1m bars one call returns when no `count` bounds it (the newest ones). */
export const MAX_MINUTE_BARS = 10_000;
/** Bars kept in a tail: enough to reach back over a pre-open morning plus a suspension. */
const TAIL_BARS = 12;

export interface WindowQuery {
  start?: number;
  end?: number;
  count?: number;
}

/** The latest started session day of an instrument as seen at `now`. */
export interface SessionDay {
  history: DailyHistory;
  /** latestStartedSessionDay of the instrument's market. */
  date: string;
  /** The day's visible bar (an aggregate of its 1m bars so far); undefined if suspended. */
  bar: DayBar | undefined;
  /** The day's visible 1m bars (empty if suspended); built on demand once the day is over. */
  minutes(): MinuteBars;
  /** When the last trade happened: now inside a minute, else the end of the newest bar. */
  lastTradeTime: number;
  /** The day's base price: previous close, or the reference price on an ex-date. */
  prevClose: number;
  /** True while the day's last session has not ended. */
  inProgress: boolean;
  /** True when the instrument is listed but has no bar that day. */
  suspended: boolean;
}

/** A DailyHistory holding only its newest bars (events, plan and walk complete). */
export interface RecentHistory extends DailyHistory {
  /** True when older bars exist that this tail does not hold. */
  truncated: boolean;
}

const EMPTY_MINUTES: MinuteBars = allocMinuteBars(0);

export interface SimMarket {
  instrument(symbol: string): SimInstrument | undefined;
  /** The full history up to the latest trading day at `now` (bars after now included: callers filter). */
  history(inst: SimInstrument, now: number): DailyHistory;
  /**
   * Build `history(inst, now)` ahead, a year at a time with a turn of the event loop between
   * years: a cold 25-year history is ~100 ms of CPU, which must not hold the service's loop.
   * Resolves to that history: a request holds it for its own reads (`held` below) rather than
   * asking the memo again after a turn of the loop, when other requests may have evicted it and
   * it would be built again from scratch.
   */
  prepare(inst: SimInstrument, now: number): Promise<DailyHistory>;
  /** The newest bars and every ex-event; cheap to keep for thousands of symbols. */
  recent(inst: SimInstrument, now: number): RecentHistory;
  /** undefined when the instrument had not listed by `now`. */
  sessionDay(inst: SimInstrument, now: number): SessionDay | undefined;
  /** `held`: history(inst, now) as the caller already holds it (from prepare). */
  dailyCandles(inst: SimInstrument, query: WindowQuery, now: number, held?: DailyHistory): Candles;
  /** The 1m bars of a window as ranges of whole days' bars, newest first (nothing copied yet). */
  minuteChunks(inst: SimInstrument, query: WindowQuery, now: number, held?: DailyHistory): MinuteChunk[];
  minuteCandles(inst: SimInstrument, query: WindowQuery, now: number, held?: DailyHistory): Candles;
  memoStats(): SimMemoStats;
}

/** One day's 1m bars as candles; the first bar's prev_close is the day's base price. */
export function minuteBarsToCandles(minutes: MinuteBars, prevClose: number): Candles {
  const n = minutes.timestamp.length;
  const prev = new Array<number>(n);
  for (let k = 0; k < n; k++) prev[k] = k === 0 ? prevClose : minutes.close[k - 1];
  return {
    timestamp: Array.from(minutes.timestamp), open: Array.from(minutes.open), high: Array.from(minutes.high), low: Array.from(minutes.low),
    close: Array.from(minutes.close), volume: Array.from(minutes.volume), amount: Array.from(minutes.amount), prev_close: prev,
  };
}

/**
 * Stores a value that may be the one already held, grown in place: lru-cache keeps the size it
 * measured when the same object is set again, so it is taken out and measured afresh.
 */
function remember<V extends object>(cache: LRUCache<string, V>, key: string, value: V): void {
  if (cache.peek(key) === value) cache.delete(key);
  cache.set(key, value);
}

/** Bars [from, to] of one day's 1m bars; prevClose is the day's base price. */
export interface MinuteChunk {
  minutes: MinuteBars;
  from: number;
  to: number;
  prevClose: number;
}

/** Chunks (newest first, as minuteChunks returns them) joined oldest first into exact-size columns. */
export function chunksToCandles(chunks: readonly MinuteChunk[]): Candles {
  let n = 0;
  for (const chunk of chunks) n += chunk.to - chunk.from + 1;
  const out = sizedCandles(n, true);
  const prev = out.prev_close as number[];
  let j = 0;
  for (let c = chunks.length - 1; c >= 0; c--) {
    const { minutes, from, to, prevClose } = chunks[c];
    for (let k = from; k <= to; k++, j++) {
      copyBar(out, j, minutes, k);
      prev[j] = k === 0 ? prevClose : minutes.close[k - 1];
    }
  }
  return out;
}

function lastSessionEnd(inst: SimInstrument, date: string): number {
  const windows = sessions(inst.region, date);
  return windows.length === 0 ? -Infinity : windows[windows.length - 1].end;
}

export interface SimMarketOptions {
  syntheticUniverse?: number;
  /** Bound of all memos together, bytes (default DEFAULT_MEMO_MAX_BYTES; at least MIN_MEMO_MAX_BYTES). */
  memoMaxBytes?: number;
}

/** What the memos hold now: entries and (estimated) bytes each, with their bounds. */
export interface SimMemoStats {
  histories: { entries: number; bytes: number; maxBytes: number };
  minuteDays: { entries: number; bytes: number; maxBytes: number };
  tails: { entries: number; bytes: number; maxBytes: number };
  midnights: { entries: number; maxEntries: number };
}

export function createSimMarket(options: SimMarketOptions = {}): SimMarket {
  const synthetic = Math.max(0, Math.floor(options.syntheticUniverse ?? 0));
  const budget = memoBudget(options.memoMaxBytes);
  // Full histories feed candle requests, days of 1m bars spare rebuilds while quotes poll, tails
  // (the newest bars, every ex-event) serve quotes, depth, instruments and ex-factors.
  const histories = new LRUCache<string, DailyHistory>({ maxSize: budget.histories, sizeCalculation: historyBytes });
  const tails = new LRUCache<string, RecentHistory>({ maxSize: budget.tails, sizeCalculation: historyBytes });
  const fullDays = new LRUCache<string, MinuteBars>({ maxSize: budget.minuteDays, sizeCalculation: minuteDayBytes });
  // localMidnight per bar dominates a cold build; every symbol of a market shares the same dates,
  // keyed by YYYYMMDD (a number: no string built per bar).
  const midnights = { CN: new Map<number, number>(), HK: new Map<number, number>(), US: new Map<number, number>() };
  const midnightFns = {
    CN: midnightMemo('CN', midnights.CN, budget.midnightEntries), HK: midnightMemo('HK', midnights.HK, budget.midnightEntries),
    US: midnightMemo('US', midnights.US, budget.midnightEntries),
  };
  const midnightOf = (region: SimInstrument['region']): Midnight => midnightFns[region];

  const instrument = (symbol: string): SimInstrument | undefined =>
    findSimInstrument(symbol) ?? (synthetic > 0 ? syntheticInstrument(symbol, synthetic) : undefined);

  /**
   * `from` (the history held so far, if any) grown to `through` and stored. Generation is forward
   * and per-date seeded: a longer history has the shorter one as prefix, so a new day only
   * extends what is held.
   */
  const grow = (inst: SimInstrument, from: DailyHistory | undefined, through: string): DailyHistory => {
    if (from !== undefined && from.through >= through) return from;
    const built = from === undefined
      ? buildDailyHistory(inst, through, midnightOf(inst.region))
      : extendDailyHistory(inst, from, through, midnightOf(inst.region));
    remember(histories, inst.symbol, built);
    return built;
  };

  const history = (inst: SimInstrument, now: number): DailyHistory =>
    grow(inst, histories.get(inst.symbol), latestTradingDay(inst.region, now));

  /**
   * A candle request asks for the symbol's ex-factors (its tail) right after its bars: keep the
   * tail of the history it just built, or that lookup builds the whole history again once the
   * history has left the memo (bench/suites/memory-soak.ts, at beed207).
   */
  const withTail = (inst: SimInstrument, h: DailyHistory): DailyHistory => {
    const tail = tails.get(inst.symbol);
    if (tail === undefined || tail.through < h.through) tails.set(inst.symbol, tailOf(h, TAIL_BARS));
    return h;
  };

  const prepare = async (inst: SimInstrument, now: number): Promise<DailyHistory> => {
    const through = latestTradingDay(inst.region, now);
    let held = histories.get(inst.symbol);
    let step = held === undefined ? addDays(inst.listingDate > HISTORY_START ? inst.listingDate : HISTORY_START, 365) : held.through;
    while (step < through) {
      held = grow(inst, held, step);
      await yieldToLoop();
      step = addDays(step, 365);
    }
    // The years built so far are held here, not re-read from the memo: grow them to `through`.
    return withTail(inst, grow(inst, held, through));
  };

  const recent = (inst: SimInstrument, now: number): RecentHistory => {
    const through = latestTradingDay(inst.region, now);
    const cached = tails.get(inst.symbol);
    if (cached !== undefined && cached.through >= through) return cached;
    if (cached !== undefined && cached.walk !== undefined) {
      extendDailyHistory(inst, cached, through, midnightOf(inst.region));
      trimTail(cached, TAIL_BARS);
      remember(tails, inst.symbol, cached);
      return cached;
    }
    // The tail needs the walk from the first day, not the full history kept: a quote batch of 20
    // cold symbols would push 20 histories into their memo and evict those candle requests are
    // reading (bench/suites/memory-soak.ts, at beed207).
    const full = histories.has(inst.symbol) ? history(inst, now) : buildDailyHistory(inst, through, midnightOf(inst.region));
    const tail = tailOf(full, TAIL_BARS);
    tails.set(inst.symbol, tail);
    return tail;
  };

  const dayBar = (h: DailyHistory, i: number): DayBar => ({
    date: h.dates[i], open: h.open[i], high: h.high[i], low: h.low[i], close: h.close[i], volume: h.volume[i], amount: h.amount[i],
  });

  /** Every 1m bar of bar `i`'s day (the model's full day, whatever the clock). */
  const fullDay = (inst: SimInstrument, h: DailyHistory, i: number): MinuteBars => {
    const key = `${inst.symbol}|${h.dates[i]}`;
    const hit = fullDays.get(key);
    if (hit !== undefined) return hit;
    const built = buildMinuteBars(inst, dayBar(h, i), minuteBarLabels(inst.region, h.dates[i], 1));
    fullDays.set(key, built);
    return built;
  };

  /** 1m bars of bar `i` visible at `now` (all of them once the day is over). */
  const minutesOf = (inst: SimInstrument, h: DailyHistory, i: number, now: number): MinuteBars => {
    const full = fullDay(inst, h, i);
    return now >= lastSessionEnd(inst, h.dates[i]) ? full : barsAt(inst, full, now);
  };

  const sessionDay = (inst: SimInstrument, now: number): SessionDay | undefined => {
    const date = latestStartedSessionDay(inst.region, now);
    let h: DailyHistory = recent(inst, now);
    let i = lastIndexOnOrBefore(h, date);
    // The day, or the bar before it, lies before the tail (a clock moved back): use everything.
    if (i < 1 && (h as RecentHistory).truncated) {
      h = history(inst, now);
      i = lastIndexOnOrBefore(h, date);
    }
    if (i < 0) return undefined;
    const end = lastSessionEnd(inst, date);
    const inProgress = now < end;
    if (h.dates[i] !== date) {
      return {
        history: h, date, bar: undefined, minutes: () => EMPTY_MINUTES, lastTradeTime: Math.min(now, end),
        prevClose: h.close[i], inProgress, suspended: true,
      };
    }
    const base = { history: h, date, prevClose: h.prevClose[i], inProgress, suspended: false };
    if (!inProgress) {
      // A finished day is its stored bar; its 1m bars aggregate to it exactly.
      const source = h;
      const index = i;
      return { ...base, bar: dayBar(h, i), minutes: () => fullDay(inst, source, index), lastTradeTime: end };
    }
    const minutes = minutesOf(inst, h, i, now);
    const last = minutes.timestamp[minutes.timestamp.length - 1];
    return { ...base, bar: aggregateDay(date, minutes), minutes: () => minutes, lastTradeTime: Math.min(now, last) };
  };

  const dailyCandles = (inst: SimInstrument, query: WindowQuery, now: number, held?: DailyHistory): Candles => {
    const h = held ?? history(inst, now);
    const today = latestStartedSessionDay(inst.region, now);
    const last = lastIndexOnOrBefore(h, today);
    const start = query.start ?? -Infinity;
    const end = query.end ?? Infinity;
    let from = 0;
    while (from <= last && h.timestamp[from] < start) from++;
    let to = last;
    while (to >= from && h.timestamp[to] > end) to--;
    if (query.count !== undefined) from = Math.max(from, to - query.count + 1);
    const n = Math.max(0, to - from + 1);
    const out = sizedCandles(n, true);
    const { timestamp, open, high, low, close, volume, amount } = out;
    const prev = out.prev_close as number[];
    let j = 0;
    for (let i = from; i <= to; i++) {
      if (h.dates[i] === today && now < lastSessionEnd(inst, today)) {
        // Today's bar so far: an aggregate of its visible 1m bars (none yet: no bar).
        const partial = aggregateDay(today, minutesOf(inst, h, i, now));
        if (partial === undefined) continue;
        timestamp[j] = h.timestamp[i];
        open[j] = partial.open;
        high[j] = partial.high;
        low[j] = partial.low;
        close[j] = partial.close;
        volume[j] = partial.volume;
        amount[j] = partial.amount;
      } else {
        copyBar(out, j, h, i);
      }
      prev[j] = h.prevClose[i];
      j++;
    }
    if (j < n) for (const column of [timestamp, open, high, low, close, volume, amount, prev]) column.length = j;
    return out;
  };

  const minuteChunks = (inst: SimInstrument, query: WindowQuery, now: number, held?: DailyHistory): MinuteChunk[] => {
    const h = held ?? history(inst, now);
    const start = query.start ?? -Infinity;
    // Bounds apply to labels; visibility to `now`. The bar in progress is labelled by its end,
    // after now, and is still the newest bar of an open-ended window.
    const end = query.end ?? Infinity;
    const limit = query.count ?? MAX_MINUTE_BARS;
    const chunks: MinuteChunk[] = [];
    if (end < start || limit <= 0) return chunks;
    const today = latestStartedSessionDay(inst.region, now);
    const endDate = end < now ? localDate(inst.region, end) : today;
    const lastIndex = lastIndexOnOrBefore(h, endDate < today ? endDate : today);
    // Walk back day by day, newest first, until the window's start or the count is reached.
    let collected = 0;
    for (let i = lastIndex; i >= 0 && collected < limit; i--) {
      const minutes = minutesOf(inst, h, i, now);
      const ts = minutes.timestamp;
      let to = ts.length - 1;
      while (to >= 0 && ts[to] > end) to--;
      let from = 0;
      while (from <= to && ts[from] < start) from++;
      if (to >= from) {
        from = Math.max(from, to - (limit - collected) + 1);
        chunks.push({ minutes, from, to, prevClose: h.prevClose[i] });
        collected += to - from + 1;
      }
      if (ts.length > 0 && ts[0] < start) break;
    }
    return chunks;
  };

  const minuteCandles = (inst: SimInstrument, query: WindowQuery, now: number, held?: DailyHistory): Candles =>
    chunksToCandles(minuteChunks(inst, query, now, held));

  const memoStats = (): SimMemoStats => ({
    histories: { entries: histories.size, bytes: histories.calculatedSize, maxBytes: budget.histories },
    minuteDays: { entries: fullDays.size, bytes: fullDays.calculatedSize, maxBytes: budget.minuteDays },
    tails: { entries: tails.size, bytes: tails.calculatedSize, maxBytes: budget.tails },
    midnights: { entries: midnights.CN.size + midnights.HK.size + midnights.US.size, maxEntries: 3 * budget.midnightEntries },
  });

  return { instrument, history, prepare, recent, sessionDay, dailyCandles, minuteChunks, minuteCandles, memoStats };
}
