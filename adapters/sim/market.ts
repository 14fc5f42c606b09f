// The simulated market's state at an instant: which bars exist at `now`, today's partial day, and
// the candle windows the adapter serves. Histories are memoised per symbol in a bounded LRU; the
// clock only decides what is visible, never what a date's bar looks like.

import { emptyCandles } from '../../src/candles/window.ts';
import { LRUCache } from 'lru-cache';
import type { Candles } from '../../src/domain.ts';
import {
  addDays, latestStartedSessionDay, latestTradingDay, localDate, localMidnight, minuteBarLabels, sessions,
} from '../../src/markets/calendar.ts';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  buildDailyHistory, extendDailyHistory, HISTORY_START, lastIndexOnOrBefore, tailOf, trimTail, type DailyHistory,
} from './daily.ts';
import { findSimInstrument, type SimInstrument } from './instruments.ts';
import { aggregateDay, barsAt, buildMinuteBars, type DayBar, type MinuteBars } from './minute.ts';
import { syntheticInstrument } from './synthetic.ts';

/** Most 1m bars one call returns when no `count` bounds it (the newest ones). */
export const MAX_MINUTE_BARS = 10_000;
/** Full histories (~7000 bars each, ~0.5 MB) kept for candle requests. */
const HISTORY_CACHE_SYMBOLS = 64;
/** Full days of 1m bars (~25 KB each), so polling quotes mid-session rebuilds nothing. */
const MINUTE_CACHE_DAYS = 512;
/** Recent tails (a few KB each) kept for quotes, depth, instruments and ex-factors. */
const RECENT_CACHE_SYMBOLS = 20_000;
/** Bars kept in a tail: enough to reach back over a pre-open morning plus a suspension. */
const TAIL_BARS = 12;
const MIDNIGHT_MEMO_LIMIT = 50_000;

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

const EMPTY_MINUTES: MinuteBars = Object.freeze({
  timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [],
}) as unknown as MinuteBars;

export interface SimMarket {
  instrument(symbol: string): SimInstrument | undefined;
  /** The full history up to the latest trading day at `now` (bars after now included: callers filter). */
  history(inst: SimInstrument, now: number): DailyHistory;
  /**
   * Build `history(inst, now)` ahead, a year at a time with a turn of the event loop between
   * years: a cold 25-year history is ~100 ms of CPU, which must not hold the service's loop.
   */
  prepare(inst: SimInstrument, now: number): Promise<void>;
  /** The newest bars and every ex-event; cheap to keep for thousands of symbols. */
  recent(inst: SimInstrument, now: number): RecentHistory;
  /** undefined when the instrument had not listed by `now`. */
  sessionDay(inst: SimInstrument, now: number): SessionDay | undefined;
  dailyCandles(inst: SimInstrument, query: WindowQuery, now: number): Candles;
  minuteCandles(inst: SimInstrument, query: WindowQuery, now: number): Candles;
}

/** One day's 1m bars as candles; the first bar's prev_close is the day's base price. */
export function minuteBarsToCandles(minutes: MinuteBars, prevClose: number): Candles {
  return {
    timestamp: minutes.timestamp.slice(), open: minutes.open.slice(), high: minutes.high.slice(), low: minutes.low.slice(),
    close: minutes.close.slice(), volume: minutes.volume.slice(), amount: minutes.amount.slice(),
    prev_close: minutes.close.map((_, k) => (k === 0 ? prevClose : minutes.close[k - 1])),
  };
}

function lastSessionEnd(inst: SimInstrument, date: string): number {
  const windows = sessions(inst.region, date);
  return windows.length === 0 ? -Infinity : windows[windows.length - 1].end;
}

