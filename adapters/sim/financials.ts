// Financial statements of the simulated market (issue 25): deterministic for every simulated stock
// (ETFs have none), and consistent by construction, as test/adapters/sim-financials.test.ts states:
//
//   total_assets = total_liabilities + total_equity
//   retained_earnings(end) − retained_earnings(start) = attributable net income − cash dividends
//                                                      paid (ex-dates) in (start, end]
//   cash(end) = cash at the fiscal year's start + year-to-date operating, investing and financing flows
//   basic_eps = attributable net income ÷ weighted average total shares over the span (per day)
//   shares = the instrument's total_shares / float_shares on that date (moving on the sim's
//            share-changing corporate-action dates, as the instruments route reports them)
//
// The model runs one calendar quarter at a time from FIRST_YEAR (or the year after listing),
// carrying the balance sheet forward; each year's draws come from their own seed, so a year's
// figures never depend on which later years exist, and the same (instrument, period) gives the
// same figures at any clock. Reports follow each market's practice: A-shares quarterly and
// year-to-date (3, 6, 9, 12 months), HK half-yearly (6, 12), US single quarters and fiscal years
// (3, 3, 3, 12: no separate fourth quarter, as a 10-K has none). Fiscal years are calendar years in
// every market (real US issuers such as AAPL close in September; the sim does not model that).
// Announcement dates fall where the rules put them: A-share Q1 in April, H1 by the end of August, Q3
// in October, annual reports mid-March to the end of April; HK interims in August, annual reports
// in March; US quarters 20–40 days after the quarter, annual reports 25–59 days after the year.
// A report is served once its announcement date has come. Amounts are whole currency units
// (CNY for A-shares, HKD for HK, USD for US); no restatements are simulated.

import { deriveMetrics } from '../../src/financials/derive.ts';
import { LRUCache } from 'lru-cache';
import { statementInputBytes } from './memo.ts';
import type {
  BalanceSheetRecord, CashFlowRecord, IncomeRecord, MetricsRecord, PeriodMonths, SharesRecord, Statement, StatementRecord, StatementSet,
} from '../../src/financials/types.ts';
import { addDays, isTradingDay, prevTradingDay } from '../../src/markets/calendar.ts';
import type { Region } from '../../src/domain.ts';
import type { PlannedAction } from './actions.ts';
import { ANCHOR_DATE, HISTORY_START, shareMultiplier } from './daily.ts';
import type { SimInstrument } from './instruments.ts';
import { onOrAfterTradingDay } from './actions.ts';
import { rngFor } from './random.ts';

/** The first fiscal year the sim reports (or the first full year after listing, if later). */
export const FIRST_YEAR = 2015;

export const CURRENCY: Readonly<Record<Region, string>> = Object.freeze({ CN: 'CNY', HK: 'HKD', US: 'USD' });

/** A realised cash dividend (or share event): the ex-date, cash per share and new shares per share. */
export interface SimDividend {
  date: string;
  cash: number;
  shareRatio: number;
}

export interface SimFinancialsInput {
  inst: SimInstrument;
  /** Planned actions through max(today, ANCHOR_DATE) (DailyHistory.planned). */
  planned: readonly PlannedAction[];
  /** Realised ex-events (DailyHistory.events): what the sim paid. */
  events: readonly SimDividend[];
  /** Today's date in the instrument's market; reports announced later are not yet published. */
  today: string;
}

/** Reports per market: [months of the span, month the span ends]. Spans start on the fiscal year's first day except US quarters. */
const REPORTS: Readonly<Record<Region, readonly { endMonth: number; months: PeriodMonths; ytd: boolean }[]>> = {
  CN: [{ endMonth: 3, months: 3, ytd: true }, { endMonth: 6, months: 6, ytd: true }, { endMonth: 9, months: 9, ytd: true }, { endMonth: 12, months: 12, ytd: true }],
  HK: [{ endMonth: 6, months: 6, ytd: true }, { endMonth: 12, months: 12, ytd: true }],
  US: [{ endMonth: 3, months: 3, ytd: false }, { endMonth: 6, months: 3, ytd: false }, { endMonth: 9, months: 3, ytd: false }, { endMonth: 12, months: 12, ytd: true }],
};

