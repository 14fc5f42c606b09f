// The sim adapter's windows (count/start/end), depth, suspended days and limit-bound books.
import { describe, expect, it } from 'vitest';
import { localMidnight, localTimeMs, tradingDaysBetween } from '../../src/markets/calendar.ts';
import { buildDailyHistory } from '../../adapters/sim/daily.ts';
import { SIM_INSTRUMENTS, findSimInstrument } from '../../adapters/sim/instruments.ts';
import { limitPrices } from '../../adapters/sim/limits.ts';
import { MAX_MINUTE_BARS } from '../../adapters/sim/market.ts';
import { stepUp } from '../../adapters/sim/ticks.ts';
import type { Depth } from '../../src/domain.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { expectWellFormed, ref, simAt, WED_MORNING } from './sim-fixtures.ts';

describe('sim candle windows', () => {
  const adapter = simAt(WED_MORNING);
  const moutai = ref('600519.SH');

  it('returns the newest `count` daily bars, ending with today\'s', async () => {
    const daily = (await adapter.getCandles({ symbol: moutai, period: '1d', count: 10 }))!;
    expect(daily.timestamp.length).toBe(10);
    expect(daily.timestamp[9]).toBe(localMidnight('CN', '2025-06-18'));
    expectWellFormed(daily);
  });

  it('treats start and end as inclusive and takes the newest `count` inside them', async () => {
    const all = (await adapter.getCandles({ symbol: moutai, period: '1d', count: 30 }))!;
    const start = all.timestamp[10];
    const end = all.timestamp[14];
    const window = (await adapter.getCandles({ symbol: moutai, period: '1d', start, end }))!;
    expect(window.timestamp).toEqual(all.timestamp.slice(10, 15));
    expect(window.close).toEqual(all.close.slice(10, 15));
    const newest = (await adapter.getCandles({ symbol: moutai, period: '1d', start, end, count: 2 }))!;
    expect(newest.timestamp).toEqual(all.timestamp.slice(13, 15));
    const shifted = (await adapter.getCandles({ symbol: moutai, period: '1d', start: start + 1, end: end - 1 }))!;
    expect(shifted.timestamp).toEqual(all.timestamp.slice(11, 14));
  });

  it('serves the whole history from the listing day when unbounded', async () => {
    const daily = (await adapter.getCandles({ symbol: moutai, period: '1d' }))!;
    expect(daily.timestamp[0]).toBe(localMidnight('CN', '2001-08-27'));
    expectWellFormed(daily);
    expect(daily.timestamp.length).toBeLessThanOrEqual(tradingDaysBetween('CN', '2001-08-27', '2025-06-18').length);
    expect(daily.timestamp.length).toBeGreaterThan(5500);
  });

  it('sees nothing after now and nothing before the listing', async () => {
    const future = await adapter.getCandles({ symbol: moutai, period: '1d', start: WED_MORNING + 1 });
    expect(future!.timestamp).toEqual([]);
    const futureMinutes = await adapter.getCandles({ symbol: moutai, period: '1m', start: WED_MORNING + 60_000 });
    expect(futureMinutes!.timestamp).toEqual([]);
    const beforeListing = await adapter.getCandles({ symbol: moutai, period: '1d', end: localMidnight('CN', '2001-08-24') });
    expect(beforeListing!.timestamp).toEqual([]);
  });

  it('walks 1m bars back across days for a count', async () => {
    const minutes = (await adapter.getCandles({ symbol: moutai, period: '1m', count: 500 }))!;
    expectWellFormed(minutes);
    expect(minutes.timestamp.length).toBe(500);
    // 46 bars today, 240 on Tuesday, the last 214 of Monday (from 09:57).
    expect(minutes.timestamp[0]).toBe(localTimeMs('CN', '2025-06-16', '09:57'));
    expect(minutes.timestamp[214]).toBe(localTimeMs('CN', '2025-06-17', '09:31'));
    expect(minutes.timestamp[499]).toBe(localTimeMs('CN', '2025-06-18', '10:16'));
    expect(minutes.prev_close![214]).toBe(minutes.close[213]);
  });

  it('windows 1m bars by start, end and count', async () => {
    const lunch = (await adapter.getCandles({
      symbol: moutai, period: '1m', end: localTimeMs('CN', '2025-06-17', '12:00'), count: 5,
    }))!;
    expect(lunch.timestamp).toEqual(['11:26', '11:27', '11:28', '11:29', '11:30'].map((t) => localTimeMs('CN', '2025-06-17', t)));
    const since = (await adapter.getCandles({ symbol: moutai, period: '1m', start: localTimeMs('CN', '2025-06-17', '14:56') }))!;
    expect(since.timestamp.length).toBe(5 + 46);
    const unbounded = (await adapter.getCandles({ symbol: moutai, period: '1m' }))!;
    expect(unbounded.timestamp.length).toBe(MAX_MINUTE_BARS);
    expect(unbounded.timestamp.at(-1)).toBe(localTimeMs('CN', '2025-06-18', '10:16'));
  });

  it('has no 1m bars on weekends or holidays', async () => {
    for (const [date, region] of [['2025-06-21', 'CN'], ['2025-05-01', 'CN'], ['2025-10-01', 'HK'], ['2025-06-19', 'US']] as const) {
      const symbol = region === 'CN' ? moutai : region === 'HK' ? ref('00700.HK') : ref('AAPL.US');
      const start = localMidnight(region, date);
      const bars = await adapter.getCandles({ symbol, period: '1m', start, end: start + 86_399_999 });
      expect(bars!.timestamp).toEqual([]);
      const days = await adapter.getCandles({ symbol, period: '1d', start, end: start });
      expect(days!.timestamp).toEqual([]);
    }
  });
});