export function createSimMarket(options: { syntheticUniverse?: number } = {}): SimMarket {
  const synthetic = Math.max(0, Math.floor(options.syntheticUniverse ?? 0));
  const histories = new LRUCache<string, DailyHistory>({ max: HISTORY_CACHE_SYMBOLS });
  const tails = new LRUCache<string, RecentHistory>({ max: RECENT_CACHE_SYMBOLS });
  const fullDays = new LRUCache<string, MinuteBars>({ max: MINUTE_CACHE_DAYS });
  const midnights = new Map<string, number>();

  // localMidnight per bar dominates a cold build; every symbol of a market shares the same dates.
  const midnightOf = (region: SimInstrument['region']) => (date: string): number => {
    const key = region + date;
    const hit = midnights.get(key);
    if (hit !== undefined) return hit;
    if (midnights.size >= MIDNIGHT_MEMO_LIMIT) midnights.clear();
    const value = localMidnight(region, date);
    midnights.set(key, value);
    return value;
  };

  const instrument = (symbol: string): SimInstrument | undefined =>
    findSimInstrument(symbol) ?? (synthetic > 0 ? syntheticInstrument(symbol, synthetic) : undefined);

  const history = (inst: SimInstrument, now: number): DailyHistory => {
    const through = latestTradingDay(inst.region, now);
    const cached = histories.get(inst.symbol);
    // Generation is forward and per-date seeded: a longer history has the shorter one as prefix,
    // so a new day only extends what is cached.
    if (cached !== undefined && cached.through >= through) return cached;
    const built = cached === undefined
      ? buildDailyHistory(inst, through, midnightOf(inst.region))
      : extendDailyHistory(inst, cached, through, midnightOf(inst.region));
    histories.set(inst.symbol, built);
    return built;
  };

  const prepare = async (inst: SimInstrument, now: number): Promise<void> => {
    const through = latestTradingDay(inst.region, now);
    let cached = histories.get(inst.symbol);
    if (cached !== undefined && cached.through >= through) return;
    let step = cached === undefined ? addDays(inst.listingDate > HISTORY_START ? inst.listingDate : HISTORY_START, 365) : cached.through;
    while (step < through) {
      cached = cached === undefined
        ? buildDailyHistory(inst, step, midnightOf(inst.region))
        : extendDailyHistory(inst, cached, step, midnightOf(inst.region));
      histories.set(inst.symbol, cached);
      await yieldToLoop();
      step = addDays(step, 365);
    }
    history(inst, now);
  };

  const recent = (inst: SimInstrument, now: number): RecentHistory => {
    const through = latestTradingDay(inst.region, now);
    const cached = tails.get(inst.symbol);
    if (cached !== undefined && cached.through >= through) return cached;
    if (cached !== undefined && cached.walk !== undefined) {
      extendDailyHistory(inst, cached, through, midnightOf(inst.region));
      trimTail(cached, TAIL_BARS);
      return cached;
    }
    const tail = tailOf(history(inst, now), TAIL_BARS);
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

  const dailyCandles = (inst: SimInstrument, query: WindowQuery, now: number): Candles => {
    const h = history(inst, now);
    const today = latestStartedSessionDay(inst.region, now);
    const last = lastIndexOnOrBefore(h, today);
    const out = emptyCandles(true);
    const start = query.start ?? -Infinity;
    const end = query.end ?? Infinity;
    let from = 0;
    while (from <= last && h.timestamp[from] < start) from++;
    let to = last;
    while (to >= from && h.timestamp[to] > end) to--;
    if (query.count !== undefined) from = Math.max(from, to - query.count + 1);
    for (let i = from; i <= to; i++) {
      let bar = dayBar(h, i);
      if (h.dates[i] === today && now < lastSessionEnd(inst, today)) {
        const partial = aggregateDay(today, minutesOf(inst, h, i, now));
        if (partial === undefined) continue;
        bar = partial;
      }
      out.timestamp.push(h.timestamp[i]);
      out.open.push(bar.open);
      out.high.push(bar.high);
      out.low.push(bar.low);
      out.close.push(bar.close);
      out.volume.push(bar.volume);
      out.amount.push(bar.amount);
      out.prev_close!.push(h.prevClose[i]);
    }
    return out;
  };

  const minuteCandles = (inst: SimInstrument, query: WindowQuery, now: number): Candles => {
    const h = history(inst, now);
    const start = query.start ?? -Infinity;
    // Bounds apply to labels; visibility to `now`. The bar in progress is labelled by its end,
    // after now, and is still the newest bar of an open-ended window.
    const end = query.end ?? Infinity;
    const limit = query.count ?? MAX_MINUTE_BARS;
    const out = emptyCandles(true);
    if (end < start || limit <= 0) return out;
    const today = latestStartedSessionDay(inst.region, now);
    const endDate = end < now ? localDate(inst.region, end) : today;
    const lastIndex = lastIndexOnOrBefore(h, endDate < today ? endDate : today);
    // Walk back day by day, newest first, until the window's start or the count is reached.
    const chunks: { minutes: MinuteBars; from: number; to: number; prevClose: number }[] = [];
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
    for (let c = chunks.length - 1; c >= 0; c--) {
      const { minutes, from, to, prevClose } = chunks[c];
      for (let k = from; k <= to; k++) {
        out.timestamp.push(minutes.timestamp[k]);
        out.open.push(minutes.open[k]);
        out.high.push(minutes.high[k]);
        out.low.push(minutes.low[k]);
        out.close.push(minutes.close[k]);
        out.volume.push(minutes.volume[k]);
        out.amount.push(minutes.amount[k]);
        out.prev_close!.push(k === 0 ? prevClose : minutes.close[k - 1]);
      }
    }
    return out;
  };

  return { instrument, history, prepare, recent, sessionDay, dailyCandles, minuteCandles };
}
