// The sim's statements hang together (issue 25, item 3): the accounting identities, for every
// simulated stock and every period it has published, at several clocks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildDailyHistory } from '../../adapters/sim/daily.ts';
import { createSimFinancials, CURRENCY, simSharesOn, simStatements, type SimFinancialsInput } from '../../adapters/sim/financials.ts';
import { memoBudget } from '../../adapters/sim/memo.ts';
import { SIM_INSTRUMENTS, type SimInstrument } from '../../adapters/sim/instruments.ts';
import { buildInstrument } from '../../adapters/sim/snapshot.ts';
import { addDays } from '../../src/markets/calendar.ts';
import type { StatementSet } from '../../src/financials/types.ts';

const STOCKS = SIM_INSTRUMENTS.filter((i) => i.type === 'stock');

const inputs = new Map<string, SimFinancialsInput>();
function inputFor(inst: SimInstrument, today: string): SimFinancialsInput {
  const key = `${inst.symbol}|${today}`;
  let input = inputs.get(key);
  if (input === undefined) {
    const history = buildDailyHistory(inst, today);
    input = { inst, planned: history.planned, events: history.events, today };
    inputs.set(key, input);
  }
  return input;
}

/** Cash dividends the sim paid with an ex-date in (from, to], on the shares before each ex-date. */
function dividendsPaid(input: SimFinancialsInput, from: string, to: string): number {
  let total = 0;
  for (const e of input.events) {
    if (e.cash > 0 && e.date > from && e.date <= to) total += Math.round(e.cash * simSharesOn(input.inst, input.planned, addDays(e.date, -1)).total);
  }
  return total;
}

/** Checks every identity of one stock's statements; returns the number of periods checked. */
function checkIdentities(input: SimFinancialsInput, set: StatementSet): number {
  const { inst } = input;
  const n = set.income.length;
  expect(set.balance_sheet).toHaveLength(n);
  expect(set.cash_flow).toHaveLength(n);
  const byEnd = new Map(set.balance_sheet.map((b) => [`${b.period_end}|${b.period_months}`, b]));
  for (let i = 0; i < n; i++) {
    const income = set.income[i];
    const balance = set.balance_sheet[i];
    const flow = set.cash_flow[i];
    expect(balance.period_end).toBe(income.period_end);
    expect(income.currency).toBe(CURRENCY[inst.region]);
    expect(income.announce_date! > income.period_end).toBe(true);
    expect(income.announce_date! <= input.today).toBe(true);
    // Assets = liabilities + equity; the subtotals add up.
    expect(balance.total_assets).toBe(balance.total_liabilities! + balance.total_equity!);
    expect(balance.total_assets).toBe(balance.total_current_assets! + balance.total_non_current_assets!);
    expect(balance.total_liabilities).toBe(balance.total_current_liabilities! + balance.total_non_current_liabilities!);
    expect(balance.total_equity).toBe(balance.equity_attributable! + balance.minority_interest!);
    expect(balance.cash_and_equivalents!).toBeGreaterThanOrEqual(0);
    // The income statement adds up.
    expect(income.net_income).toBe(income.total_profit! - income.income_tax!);
    expect(income.total_profit).toBe(income.operating_profit! + income.non_operating_income! - income.non_operating_expense!);
    expect(flow.net_cash_change).toBe(flow.net_operating_cash_flow! + flow.net_investing_cash_flow! + flow.net_financing_cash_flow!);
    // Basic EPS = attributable net income ÷ weighted average shares (per day over the span).
    const months = income.period_months!;
    const year = Number(income.period_end.slice(0, 4));
    const spanStart = months === 12 || inst.region !== 'US' ? `${year - 1}-12-31` : previousQuarterEnd(income.period_end);
    let shareDays = 0;
    let days = 0;
    for (let d = addDays(spanStart, 1); d <= income.period_end; d = addDays(d, 1)) {
      shareDays += simSharesOn(inst, input.planned, d).total;
      days += 1;
    }
    expect(Math.abs(income.basic_eps! - income.net_income_attributable! / (shareDays / days))).toBeLessThanOrEqual(0.00005 + 1e-9);
  }
  // Cash at the end = cash at the fiscal year's start + year-to-date flows; retained earnings move
  // by attributable net income less dividends paid. Year-to-date flows are what A-share and HK
  // records carry; US quarters are single, so they are summed.
  const years = new Set(set.income.map((r) => Number(r.period_end.slice(0, 4))));
  for (const year of years) {
    const openingFy = byEnd.get(`${year - 1}-12-31|12`);
    if (openingFy === undefined) continue;
    let usCash = 0;
    let usNi = 0;
    for (let i = 0; i < n; i++) {
      const income = set.income[i];
      if (!income.period_end.startsWith(String(year))) continue;
      const flow = set.cash_flow[i];
      const balance = set.balance_sheet[i];
      let ytdCash = flow.net_operating_cash_flow! + flow.net_investing_cash_flow! + flow.net_financing_cash_flow!;
      let ytdNi = income.net_income_attributable!;
      if (inst.region === 'US' && income.period_months === 3) {
        usCash += ytdCash;
        usNi += ytdNi;
        ytdCash = usCash;
        ytdNi = usNi;
      }
      expect(balance.cash_and_equivalents).toBe(openingFy.cash_and_equivalents! + ytdCash);
      expect(balance.retained_earnings! - openingFy.retained_earnings!).toBe(ytdNi - dividendsPaid(input, `${year - 1}-12-31`, income.period_end));
    }
  }
  // Consecutive reports: the same rule over the span between them.
  for (let i = 1; i < n; i++) {
    const a = set.balance_sheet[i - 1];
    const b = set.balance_sheet[i];
    if (inst.region === 'US') continue;
    const sameYear = a.period_end.slice(0, 4) === b.period_end.slice(0, 4);
    const niBetween = sameYear ? set.income[i].net_income_attributable! - set.income[i - 1].net_income_attributable! : set.income[i].net_income_attributable!;
    if (!sameYear && a.period_months !== 12) continue;
    expect(b.retained_earnings! - a.retained_earnings!).toBe(niBetween - dividendsPaid(input, a.period_end, b.period_end));
  }
  return n;
}

