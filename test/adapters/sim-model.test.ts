// The daily and intraday models behind the sim adapter: bar validity, the tick grid, A-share
// limits, suspensions, corporate actions and exact 1m → 1d aggregation.
import { describe, expect, it } from 'vitest';
import { localMidnight, localTimeMs, tradingDaysBetween } from '../../src/markets/calendar.ts';
import {
  ANCHOR_DATE, buildDailyHistory, extendDailyHistory, tailOf, trimTail, type DailyHistory,
} from '../../adapters/sim/daily.ts';
import { SIM_INSTRUMENTS, findSimInstrument, type SimInstrument } from '../../adapters/sim/instruments.ts';
import { limitPrices } from '../../adapters/sim/limits.ts';
import { onGrid } from '../../adapters/sim/ticks.ts';
import { aggregate, barAt, expectWellFormed, ref, simAt, WED_MORNING } from './sim-fixtures.ts';

const THROUGH = '2026-11-20';

function instrument(symbol: string): SimInstrument {
  const found = findSimInstrument(symbol);
  if (found === undefined) throw new Error(symbol);
  return found;
}

function candlesOf(h: DailyHistory) {
  const list = (column: Float64Array) => Array.from(column);
  return {
    timestamp: list(h.timestamp), open: list(h.open), high: list(h.high), low: list(h.low), close: list(h.close),
    volume: list(h.volume), amount: list(h.amount), prev_close: list(h.prevClose),
  };
}

const built = new Map<string, DailyHistory>();

/** Full histories through THROUGH, built once per file (they are pure). */
function history(inst: SimInstrument): DailyHistory {
  let h = built.get(inst.symbol);
  if (h === undefined) built.set(inst.symbol, (h = buildDailyHistory(inst, THROUGH)));
  return h;
}

const SAMPLE = ['600519.SH', '300750.SZ', '688981.SH', '000656.SZ', '510300.SH', '00700.HK', '02800.HK', 'AAPL.US', 'NVDA.US', 'BRK.B.US'];

