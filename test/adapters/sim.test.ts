// The sim adapter as the service sees it: determinism, "now" semantics, consistency between
// quotes, intraday and daily candles, and the shapes of every resource.
import { describe, expect, it } from 'vitest';
import { localMidnight, localTimeMs, tradingDaysBetween } from '../../src/markets/calendar.ts';
import { SIM_CAPABILITIES, createSimAdapter } from '../../adapters/sim/index.ts';
import { buildDailyHistory } from '../../adapters/sim/daily.ts';
import { findSimInstrument } from '../../adapters/sim/instruments.ts';
import { limitPrices } from '../../adapters/sim/limits.ts';
import {
  AFTER_CLOSE, BEFORE_OPEN, NATIONAL_DAY, SATURDAY, WED_MORNING, aggregate, barAt, expectWellFormed, ref, simAt,
} from './sim-fixtures.ts';

const SYMBOLS = ['600519.SH', '000001.SZ', '510300.SH', '00700.HK', 'AAPL.US'];

describe('sim adapter: identity and capabilities', () => {
  it('declares every resource, CN/HK/US, native 1m and 1d, raw prices and amounts', () => {
    const adapter = simAt(WED_MORNING);
    expect(adapter.id).toBe('sim');
    expect(adapter.label).toBe('sim');
    expect(adapter.capabilities).toBe(SIM_CAPABILITIES);
    expect(adapter.capabilities).toEqual({
      resources: {
        quotes: true, depth: true, candles: true, intraday: true, exFactors: true, instruments: true, pools: true,
        financialsIncome: true, financialsBalanceSheet: true, financialsCashFlow: true, financialsMetrics: true, financialsShares: true,
      },
      markets: ['CN', 'HK', 'US', 'CN_FUTURES'],
      periods: { '1m': true, '1d': true },
      maxBatch: 500,
      rawPrices: true,
      amount: true,
    });
  });
});

describe('sim adapter: determinism', () => {
  it('gives deep-equal answers from two adapters at the same instant', async () => {
    const a = simAt(WED_MORNING);
    const b = simAt(WED_MORNING);
    const refs = SYMBOLS.map(ref);
    expect(await a.getQuotes(refs)).toEqual(await b.getQuotes(refs));
    expect(await a.getDepth(refs)).toEqual(await b.getDepth(refs));
    expect(await a.getExFactors(refs)).toEqual(await b.getExFactors(refs));
    expect(await a.getInstruments(refs)).toEqual(await b.getInstruments(refs));
    for (const r of refs) {
      expect(await a.getCandles({ symbol: r, period: '1d', count: 300 })).toEqual(await b.getCandles({ symbol: r, period: '1d', count: 300 }));
      expect(await a.getCandles({ symbol: r, period: '1m', count: 600 })).toEqual(await b.getCandles({ symbol: r, period: '1m', count: 600 }));
    }
  });

  it('reproduces known values (a golden check against drift across machines and edits)', async () => {
    const quotes = await simAt(WED_MORNING).getQuotes(['600519.SH', '00700.HK', 'AAPL.US'].map(ref));
    const seen = [...quotes.values()].map((q) => [q.symbol, q.last_price, q.prev_close, q.volume, q.amount]);
    expect(seen).toEqual([
      // Changed on purpose (issue 24): the sim's history no longer trades on the 2000-2022 holidays.
      ['600519.SH', 992.47, 994.96, 4519800, 4509072067.22],
      ['00700.HK', 458.2, 452.6, 15730200, 7221496471.68],
      ['AAPL.US', 217.18, 220.41, 130292834, 28360417959.56],
    ]);
  });

  it('answers like a fresh adapter while its clock moves forward (and back) across days', async () => {
    let now = WED_MORNING;
    const living = createSimAdapter({}, { now: () => now });
    const refs = ['600519.SH', '000001.SZ', '00700.HK', 'AAPL.US'].map(ref);
    const clocks = ['2025-06-18T02:15:30Z', '2025-06-19T06:59:00Z', '2025-06-23T01:31:10Z', '2025-06-30T07:30:00Z', '2025-06-20T03:00:00Z'];
    for (const clock of clocks) {
      now = Date.parse(clock);
      const fresh = simAt(now);
      expect(await living.getQuotes(refs)).toEqual(await fresh.getQuotes(refs));
      expect(await living.getExFactors(refs)).toEqual(await fresh.getExFactors(refs));
      expect(await living.getIntraday(refs[0])).toEqual(await fresh.getIntraday(refs[0]));
      expect(await living.getCandles({ symbol: refs[1], period: '1d', count: 50 })).toEqual(await fresh.getCandles({ symbol: refs[1], period: '1d', count: 50 }));
    }
  });

  it('serves a past bar identically whatever the clock says now', async () => {
    const start = localMidnight('CN', '2024-03-01');
    const end = localMidnight('CN', '2024-03-29');
    const early = await simAt(Date.parse('2024-04-02T03:00:00Z')).getCandles({ symbol: ref('600519.SH'), period: '1d', start, end });
    const late = await simAt(WED_MORNING).getCandles({ symbol: ref('600519.SH'), period: '1d', start, end });
    expect(early!.timestamp.length).toBe(tradingDaysBetween('CN', '2024-03-01', '2024-03-29').length);
    expect(late).toEqual(early);
  });
});