/** Every broken book invariant, as text (empty when the book is sound). */
function bookProblems(depth: Depth, last: number, lot: number): string[] {
  const { bid_prices: bids, ask_prices: asks, bid_volumes: bidVolumes, ask_volumes: askVolumes } = depth;
  const problems: string[] = [];
  const check = (ok: boolean, what: string): void => {
    if (!ok) problems.push(`${depth.symbol}: ${what}`);
  };
  check(bids.length === bidVolumes.length && asks.length === askVolumes.length, 'column lengths');
  check(bids.length <= 5 && asks.length <= 5, 'more than five levels');
  check(bids.length === 0 || bids[0] <= last, 'best bid above last');
  check(asks.length === 0 || asks[0] >= last, 'best ask below last');
  check(bids.length === 0 || asks.length === 0 || bids[0] < asks[0], 'crossed book');
  for (let i = 1; i < bids.length; i++) check(bids[i] < bids[i - 1], 'bids not descending');
  for (let i = 1; i < asks.length; i++) check(asks[i] > asks[i - 1], 'asks not ascending');
  for (const v of [...bidVolumes, ...askVolumes]) check(v > 0 && v % lot === 0, `volume ${v}`);
  return problems;
}

function expectBookInvariants(depth: Depth, last: number, lot: number): void {
  expect(bookProblems(depth, last, lot)).toEqual([]);
}