/** Days after period end in which the report is announced, per market and period-end month. */
const ANNOUNCE_DAYS: Readonly<Record<Region, Readonly<Record<number, readonly [number, number]>>>> = {
  // Apr 10–30; Aug 10–31; Oct 15–31; Mar 15 – Apr 30 of the next year (day 74–120 of a common year).
  CN: { 3: [10, 30], 6: [41, 62], 9: [15, 31], 12: [74, 119] },
  // Aug 5–31; Mar 10–31.
  HK: { 6: [36, 62], 12: [69, 89] },
  US: { 3: [20, 40], 6: [20, 40], 9: [20, 40], 12: [25, 59] },
};

const QUARTER_END = ['03-31', '06-30', '09-30', '12-31'] as const;

function quarterEnd(year: number, quarter: number): string {
  return `${year}-${QUARTER_END[quarter - 1]}`;
}

function dayIndex(date: string): number {
  return Date.parse(`${date}T00:00:00Z`) / 86_400_000;
}

/** Per-instrument parameters, drawn once. */
interface Profile {
  revenueAnchor: number;
  growth: number;
  seasonality: readonly number[];
  opMargin: number;
  expenses: readonly [selling: number, admin: number, rd: number, financial: number];
  taxRate: number;
  minority: number;
  cashConversion: number;
  capexRatio: number;
  arRatio: number;
  inventoryRatio: number;
  payablesRatio: number;
  debtRatio: number;
  dilution: number;
  paidIn: number;
  openingRetained: number;
  openingFixed: number;
  intangibles: number;
  goodwill: number;
}

function profileOf(inst: SimInstrument): Profile {
  const rng = rngFor(inst.symbol, 0, 'financials-profile');
  const marketCap = inst.price * inst.totalShares;
  const revenueAnchor = marketCap * rng.range(0.15, 0.8);
  const opMargin = rng.range(0.04, 0.35);
  const expenseShare = rng.range(0.05, 0.3);
  const split = [rng.range(0.2, 1), rng.range(0.3, 1), rng.range(0, 1), rng.range(0, 0.3)];
  const sum = split.reduce((a, b) => a + b, 0);
  const raw = [rng.range(0.22, 0.26), rng.range(0.23, 0.27), rng.range(0.23, 0.27), rng.range(0.24, 0.3)];
  const total = raw.reduce((a, b) => a + b, 0);
  const taxRate = inst.region === 'CN' ? rng.range(0.15, 0.25) : inst.region === 'HK' ? 0.165 : 0.21;
  return {
    revenueAnchor,
    growth: rng.range(-0.02, 0.15),
    seasonality: raw.map((w) => w / total),
    opMargin,
    expenses: split.map((w) => (w / sum) * expenseShare) as unknown as Profile['expenses'],
    taxRate,
    minority: rng.chance(0.4) ? 0 : rng.range(0.01, 0.15),
    cashConversion: rng.range(0.95, 1.3),
    capexRatio: rng.range(0.02, 0.12),
    arRatio: rng.range(0.2, 1.0),
    inventoryRatio: rng.range(0, 1.5),
    payablesRatio: rng.range(0.3, 1.0),
    debtRatio: rng.range(0, 0.8),
    dilution: rng.chance(0.5) ? 0 : rng.range(0.001, 0.01),
    paidIn: marketCap * rng.range(0.05, 0.3),
    openingRetained: marketCap * rng.range(0.05, 0.4),
    openingFixed: revenueAnchor * rng.range(0.2, 1.5),
    intangibles: revenueAnchor * rng.range(0, 0.1),
    goodwill: rng.chance(0.5) ? 0 : revenueAnchor * rng.range(0, 0.1),
  };
}

/** One quarter's flows (whole currency units). */
interface QuarterFlows {
  revenue: number;
  operatingCost: number;
  selling: number;
  admin: number;
  rd: number;
  financial: number;
  operatingProfit: number;
  nonOperatingIncome: number;
  nonOperatingExpense: number;
  totalProfit: number;
  incomeTax: number;
  netIncome: number;
  netIncomeAttributable: number;
  operating: number;
  investing: number;
  financing: number;
  capex: number;
  dividends: number;
}

/** The balance sheet at a quarter end (whole currency units). */
interface Balance {
  date: string;
  cash: number;
  receivable: number;
  inventory: number;
  otherCurrent: number;
  fixed: number;
  intangibles: number;
  goodwill: number;
  otherNonCurrent: number;
  payable: number;
  shortDebt: number;
  longDebt: number;
  otherCurrentLiabilities: number;
  otherNonCurrentLiabilities: number;
  paidIn: number;
  retained: number;
  minority: number;
}