describe('sim daily model', () => {
  it('builds valid bars on trading days, on the tick grid, with lot-sized volumes', () => {
    const problems: string[] = [];
    for (const symbol of SAMPLE) {
      const inst = instrument(symbol);
      const h = history(inst);
      expectWellFormed(candlesOf(h));
      expect(h.dates[0] >= inst.listingDate || h.dates[0] === '2000-01-04').toBe(true);
      const tradingDays = new Set(tradingDaysBetween(inst.region, h.firstDay, THROUGH));
      for (let i = 0; i < h.dates.length; i++) {
        const at = `${symbol} ${h.dates[i]}`;
        if (!tradingDays.has(h.dates[i])) problems.push(`${at}: not a trading day`);
        if (h.timestamp[i] !== localMidnight(inst.region, h.dates[i])) problems.push(`${at}: timestamp`);
        for (const price of [h.open[i], h.high[i], h.low[i], h.close[i]]) if (!onGrid(inst, price)) problems.push(`${at}: off grid ${price}`);
        if (h.volume[i] % inst.lotSize !== 0 || h.volume[i] <= 0) problems.push(`${at}: volume ${h.volume[i]}`);
        // amount ≈ volume × a price inside the day's range, in cents.
        if (h.amount[i] !== Math.round(h.amount[i] * 100) / 100) problems.push(`${at}: amount ${h.amount[i]}`);
        const vwap = h.amount[i] / h.volume[i];
        if (vwap < h.low[i] * 0.999 || vwap > h.high[i] * 1.001) problems.push(`${at}: vwap ${vwap}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('anchors the raw path at the instrument price on the anchor date', () => {
    for (const symbol of SAMPLE) {
      const inst = instrument(symbol);
      const h = history(inst);
      const i = h.dates.lastIndexOf(h.dates.filter((d) => d <= ANCHOR_DATE).at(-1)!);
      expect(Math.abs(Math.log(h.close[i] / inst.price))).toBeLessThan(0.03);
    }
  });

  it('is prefix-stable: a shorter history is the start of a longer one', () => {
    const inst = instrument('601318.SH');
    const short = buildDailyHistory(inst, '2024-01-10');
    const long = buildDailyHistory(inst, THROUGH);
    const n = short.dates.length;
    expect(short.dates.at(-1)).toBe('2024-01-10');
    const prefix = Object.fromEntries(Object.entries(candlesOf(long)).map(([name, column]) => [name, column.slice(0, n)]));
    expect(candlesOf(short)).toEqual(prefix);
    expect(short.events).toEqual(long.events.filter((e) => e.date <= '2024-01-10'));
  });

  it('extends a history in place exactly as a fresh build would, tails included', () => {
    for (const symbol of ['600519.SH', 'NFLX.US', '00700.HK']) {
      const inst = instrument(symbol);
      const grown = buildDailyHistory(inst, '2025-06-18');
      const tail = tailOf(grown, 12);
      extendDailyHistory(inst, grown, '2026-02-10');
      extendDailyHistory(inst, grown, '2027-03-05');
      const fresh = buildDailyHistory(inst, '2027-03-05');
      expect(candlesOf(grown)).toEqual(candlesOf(fresh));
      expect(grown.events).toEqual(fresh.events);
      expect(grown.planned).toEqual(fresh.planned);
      extendDailyHistory(inst, tail, '2027-03-05');
      trimTail(tail, 12);
      expect(candlesOf(tail)).toEqual(candlesOf(tailOf(fresh, 12)));
      expect(tail.events).toEqual(fresh.events);
    }
  });

  it('keeps every A-share bar within the day\'s limits and closes some days exactly at the limit', () => {
    let limitUp = 0;
    let limitDown = 0;
    // Indices have no price limits (limitPrices is undefined for them).
    for (const inst of SIM_INSTRUMENTS.filter((i) => i.region === 'CN' && i.type !== 'index')) {
      const h = history(inst);
      for (let i = 0; i < h.dates.length; i++) {
        const limits = limitPrices(inst, h.prevClose[i])!;
        if (h.high[i] > limits.up || h.low[i] < limits.down) throw new Error(`${inst.symbol} ${h.dates[i]} beyond limits`);
        if (h.close[i] === limits.up) limitUp++;
        if (h.close[i] === limits.down) limitDown++;
      }
    }
    expect(limitUp).toBeGreaterThan(100);
    expect(limitDown).toBeGreaterThan(100);
  });

  it('suspends some A-shares for a few days: no bar at all on those trading days', () => {
    let suspendedSymbols = 0;
    for (const inst of SIM_INSTRUMENTS.filter((i) => i.region === 'CN' && i.type === 'stock')) {
      const h = history(inst);
      const missing = tradingDaysBetween(inst.region, h.firstDay, THROUGH).length - h.dates.length;
      expect(missing).toBeLessThan(40);
      if (missing > 0) suspendedSymbols++;
    }
    expect(suspendedSymbols).toBeGreaterThan(10);
    for (const inst of SIM_INSTRUMENTS.filter((i) => i.region !== 'CN' || i.type === 'etf')) {
      const h = history(inst);
      expect(h.dates.length).toBe(tradingDaysBetween(inst.region, h.firstDay, THROUGH).length);
    }
  });
});

describe('sim corporate actions', () => {
  it('gaps raw prices on ex-dates from the reference price, with ex_factor = P_prev / ref', () => {
    let checked = 0;
    for (const symbol of SAMPLE) {
      const inst = instrument(symbol);
      const h = history(inst);
      for (const event of h.events) {
        const i = h.dates.indexOf(event.date);
        expect(i).toBeGreaterThan(0);
        expect(event.pPrev).toBe(h.close[i - 1]);
        expect(event.ref).toBeCloseTo((event.pPrev - event.cash) / (1 + event.shareRatio), 9);
        expect(event.factor).toBeCloseTo(event.pPrev / event.ref, 12);
        expect(event.timestamp).toBe(localMidnight(inst.region, event.date));
        expect(h.prevClose[i]).toBe(event.base);
        expect(Math.abs(event.base - event.ref)).toBeLessThanOrEqual(inst.region === 'HK' ? 5 : 0.01);
        if (event.shareRatio >= 0.2) {
          // The open sits near the reference price, far from the pre-event close.
          expect(Math.abs(Math.log(h.open[i] / event.ref))).toBeLessThan(0.1);
          expect(Math.abs(Math.log(h.open[i] / event.pPrev))).toBeGreaterThan(0.1);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('uses the real split dates and ratios of well-known names', async () => {
    const adapter = simAt(WED_MORNING);
    const factors = await adapter.getExFactors(['AAPL.US', 'NVDA.US', 'TSLA.US', 'GOOGL.US', 'AMZN.US', '00700.HK'].map(ref));
    const has = (symbol: string, region: 'US' | 'HK', date: string, ratio: number): void => {
      // A split is shares only: bonus_ratio = ratio − 1, no cash.
      expect(factors.get(symbol)).toContainEqual({
        timestamp: localMidnight(region, date), ex_factor: ratio, cash_dividend: 0, bonus_ratio: ratio - 1, rights_ratio: 0, rights_price: 0, parts_known: true,
      });
    };
    has('AAPL.US', 'US', '2014-06-09', 7);
    has('AAPL.US', 'US', '2020-08-31', 4);
    has('NVDA.US', 'US', '2021-07-20', 4);
    has('NVDA.US', 'US', '2024-06-10', 10);
    has('TSLA.US', 'US', '2020-08-31', 5);
    has('TSLA.US', 'US', '2022-08-25', 3);
    has('GOOGL.US', 'US', '2022-07-18', 20);
    has('AMZN.US', 'US', '2022-06-06', 20);
    has('00700.HK', 'HK', '2014-05-15', 5);
    for (const list of factors.values()) {
      for (let i = 1; i < list.length; i++) expect(list[i].timestamp).toBeGreaterThan(list[i - 1].timestamp);
      expect(list.at(-1)!.timestamp).toBeLessThanOrEqual(WED_MORNING);
      for (const f of list) expect(f.ex_factor).toBeGreaterThan(1);
    }
    // Nothing after now: NFLX's 2025-11-17 split is not known on 2025-06-18.
    const nflx = (await adapter.getExFactors([ref('NFLX.US')])).get('NFLX.US')!;
    expect(nflx.some((f) => f.ex_factor === 10)).toBe(false);
    const laterNflx = (await simAt(Date.parse('2025-11-18T15:00:00Z')).getExFactors([ref('NFLX.US')])).get('NFLX.US')!;
    expect(laterNflx).toContainEqual(expect.objectContaining({ timestamp: localMidnight('US', '2025-11-17'), ex_factor: 10, bonus_ratio: 9 }));
  });

  it('pays A-share dividends yearly in June–July and US dividends quarterly', () => {
    const bank = history(instrument('600036.SH'));
    const years = bank.events.filter((e) => e.cash > 0).map((e) => e.date);
    expect(years.every((d) => d.slice(5, 7) === '06' || d.slice(5, 7) === '07')).toBe(true);
    expect(new Set(years.map((d) => d.slice(0, 4))).size).toBe(years.length);
    const ko = history(instrument('KO.US'));
    const y2024 = ko.events.filter((e) => e.date.startsWith('2024') && e.cash > 0);
    expect(y2024.map((e) => e.date.slice(5, 7))).toEqual(['02', '05', '08', '11']);
    for (const e of y2024) expect(e.factor).toBe(e.pPrev / (e.pPrev - e.cash));
  });
});

describe('sim intraday model', () => {
  const adapter = simAt(WED_MORNING);

  async function dayOfMinutes(symbol: string, region: 'CN' | 'HK' | 'US', date: string) {
    const minutes = (await adapter.getCandles({
      symbol: ref(symbol), period: '1m', start: localMidnight(region, date), end: localMidnight(region, date) + 86_399_999,
    }))!;
    const daily = (await adapter.getCandles({ symbol: ref(symbol), period: '1d', start: localMidnight(region, date), end: localMidnight(region, date) }))!;
    return { minutes, daily };
  }

  it.each([
    ['600519.SH', 'CN', '2025-06-17', 240],
    ['510300.SH', 'CN', '2025-06-17', 240],
    ['00700.HK', 'HK', '2025-06-17', 330],
    ['00700.HK', 'HK', '2024-12-24', 150],
    ['AAPL.US', 'US', '2025-06-17', 390],
    ['AAPL.US', 'US', '2024-11-29', 210],
  ] as const)('%s on %s %s: %i bars that aggregate exactly to the daily bar', async (symbol, region, date, bars) => {
    const { minutes, daily } = await dayOfMinutes(symbol, region, date);
    expectWellFormed(minutes);
    expect(minutes.timestamp.length).toBe(bars);
    expect(minutes.timestamp[0]).toBe(localTimeMs(region, date, '09:31'));
    expect(barAt(daily, 0)).toEqual(aggregate(minutes));
    const inst = instrument(symbol);
    for (let k = 0; k < bars; k++) {
      if (minutes.volume[k] % inst.lotSize !== 0) throw new Error(`lot ${k}`);
      if (!onGrid(inst, minutes.close[k]) || !onGrid(inst, minutes.high[k]) || !onGrid(inst, minutes.low[k])) throw new Error(`grid ${k}`);
      if (k > 0) expect(minutes.open[k]).toBe(minutes.close[k - 1]);
    }
    expect(minutes.prev_close![0]).toBe(daily.prev_close![0]);
  });

  it('front-loads volume at the open and keeps lunchtime quiet (CN)', async () => {
    const { minutes } = await dayOfMinutes('601318.SH', 'CN', '2025-06-17');
    const firstHalfHour = minutes.volume.slice(0, 30).reduce((a, b) => a + b, 0);
    const aroundLunch = minutes.volume.slice(105, 135).reduce((a, b) => a + b, 0);
    const lastHalfHour = minutes.volume.slice(210).reduce((a, b) => a + b, 0);
    expect(firstHalfHour).toBeGreaterThan(2 * aroundLunch);
    expect(lastHalfHour).toBeGreaterThan(aroundLunch);
  });

  it('aggregates exactly on every day of a month, for a limit-bound board too', async () => {
    for (const symbol of ['300750.SZ', '000656.SZ']) {
      const start = localMidnight('CN', '2025-05-06');
      const end = localMidnight('CN', '2025-06-06');
      const daily = (await adapter.getCandles({ symbol: ref(symbol), period: '1d', start, end }))!;
      const minutes = (await adapter.getCandles({ symbol: ref(symbol), period: '1m', start, end: end + 86_399_999 }))!;
      expect(minutes.timestamp.length).toBe(240 * daily.timestamp.length);
      for (let d = 0; d < daily.timestamp.length; d++) {
        const slice = {
          timestamp: minutes.timestamp.slice(d * 240, d * 240 + 240), open: minutes.open.slice(d * 240, d * 240 + 240),
          high: minutes.high.slice(d * 240, d * 240 + 240), low: minutes.low.slice(d * 240, d * 240 + 240),
          close: minutes.close.slice(d * 240, d * 240 + 240), volume: minutes.volume.slice(d * 240, d * 240 + 240),
          amount: minutes.amount.slice(d * 240, d * 240 + 240),
        };
        expect(barAt(daily, d)).toEqual(aggregate(slice));
      }
    }
  });
});