describe('sim depth', () => {
  it('builds five levels each side around the last price for every instrument but the indices (no book)', async () => {
    let now = WED_MORNING;
    const adapter = createSimAdapter({}, { now: () => now });
    const securities = SIM_INSTRUMENTS.filter((i) => i.type !== 'index');
    const refs = SIM_INSTRUMENTS.map((i) => ref(i.symbol));
    const problems: string[] = [];
    for (const clock of [WED_MORNING, WED_MORNING + 61_000, Date.parse('2025-06-18T14:00:00Z')]) {
      now = clock;
      // Depth of every instrument, indices included (they answer none); quotes of those with a book.
      const quotes = await adapter.getQuotes(securities.map((i) => ref(i.symbol)));
      const books = await adapter.getDepth(refs);
      expect([...books.keys()]).toEqual(securities.map((i) => i.symbol));
      for (const inst of securities) {
        const depth = books.get(inst.symbol)!;
        const quote = quotes.get(inst.symbol)!;
        if (depth.region !== inst.region) problems.push(`${inst.symbol}: region`);
        if (quote.session === 'halted') continue;
        problems.push(...bookProblems(depth, quote.last_price, inst.lotSize));
        const limits = limitPrices(inst, quote.prev_close);
        // Never beyond the day's limits: near a limit the book has fewer levels, never padding.
        if (limits !== undefined && (depth.bid_prices.some((p) => p < limits.down) || depth.ask_prices.some((p) => p > limits.up))) {
          problems.push(`${inst.symbol}: beyond limits`);
        }
        const room = inst.type === 'etf' ? 0.006 : 0.06;
        if (limits === undefined || (quote.last_price + room < limits.up && quote.last_price - room > limits.down)) {
          if (depth.bid_prices.length !== 5 || depth.ask_prices.length !== 5) problems.push(`${inst.symbol}: levels`);
          const spreadOk = depth.bid_prices[0] === quote.last_price
            ? depth.ask_prices[0] === stepUp(inst, quote.last_price)
            : depth.ask_prices[0] === quote.last_price;
          if (!spreadOk) problems.push(`${inst.symbol}: not one tick around last`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('steps through the HKEX spread table', async () => {
    const depth = (await simAt(WED_MORNING).getDepth([ref('00700.HK')])).get('00700.HK')!;
    // Tencent trades above HK$200: 0.2 ticks.
    const gaps = depth.ask_prices.slice(1).map((p, i) => Math.round((p - depth.ask_prices[i]) * 1000) / 1000);
    expect(gaps).toEqual([0.2, 0.2, 0.2, 0.2]);
  });

  it('leaves the ask side empty at limit-up and the bid side empty at limit-down', async () => {
    let seenUp = false;
    let seenDown = false;
    for (const inst of SIM_INSTRUMENTS.filter((i) => i.region === 'CN')) {
      if (seenUp && seenDown) break;
      const h = buildDailyHistory(inst, '2025-06-13');
      for (let i = h.dates.length - 1; i >= 0 && h.dates[i] >= '2025-01-02'; i--) {
        const limits = limitPrices(inst, h.prevClose[i])!;
        const up = h.close[i] === limits.up;
        const down = h.close[i] === limits.down;
        if ((!up || seenUp) && (!down || seenDown)) continue;
        const afterClose = localTimeMs('CN', h.dates[i], '16:00');
        const adapter = simAt(afterClose);
        const depth = (await adapter.getDepth([ref(inst.symbol)])).get(inst.symbol)!;
        const quote = (await adapter.getQuotes([ref(inst.symbol)])).get(inst.symbol)!;
        expect(quote.last_price).toBe(h.close[i]);
        expectBookInvariants(depth, quote.last_price, inst.lotSize);
        if (up) {
          expect(depth.ask_prices).toEqual([]);
          expect(depth.ask_volumes).toEqual([]);
          expect(depth.bid_prices[0]).toBe(limits.up);
          seenUp = true;
        } else {
          expect(depth.bid_prices).toEqual([]);
          expect(depth.ask_prices[0]).toBe(limits.down);
          seenDown = true;
        }
      }
    }
    expect(seenUp && seenDown).toBe(true);
  });

  it('is deterministic within a minute and changes between minutes', async () => {
    const a = (await simAt(WED_MORNING).getDepth([ref('601318.SH')])).get('601318.SH')!;
    const b = (await simAt(WED_MORNING).getDepth([ref('601318.SH')])).get('601318.SH')!;
    const c = (await simAt(WED_MORNING + 120_000).getDepth([ref('601318.SH')])).get('601318.SH')!;
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
  });
});

describe('sim suspended days', () => {
  it('has no bar, a halted quote at the previous close, an empty book and an empty intraday', async () => {
    let found: { symbol: string; date: string; lastBar: string } | undefined;
    for (const inst of SIM_INSTRUMENTS.filter((i) => i.region === 'CN' && i.type === 'stock')) {
      const h = buildDailyHistory(inst, '2025-12-31');
      const dates = new Set(h.dates);
      const missing = tradingDaysBetween('CN', '2024-01-02', '2025-12-31').find((d) => d > h.firstDay && !dates.has(d));
      if (missing !== undefined) {
        found = { symbol: inst.symbol, date: missing, lastBar: h.dates.filter((d) => d < missing).at(-1)! };
        break;
      }
    }
    expect(found).toBeDefined();
    const { symbol, date, lastBar } = found!;
    const adapter = simAt(localTimeMs('CN', date, '10:00'));
    const r = ref(symbol);
    const daily = (await adapter.getCandles({ symbol: r, period: '1d', count: 1 }))!;
    expect(daily.timestamp).toEqual([localMidnight('CN', lastBar)]);
    const quote = (await adapter.getQuotes([r])).get(symbol)!;
    expect(quote.session).toBe('halted');
    expect(quote.volume).toBe(0);
    expect(quote.amount).toBe(0);
    expect(quote.last_price).toBe(daily.close[0]);
    expect(quote.prev_close).toBe(daily.close[0]);
    expect(quote.ext.change_pct).toBe(0);
    const depth = (await adapter.getDepth([r])).get(symbol)!;
    expect([depth.bid_prices, depth.ask_prices]).toEqual([[], []]);
    const intraday = (await adapter.getIntraday(r))!;
    expect(intraday.timestamp).toEqual([]);
    const minutes = (await adapter.getCandles({ symbol: r, period: '1m', count: 1 }))!;
    expect(minutes.timestamp).toEqual([localTimeMs('CN', lastBar, '15:00')]);
  });
});

describe('sim performance sanity', () => {
  it('builds full histories for 20 symbols', async () => {
    const adapter = simAt(WED_MORNING);
    const symbols = SIM_INSTRUMENTS.filter((_, i) => i % 11 === 0).slice(0, 20);
    for (const inst of symbols) {
      const daily = (await adapter.getCandles({ symbol: ref(inst.symbol), period: '1d' }))!;
      expect(daily.timestamp.length).toBeGreaterThan(0);
      expect(findSimInstrument(inst.symbol)).toBe(inst);
    }
  });
});