const round = Math.round;

/** Total shares on `date`, as the instruments route reports them. */
export function simSharesOn(inst: SimInstrument, planned: readonly PlannedAction[], date: string): { total: number; float: number } {
  const mult = shareMultiplier({ planned: planned as PlannedAction[] }, date);
  return { total: round(inst.totalShares * mult), float: round(inst.floatShares * mult) };
}

/** Mean of the daily total share count over the days (from, to]. */
export function weightedAverageShares(inst: SimInstrument, planned: readonly PlannedAction[], from: string, to: string): number {
  const changes = planned.filter((a) => a.shareRatio !== 0 && a.date > from && a.date <= to).map((a) => a.date);
  // Days before a change carry the day-before count; from the change on, the new count.
  let sum = 0;
  let start = dayIndex(from) + 1;
  const end = dayIndex(to);
  for (const change of changes) {
    const at = dayIndex(change);
    sum += simSharesOn(inst, planned, addDays(change, -1)).total * (at - start);
    start = at;
  }
  sum += simSharesOn(inst, planned, to).total * (end - start + 1);
  return sum / (end - dayIndex(from));
}

function announceDate(inst: SimInstrument, periodEnd: string, endMonth: number): string {
  const [from, to] = ANNOUNCE_DAYS[inst.region][endMonth];
  const rng = rngFor(inst.symbol, dayIndex(periodEnd), 'financials-announce');
  const date = addDays(periodEnd, rng.int(from, to));
  // Published on a trading day, never after the deadline the window ends on.
  return isTradingDay(inst.region, date) ? date : prevTradingDay(inst.region, date);
}

/** The first fiscal year reported: FIRST_YEAR, or the first full year after listing. */
export function firstReportedYear(inst: SimInstrument): number {
  const listed = Number(inst.listingDate.slice(0, 4));
  return Math.max(FIRST_YEAR, listed + 1);
}