function previousQuarterEnd(end: string): string {
  const y = end.slice(0, 4);
  return { '03-31': `${Number(y) - 1}-12-31`, '06-30': `${y}-03-31`, '09-30': `${y}-06-30`, '12-31': `${y}-09-30` }[end.slice(5)]!;
}

describe('sim statements', () => {
  it('hold the accounting identities for every stock and period (2026-05-15)', () => {
    let periods = 0;
    let dividendPeriods = 0;
    for (const inst of STOCKS) {
      const input = inputFor(inst, '2026-05-15');
      const set = simStatements(input)!;
      periods += checkIdentities(input, set);
      if (input.events.some((e) => e.cash > 0 && e.date >= '2015-01-01')) dividendPeriods += 1;
    }
    expect(periods).toBeGreaterThan(STOCKS.length * 20);
    // The dividend term is exercised, not zero everywhere.
    expect(dividendPeriods).toBeGreaterThan(STOCKS.length / 2);
  }, 120_000);

  it('hold them at any clock (property)', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: STOCKS.length - 1 }),
      fc.date({ min: new Date('2016-01-01T00:00:00Z'), max: new Date('2027-12-31T00:00:00Z'), noInvalidDate: true }),
      (index, when) => {
        const inst = STOCKS[index];
        const today = when.toISOString().slice(0, 10);
        const input = inputFor(inst, today);
        checkIdentities(input, simStatements(input)!);
      },
    ), { numRuns: 40, seed: 25 });
  }, 120_000);

  it('report as each market does: A-shares 3/6/9/12 YTD, HK 6/12, US 3/3/3/12, announced after period end', () => {
    const spans = (symbol: string) => {
      const inst = STOCKS.find((s) => s.symbol === symbol)!;
      const set = simStatements(inputFor(inst, '2026-05-15'))!;
      return set.income.filter((r) => r.period_end.startsWith('2024')).map((r) => [r.period_end, r.period_months]);
    };
    expect(spans('600519.SH')).toEqual([['2024-03-31', 3], ['2024-06-30', 6], ['2024-09-30', 9], ['2024-12-31', 12]]);
    expect(spans('00700.HK')).toEqual([['2024-06-30', 6], ['2024-12-31', 12]]);
    expect(spans('AAPL.US')).toEqual([['2024-03-31', 3], ['2024-06-30', 3], ['2024-09-30', 3], ['2024-12-31', 12]]);
    for (const inst of STOCKS) {
      const set = simStatements(inputFor(inst, '2026-05-15'))!;
      for (const r of set.income) {
        const m = r.period_end.slice(5);
        const a = r.announce_date!;
        if (inst.region === 'CN' && m === '12-31') expect(a.slice(5) <= '04-30' && a.slice(0, 4) === String(Number(r.period_end.slice(0, 4)) + 1)).toBe(true);
        if (inst.region === 'CN' && m === '06-30') expect(a <= `${r.period_end.slice(0, 4)}-08-31`).toBe(true);
        if (inst.region === 'CN' && m === '03-31') expect(a <= `${r.period_end.slice(0, 4)}-04-30`).toBe(true);
        if (inst.region === 'CN' && m === '09-30') expect(a <= `${r.period_end.slice(0, 4)}-10-31`).toBe(true);
        if (inst.region === 'HK' && m === '12-31') expect(a.slice(5) <= '03-31').toBe(true);
      }
    }
  });

  it('publish nothing for ETFs, and a report only once announced', () => {
    const etf = SIM_INSTRUMENTS.find((i) => i.type === 'etf')!;
    expect(simStatements(inputFor(etf, '2026-05-15'))).toBeUndefined();
    const inst = STOCKS.find((s) => s.symbol === '600519.SH')!;
    const set = simStatements(inputFor(inst, '2026-05-15'))!;
    const fy2025 = set.income.find((r) => r.period_end === '2025-12-31')!;
    const before = simStatements(inputFor(inst, addDays(fy2025.announce_date!, -1)))!;
    expect(before.income.some((r) => r.period_end === '2025-12-31')).toBe(false);
    const on = simStatements(inputFor(inst, fy2025.announce_date!))!;
    // The same figures whatever the clock: a report never changes once published.
    expect(on.income.find((r) => r.period_end === '2025-12-31')).toEqual(fy2025);
  });

  it('share counts equal the instrument route and move on corporate-action dates', () => {
    let moves = 0;
    for (const inst of STOCKS) {
      const input = inputFor(inst, '2026-05-15');
      const shares = simStatements(input)!.shares;
      expect(shares.length).toBeGreaterThan(0);
      for (let i = 0; i < shares.length; i++) {
        const r = shares[i];
        // What the instruments route says on that date.
        const history = buildDailyHistory(inst, r.period_end);
        const day = { history, date: r.period_end } as unknown as Parameters<typeof buildInstrument>[1];
        const ext = buildInstrument(inst, day).ext;
        expect([r.total_shares, r.float_shares]).toEqual([ext.total_shares, ext.float_shares]);
        if (i > 0) {
          expect(input.planned.some((a) => a.date === r.period_end && a.shareRatio !== 0)).toBe(true);
          expect(r.total_shares).not.toBe(shares[i - 1].total_shares);
          moves += 1;
        }
      }
    }
    expect(moves).toBeGreaterThan(10);
  }, 120_000);
});