describe('sim adapter: the current session (Wednesday 10:15:30 Shanghai)', () => {
  const adapter = simAt(WED_MORNING);

  it('shows 45 complete 1m bars and the partial 10:16 bar, all on calendar labels', async () => {
    const intraday = (await adapter.getIntraday(ref('600519.SH')))!;
    expectWellFormed(intraday);
    expect(intraday.timestamp.length).toBe(46);
    expect(intraday.timestamp[0]).toBe(localTimeMs('CN', '2025-06-18', '09:31'));
    expect(intraday.timestamp[45]).toBe(localTimeMs('CN', '2025-06-18', '10:16'));
  });

  it('keeps quote, newest 1m close and today\'s daily close equal', async () => {
    for (const symbol of ['600519.SH', '300750.SZ', '510300.SH', '00700.HK']) {
      const r = ref(symbol);
      const quote = (await adapter.getQuotes([r])).get(symbol)!;
      const intraday = (await adapter.getIntraday(r))!;
      const daily = (await adapter.getCandles({ symbol: r, period: '1d', count: 2 }))!;
      expect(daily.timestamp[1]).toBe(localMidnight(r.region, '2025-06-18'));
      expect(quote.last_price).toBe(intraday.close.at(-1));
      expect(quote.last_price).toBe(daily.close[1]);
      expect(quote.session).toBe('regular');
      expect(quote.timestamp).toBe(WED_MORNING);
      // Today's daily bar is exactly the aggregate of today's 1m bars so far.
      expect(barAt(daily, 1)).toEqual(aggregate(intraday));
      expect(quote.volume).toBe(daily.volume[1]);
      expect(quote.amount).toBe(daily.amount[1]);
      expect([quote.open, quote.high, quote.low]).toEqual([daily.open[1], daily.high[1], daily.low[1]]);
      // prev_close is yesterday's close, or the reference price on an ex-date.
      expect(quote.prev_close).toBe(daily.prev_close![1]);
      expect(quote.prev_close).toBe(daily.close[0]);
      expect(quote.ext.change_amount).toBeCloseTo(quote.last_price - quote.prev_close, 9);
      expect(quote.ext.change_pct).toBe(Math.round((quote.ext.change_amount / quote.prev_close) * 1e6) / 1e6);
      expect(quote.ext.amplitude).toBe(Math.round(((quote.high - quote.low) / quote.prev_close) * 1e6) / 1e6);
    }
  });

  it('quotes a US name after its close with the full day and the close time', async () => {
    const quote = (await adapter.getQuotes([ref('AAPL.US')])).get('AAPL.US')!;
    const intraday = (await adapter.getIntraday(ref('AAPL.US')))!;
    expect(intraday.timestamp.length).toBe(390);
    expect(quote.timestamp).toBe(localTimeMs('US', '2025-06-17', '16:00'));
    expect(quote.last_price).toBe(intraday.close[389]);
    expect(quote.session).toBe('closed');
    expect(quote.ext.type).toBe('us_equity');
    expect(quote.ext.name).toBe('Apple Inc.');
  });

  it('grows the partial bar toward the full minute and then shows the full minute', async () => {
    const label = localTimeMs('CN', '2025-06-18', '10:16');
    const partial = (await adapter.getIntraday(ref('600519.SH')))!;
    const later = (await simAt(label).getIntraday(ref('600519.SH')))!;
    expect(later.timestamp.length).toBe(46);
    expect(later.timestamp.slice(0, 45)).toEqual(partial.timestamp.slice(0, 45));
    expect(later.close.slice(0, 45)).toEqual(partial.close.slice(0, 45));
    const [open, fullClose, halfClose] = [later.open[45], later.close[45], partial.close[45]];
    expect(partial.open[45]).toBe(open);
    expect(Math.min(open, fullClose) <= halfClose && halfClose <= Math.max(open, fullClose)).toBe(true);
    expect(partial.volume[45]).toBeLessThanOrEqual(later.volume[45]);
    expect(partial.volume[45] % 100).toBe(0);
  });

  it('returns an instrument with today\'s limits from the previous close', async () => {
    const quote = (await adapter.getQuotes([ref('600519.SH')])).get('600519.SH')!;
    const instrument = (await adapter.getInstruments([ref('600519.SH')])).get('600519.SH')!;
    const limits = limitPrices({ region: 'CN', exchange: 'SH', code: '600519', type: 'stock' }, quote.prev_close)!;
    expect(instrument).toMatchObject({
      code: '600519', exchange: 'SH', name: '贵州茅台', region: 'CN', symbol: '600519.SH', type: 'stock',
      ext: { type: 'cn_equity', listing_date: '2001-08-27', tick_size: 0.01, lot_size: 100, limit_up: limits.up, limit_down: limits.down },
    });
    expect(quote.ext.turnover_rate).toBe(Math.round((quote.volume / instrument.ext.float_shares!) * 1e6) / 1e6);
    const etf = (await adapter.getInstruments([ref('510300.SH')])).get('510300.SH')!;
    expect(etf.type).toBe('etf');
    expect(etf.ext.tick_size).toBe(0.001);
    const us = (await adapter.getInstruments([ref('AAPL.US')])).get('AAPL.US')!;
    expect(us.ext.limit_up).toBeNull();
    expect(us.ext.limit_down).toBeNull();
    expect(us.ext.tick_size).toBe(0.01);
  });
});