/** Every quarter's flows and closing balance from the first reported year through `lastYear`. */
function simulateQuarters(inst: SimInstrument, input: SimFinancialsInput, lastYear: number): { opening: Balance; quarters: { flows: QuarterFlows; balance: Balance }[] } {
  const p = profileOf(inst);
  const firstYear = firstReportedYear(inst);
  const anchorYear = Number(ANCHOR_DATE.slice(0, 4));
  const yearRevenue = (year: number): number => p.revenueAnchor * (1 + p.growth) ** (year - anchorYear);
  const openRevenue = yearRevenue(firstYear);
  const openDebt = round(openRevenue * p.debtRatio);
  const opening: Balance = {
    date: `${firstYear - 1}-12-31`,
    cash: round(openRevenue * 0.25),
    receivable: round((openRevenue / 4) * p.arRatio),
    inventory: round((openRevenue / 4) * (1 - p.opMargin) * p.inventoryRatio),
    otherCurrent: round(openRevenue * 0.03),
    fixed: round(p.openingFixed * (yearRevenue(firstYear) / p.revenueAnchor)),
    intangibles: round(p.intangibles),
    goodwill: round(p.goodwill),
    otherNonCurrent: round(openRevenue * 0.02),
    payable: round((openRevenue / 4) * (1 - p.opMargin) * p.payablesRatio),
    shortDebt: round(openDebt * 0.4),
    longDebt: openDebt - round(openDebt * 0.4),
    otherCurrentLiabilities: 0,
    otherNonCurrentLiabilities: 0,
    paidIn: round(p.paidIn),
    retained: round(p.openingRetained),
    minority: round(p.paidIn * p.minority * 2),
  };
  balanceOut(opening);
  const dividendsIn = (from: string, to: string): number => {
    let total = 0;
    for (const e of input.events) {
      if (e.cash > 0 && e.date > from && e.date <= to) {
        // Paid on the shares outstanding before the ex-date.
        total += round(e.cash * simSharesOn(inst, input.planned, addDays(e.date, -1)).total);
      }
    }
    return total;
  };

  const quarters: { flows: QuarterFlows; balance: Balance }[] = [];
  let prev = opening;
  for (let year = firstYear; year <= lastYear; year++) {
    const rng = rngFor(inst.symbol, year, 'financials-year');
    const annual = yearRevenue(year) * Math.exp(0.08 * rng.normal());
    for (let q = 1; q <= 4; q++) {
      const end = quarterEnd(year, q);
      const revenue = round(annual * p.seasonality[q - 1] * Math.exp(0.03 * rng.normal()));
      const margin = p.opMargin * Math.exp(0.15 * rng.normal());
      const [sRate, aRate, rRate, fRate] = p.expenses;
      const selling = round(revenue * sRate);
      const admin = round(revenue * aRate);
      const rd = round(revenue * rRate);
      const financial = round(revenue * fRate * rng.range(-0.5, 1.5));
      const operatingCost = round(revenue * (1 - margin - sRate - aRate - rRate - fRate));
      const operatingProfit = revenue - operatingCost - selling - admin - rd - financial;
      const nonOperatingIncome = round(revenue * rng.range(0, 0.005));
      const nonOperatingExpense = round(revenue * rng.range(0, 0.004));
      const totalProfit = operatingProfit + nonOperatingIncome - nonOperatingExpense;
      const incomeTax = totalProfit > 0 ? round(totalProfit * p.taxRate) : 0;
      const netIncome = totalProfit - incomeTax;
      const netIncomeAttributable = netIncome - round(netIncome * p.minority);
      const dividends = dividendsIn(prev.date, end);
      const operating = round(netIncome * p.cashConversion + revenue * 0.02 * rng.normal());
      const capex = round(revenue * p.capexRatio * rng.range(0.6, 1.4));
      const investing = -capex + round(revenue * 0.01 * rng.normal());
      // Borrowing: a quarter of the way to the target debt, more if cash would fall below a floor.
      const debt = prev.shortDebt + prev.longDebt;
      const target = annual * p.debtRatio;
      let borrow = round((target - debt) * 0.25);
      const floor = round(revenue * 0.3);
      const before = prev.cash + operating + investing - dividends + borrow;
      if (before < floor) borrow += floor - before;
      if (debt + borrow < 0) borrow = -debt;
      const financing = borrow - dividends;
      const newDebt = debt + borrow;
      const shortDebt = round(newDebt * 0.4);
      const depreciation = round(prev.fixed * 0.02);
      const balance: Balance = {
        date: end,
        cash: prev.cash + operating + investing + financing,
        receivable: round(revenue * p.arRatio),
        inventory: round(operatingCost * p.inventoryRatio),
        otherCurrent: round(revenue * 0.12),
        fixed: prev.fixed + capex - depreciation,
        intangibles: prev.intangibles,
        goodwill: prev.goodwill,
        otherNonCurrent: round(revenue * 0.08),
        payable: round(operatingCost * p.payablesRatio),
        shortDebt,
        longDebt: newDebt - shortDebt,
        otherCurrentLiabilities: 0,
        otherNonCurrentLiabilities: 0,
        paidIn: prev.paidIn,
        retained: prev.retained + netIncomeAttributable - dividends,
        minority: prev.minority + (netIncome - netIncomeAttributable),
      };
      balanceOut(balance);
      quarters.push({
        flows: {
          revenue, operatingCost, selling, admin, rd, financial, operatingProfit, nonOperatingIncome, nonOperatingExpense,
          totalProfit, incomeTax, netIncome, netIncomeAttributable, operating, investing, financing, capex, dividends,
        },
        balance,
      });
      prev = balance;
    }
  }
  return { opening, quarters };
}

/**
 * Closes the balance sheet: the other assets and other liabilities take up the difference so
 * that assets = liabilities + equity, both staying non-negative.
 */
function balanceOut(b: Balance): void {
  const core = b.cash + b.receivable + b.inventory + b.otherCurrent + b.fixed + b.intangibles + b.goodwill + b.otherNonCurrent;
  const claims = b.payable + b.shortDebt + b.longDebt + b.paidIn + b.retained + b.minority;
  const gap = core - claims;
  if (gap >= 0) {
    b.otherCurrentLiabilities = round(gap * 0.7);
    b.otherNonCurrentLiabilities = gap - b.otherCurrentLiabilities;
  } else {
    // Claims exceed the modelled assets: the rest is other non-current assets (long-term investments).
    b.otherNonCurrent += -gap;
  }
}