describe('sim statements memo (byte-bounded inputs, not built statements)', () => {
  const stocks = SIM_INSTRUMENTS.filter((i) => i.type === 'stock');
  const today = '2026-05-15';
  const inputsOf = (inst: SimInstrument) => {
    const h = buildDailyHistory(inst, today);
    return { planned: h.planned, events: h.events };
  };

  it('keeps at most its byte share, and answers what a fresh build answers', () => {
    const maxBytes = memoBudget(undefined).statements;
    const memo = createSimFinancials(maxBytes);
    let builds = 0;
    for (const inst of stocks) {
      memo.series(inst, () => {
        builds += 1;
        return inputsOf(inst);
      }, today, 'income');
    }
    const stats = memo.stats();
    expect(builds).toBe(stocks.length);
    expect(stats.bytes).toBeLessThanOrEqual(maxBytes);
    expect(stats.entries).toBeGreaterThan(0);
    // The most recent symbols are held: their other statements need no new history walk.
    const last = stocks[stocks.length - 1];
    const balance = memo.series(last, () => {
      builds += 1;
      return inputsOf(last);
    }, today, 'balance_sheet');
    expect(builds).toBe(stocks.length);
    expect(balance).toEqual(simStatements({ inst: last, ...inputsOf(last), today })!.balance_sheet);
  });

  it('a memo of one byte still answers (each call walks the history again)', () => {
    const memo = createSimFinancials(1);
    const inst = stocks[0];
    let builds = 0;
    const history = () => {
      builds += 1;
      return inputsOf(inst);
    };
    const a = memo.series(inst, history, today, 'cash_flow');
    const b = memo.series(inst, history, today, 'cash_flow');
    expect(a).toEqual(b);
    expect(a).toEqual(simStatements({ inst, ...inputsOf(inst), today })!.cash_flow);
    expect(builds).toBe(2);
  });
});