describe('sim adapter: ex-dates', () => {
  it('quotes the ex-rights reference price as prev_close on an ex-date', async () => {
    const inst = findSimInstrument('600519.SH')!;
    const event = buildDailyHistory(inst, '2025-12-31').events.find((e) => e.date >= '2024-01-01' && e.cash > 0)!;
    expect(event).toBeDefined();
    const adapter = simAt(localTimeMs('CN', event.date, '10:00'));
    const quote = (await adapter.getQuotes([ref('600519.SH')])).get('600519.SH')!;
    const daily = (await adapter.getCandles({ symbol: ref('600519.SH'), period: '1d', count: 2 }))!;
    expect(daily.timestamp[1]).toBe(localMidnight('CN', event.date));
    expect(daily.close[0]).toBe(event.pPrev);
    expect(quote.prev_close).toBe(event.base);
    expect(quote.prev_close).not.toBe(event.pPrev);
    expect(daily.prev_close![1]).toBe(event.base);
    const factors = (await adapter.getExFactors([ref('600519.SH')])).get('600519.SH')!;
    // The record carries the event's parts (docs/contract.md#ex-factors-and-adjustment): ref = (P_prev − cash) / (1 + bonus).
    expect(factors.at(-1)).toEqual({
      timestamp: localMidnight('CN', event.date), ex_factor: event.factor,
      cash_dividend: event.cash, bonus_ratio: event.shareRatio, rights_ratio: 0, rights_price: 0, parts_known: true,
    });
    expect(event.pPrev / ((event.pPrev - event.cash) / (1 + event.shareRatio))).toBeCloseTo(event.factor, 12);
    const instrument = (await adapter.getInstruments([ref('600519.SH')])).get('600519.SH')!;
    expect(instrument.ext.limit_up).toBe(limitPrices(inst, event.base)!.up);
  });
});