function sumFlows(list: readonly QuarterFlows[]): QuarterFlows {
  const out = { ...list[0] };
  for (const f of list.slice(1)) for (const k of Object.keys(out) as (keyof QuarterFlows)[]) out[k] += f[k];
  return out;
}

function balanceRecord(b: Balance, head: { period_end: string; announce_date: string | null; currency: string; period_months: PeriodMonths }): BalanceSheetRecord {
  const currentAssets = b.cash + b.receivable + b.inventory + b.otherCurrent;
  const nonCurrentAssets = b.fixed + b.intangibles + b.goodwill + b.otherNonCurrent;
  const currentLiabilities = b.payable + b.shortDebt + b.otherCurrentLiabilities;
  const nonCurrentLiabilities = b.longDebt + b.otherNonCurrentLiabilities;
  const equityAttributable = b.paidIn + b.retained;
  return {
    ...head,
    total_assets: currentAssets + nonCurrentAssets,
    total_current_assets: currentAssets,
    total_non_current_assets: nonCurrentAssets,
    cash_and_equivalents: b.cash,
    accounts_receivable: b.receivable,
    inventory: b.inventory,
    fixed_assets: b.fixed,
    intangible_assets: b.intangibles,
    goodwill: b.goodwill,
    total_liabilities: currentLiabilities + nonCurrentLiabilities,
    total_current_liabilities: currentLiabilities,
    total_non_current_liabilities: nonCurrentLiabilities,
    accounts_payable: b.payable,
    short_term_borrowing: b.shortDebt,
    long_term_borrowing: b.longDebt,
    total_equity: equityAttributable + b.minority,
    equity_attributable: equityAttributable,
    minority_interest: b.minority,
    retained_earnings: b.retained,
  };
}

const round4 = (v: number): number => Math.round(v * 10_000) / 10_000;

/**
 * The five statements of a simulated stock as published by `today`, each ascending; undefined for
 * an instrument that publishes none (ETFs).
 */
export function simStatements(input: SimFinancialsInput): StatementSet | undefined {
  const { inst, today } = input;
  if (inst.type !== 'stock') return undefined;
  const currency = CURRENCY[inst.region];
  const lastYear = Number(today.slice(0, 4));
  const out: StatementSet = { income: [], balance_sheet: [], cash_flow: [], metrics: [], shares: [] };
  const firstYear = firstReportedYear(inst);
  if (lastYear >= firstYear) {
    const { opening, quarters } = simulateQuarters(inst, input, lastYear);
    const incomeBySpan = new Map<string, IncomeRecord>();
    for (let year = firstYear; year <= lastYear; year++) {
      const yearQuarters = quarters.slice((year - firstYear) * 4, (year - firstYear) * 4 + 4);
      for (const report of REPORTS[inst.region]) {
        const lastQ = report.endMonth / 3;
        const firstQ = report.ytd ? 1 : lastQ;
        const periodEnd = quarterEnd(year, lastQ);
        const announce = announceDate(inst, periodEnd, report.endMonth);
        if (announce > today) continue;
        const spanStart = firstQ === 1 ? `${year - 1}-12-31` : quarterEnd(year, firstQ - 1);
        const openingBalance = firstQ === 1
          ? (year === firstYear ? opening : quarters[(year - firstYear) * 4 - 1].balance)
          : yearQuarters[firstQ - 2].balance;
        const f = sumFlows(yearQuarters.slice(firstQ - 1, lastQ).map((q) => q.flows));
        const closing = yearQuarters[lastQ - 1].balance;
        const head = { period_end: periodEnd, announce_date: announce, currency, period_months: report.months };
        const wavg = weightedAverageShares(inst, input.planned, spanStart, periodEnd);
        const income: IncomeRecord = {
          ...head,
          revenue: f.revenue,
          operating_cost: f.operatingCost,
          operating_profit: f.operatingProfit,
          total_profit: f.totalProfit,
          income_tax: f.incomeTax,
          net_income: f.netIncome,
          net_income_attributable: f.netIncomeAttributable,
          basic_eps: round4(f.netIncomeAttributable / wavg),
          diluted_eps: round4(f.netIncomeAttributable / (wavg * (1 + profileDilution(inst)))),
          rd_expense: f.rd,
          selling_expense: f.selling,
          admin_expense: f.admin,
          financial_expense: f.financial,
          non_operating_income: f.nonOperatingIncome,
          non_operating_expense: f.nonOperatingExpense,
        };
        const cashFlow: CashFlowRecord = {
          ...head,
          net_operating_cash_flow: f.operating,
          net_investing_cash_flow: f.investing,
          net_financing_cash_flow: f.financing,
          net_cash_change: f.operating + f.investing + f.financing,
          capex: f.capex,
        };
        const balance = balanceRecord(closing, head);
        const openingRecord = balanceRecord(openingBalance, head);
        const priorYear = incomeBySpan.get(`${year - 1}|${report.endMonth}|${report.months}`);
        incomeBySpan.set(`${year}|${report.endMonth}|${report.months}`, income);
        const metrics: MetricsRecord | undefined = deriveMetrics({
          income, balance, opening: openingRecord, cashFlow, priorYear, shares: simSharesOn(inst, input.planned, periodEnd).total,
        });
        out.income.push(income);
        out.balance_sheet.push(balance);
        out.cash_flow.push(cashFlow);
        if (metrics !== undefined) out.metrics.push(metrics);
      }
    }
  }
  out.shares = simShareRecords(input);
  return out;
}