describe('sim adapter: outside sessions', () => {
  it('serves Friday\'s snapshot on a Saturday', async () => {
    const adapter = simAt(SATURDAY);
    const quote = (await adapter.getQuotes([ref('600519.SH')])).get('600519.SH')!;
    const intraday = (await adapter.getIntraday(ref('600519.SH')))!;
    const daily = (await adapter.getCandles({ symbol: ref('600519.SH'), period: '1d', count: 1 }))!;
    expect(daily.timestamp).toEqual([localMidnight('CN', '2025-06-20')]);
    expect(intraday.timestamp.length).toBe(240);
    expect(intraday.timestamp[239]).toBe(localTimeMs('CN', '2025-06-20', '15:00'));
    expect(quote.last_price).toBe(daily.close[0]);
    expect(quote.timestamp).toBe(localTimeMs('CN', '2025-06-20', '15:00'));
    expect(quote.session).toBe('closed');
  });

  it('serves the last trading day before a holiday', async () => {
    const daily = (await simAt(NATIONAL_DAY).getCandles({ symbol: ref('601318.SH'), period: '1d', count: 1 }))!;
    expect(daily.timestamp).toEqual([localMidnight('CN', '2025-09-30')]);
  });

  it('shows the whole day after the close, equal to the stored daily bar', async () => {
    const afterClose = simAt(AFTER_CLOSE);
    const intraday = (await afterClose.getIntraday(ref('000001.SZ')))!;
    const daily = (await afterClose.getCandles({ symbol: ref('000001.SZ'), period: '1d', count: 1 }))!;
    const nextDay = (await simAt(Date.parse('2025-06-20T03:00:00Z')).getCandles({
      symbol: ref('000001.SZ'), period: '1d', start: localMidnight('CN', '2025-06-18'), end: localMidnight('CN', '2025-06-18'),
    }))!;
    expect(intraday.timestamp.length).toBe(240);
    expect(barAt(daily, 0)).toEqual(aggregate(intraday));
    expect(daily).toEqual(nextDay);
    const quote = (await afterClose.getQuotes([ref('000001.SZ')])).get('000001.SZ')!;
    expect(quote.timestamp).toBe(localTimeMs('CN', '2025-06-18', '15:00'));
    expect(quote.session).toBe('closed');
  });

  it('has no bar for today before the open', async () => {
    const adapter = simAt(BEFORE_OPEN);
    const daily = (await adapter.getCandles({ symbol: ref('600519.SH'), period: '1d', count: 1 }))!;
    const minutes = (await adapter.getCandles({ symbol: ref('600519.SH'), period: '1m', count: 1 }))!;
    const intraday = (await adapter.getIntraday(ref('600519.SH')))!;
    expect(daily.timestamp).toEqual([localMidnight('CN', '2025-06-17')]);
    expect(minutes.timestamp).toEqual([localTimeMs('CN', '2025-06-17', '15:00')]);
    expect(intraday.timestamp[0]).toBe(localTimeMs('CN', '2025-06-17', '09:31'));
    const quote = (await adapter.getQuotes([ref('600519.SH')])).get('600519.SH')!;
    expect(quote.session).toBe('closed');
    expect(quote.last_price).toBe(daily.close[0]);
    const preMarket = (await simAt(Date.parse('2025-06-18T01:20:00Z')).getQuotes([ref('600519.SH')])).get('600519.SH')!;
    expect(preMarket.session).toBe('pre_market');
  });
});

describe('sim adapter: unknown symbols and pools', () => {
  const adapter = simAt(WED_MORNING);

  it('answers undefined or leaves unknown symbols out', async () => {
    const unknown = ref('999999.SH');
    expect(await adapter.getCandles({ symbol: unknown, period: '1d' })).toBeUndefined();
    expect(await adapter.getIntraday(unknown)).toBeUndefined();
    const quotes = await adapter.getQuotes([unknown, ref('600519.SH'), ref('ZZZZ.US')]);
    expect([...quotes.keys()]).toEqual(['600519.SH']);
    expect([...(await adapter.getDepth([unknown])).keys()]).toEqual([]);
    expect([...(await adapter.getExFactors([unknown])).keys()]).toEqual([]);
    expect([...(await adapter.getInstruments([unknown])).keys()]).toEqual([]);
  });

  it('lists pools with their members and counts', async () => {
    const pool = (await adapter.listPool('CN_ETF'))!;
    expect(pool).toMatchObject({ id: 'CN_ETF', region: 'CN', category: 'etf' });
    expect(pool.symbol_count).toBe(pool.symbols.length);
    expect(pool.symbols).toContain('510300.SH');
    expect(pool.symbols.every((s) => s.endsWith('.SH') || s.endsWith('.SZ'))).toBe(true);
  });

  it('adds a synthetic US universe when asked', async () => {
    const big = simAt(WED_MORNING, { syntheticUniverse: 3 });
    const us = (await big.listPool('US_Stock'))!;
    expect(us.symbols.slice(-3)).toEqual(['SIM0001.US', 'SIM0002.US', 'SIM0003.US']);
    const quote = (await big.getQuotes([ref('SIM0002.US'), ref('SIM0004.US')]));
    expect([...quote.keys()]).toEqual(['SIM0002.US']);
    const plain = (await adapter.listPool('US_Stock'))!;
    expect(plain.symbols).not.toContain('SIM0001.US');
    expect(us.symbol_count).toBe(plain.symbol_count + 3);
  });
});