function profileDilution(inst: SimInstrument): number {
  return profileOf(inst).dilution;
}

/**
 * The share-capital history: the count on the first day of the history, then one record per
 * share-changing action (bonus issue, split) dated its ex-date, announced a seeded 5–15 days before.
 */
export function simShareRecords(input: SimFinancialsInput): SharesRecord[] {
  const { inst, planned, today } = input;
  const firstDay = onOrAfterTradingDay(inst.region, inst.listingDate > HISTORY_START ? inst.listingDate : HISTORY_START);
  if (firstDay > today) return [];
  const record = (date: string, announce: string): SharesRecord => {
    const { total, float } = simSharesOn(inst, planned, date);
    return { period_end: date, announce_date: announce, period_months: null, total_shares: total, float_shares: float };
  };
  const out: SharesRecord[] = [record(firstDay, inst.listingDate > HISTORY_START ? addDays(firstDay, -7) : firstDay)];
  for (const action of planned) {
    if (action.shareRatio === 0 || action.date <= firstDay || action.date > today) continue;
    const rng = rngFor(inst.symbol, dayIndex(action.date), 'financials-shares');
    out.push(record(action.date, addDays(action.date, -rng.int(5, 15))));
  }
  return out;
}

/**
 * The sim adapter's statements: one symbol's series of one statement at `today`, from its
 * history's planned actions and realised events; undefined when it publishes none (ETFs, a stock
 * with no report announced yet). What is kept is those inputs, byte-bounded (`maxBytes`, the
 * statements' share of adapters.sim.memoMaxBytes: memo.ts), not the built statements: a
 * symbol's five statements weigh ~66 KB and were kept by count (2,048 sets, ~130 MiB: the mixed
 * memory soak, BENCHMARKS.md), while its inputs weigh a few KB and rebuilding the statements
 * from them costs ~1 ms; the history walk that produces them (~12 ms a symbol) is what the memo
 * spares when the loader asks for a symbol's statements one after another.
 */
export function createSimFinancials(maxBytes: number): {
  series<S extends Statement>(inst: SimInstrument, history: () => Pick<SimFinancialsInput, 'planned' | 'events'>, today: string, statement: S): StatementRecord<S>[] | undefined;
  stats(): { entries: number; bytes: number; maxBytes: number };
} {
  type Inputs = Pick<SimFinancialsInput, 'planned' | 'events'>;
  const inputs = new LRUCache<string, Inputs>({ maxSize: Math.max(1, maxBytes), sizeCalculation: (v) => statementInputBytes(v) });
  return {
    series(inst, history, today, statement) {
      if (inst.type !== 'stock') return undefined;
      const key = `${inst.symbol}|${today}`;
      let held = inputs.get(key);
      if (held === undefined) {
        const { planned, events } = history();
        // Copies: the history's own arrays grow as its walk advances.
        held = { planned: planned.slice(), events: events.slice() };
        inputs.set(key, held);
      }
      const list = simStatements({ inst, planned: held.planned, events: held.events, today })?.[statement];
      return list === undefined || list.length === 0 ? undefined : list;
    },
    stats: () => ({ entries: inputs.size, bytes: inputs.calculatedSize, maxBytes }),
  };
}
