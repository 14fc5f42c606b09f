// The metrics record derived from the statements, for vendors that publish no indicator table
// (Yahoo) and for the sim. One formula per field; a field is present only when every input is
// present, finite and its denominator is not zero (otherwise it is left out, never guessed).
// Ratios are in percent (see types.ts), rounded to 4 decimals; per-share figures to 4 decimals.
//
//   eps_basic            income.basic_eps
//   eps_diluted          income.diluted_eps
//   bps                  balance.equity_attributable ÷ shares at period end
//   ocfps                cash_flow.net_operating_cash_flow ÷ shares at period end
//   roe                  income.net_income_attributable ÷ mean(opening, closing equity_attributable) × 100
//   roe_diluted          income.net_income_attributable ÷ closing equity_attributable × 100
//   roa                  income.net_income ÷ mean(opening, closing total_assets) × 100
//   gross_margin         (income.revenue − income.operating_cost) ÷ income.revenue × 100
//   net_margin           income.net_income ÷ income.revenue × 100
//   debt_to_asset_ratio  balance.total_liabilities ÷ balance.total_assets × 100
//   revenue_yoy          (revenue − revenue a year earlier, same span) ÷ |revenue a year earlier| × 100
//   net_income_yoy       the same on net_income_attributable
//   inventory_turnover   income.operating_cost ÷ mean(opening, closing inventory)   (times over the span)
//   operating_cash_to_revenue  cash_flow.net_operating_cash_flow ÷ income.revenue × 100
//
// "Opening" is the balance sheet at the start of the record's span (the previous fiscal year end
// for a year-to-date record, the previous quarter end for a single quarter).
//
// deriveMetricsSeries pairs a vendor's four statements by date for deriveMetrics (Yahoo): for an
// income record ending E over m months, the balance sheet at E (the same span's report first, any
// report of that date else: a balance sheet is a position at a date), the opening balance sheet at
// the month end m months before E, the cash flow of the same (E, m), the income of the same span
// ending at the month end 12 months before E, and the shares at E. A missing partner leaves the
// fields that need it out. Month-end arithmetic assumes month-end period dates, as Yahoo's are.
import type { BalanceSheetRecord, CashFlowRecord, IncomeRecord, MetricsRecord, SharesRecord, StatementSet } from './types.ts';

export interface MetricsInputs {
  income: IncomeRecord;
  /** Balance sheet at the record's period_end. */
  balance?: BalanceSheetRecord;
  /** Balance sheet at the start of the span. */
  opening?: BalanceSheetRecord;
  cashFlow?: CashFlowRecord;
  /** Income record of the same span a year earlier. */
  priorYear?: IncomeRecord;
  /** Total shares at period_end. */
  shares?: number | null;
}

type Value = number | null | undefined;

const ok = (v: Value): v is number => typeof v === 'number' && Number.isFinite(v);
const round4 = (v: number): number => Math.round(v * 10_000) / 10_000;

function ratio(numerator: Value, denominator: Value, scale = 1): number | undefined {
  if (!ok(numerator) || !ok(denominator) || denominator === 0) return undefined;
  return round4((numerator / denominator) * scale);
}

function mean(a: Value, b: Value): number | undefined {
  return ok(a) && ok(b) ? (a + b) / 2 : undefined;
}

function growth(now: Value, before: Value): number | undefined {
  if (!ok(now) || !ok(before) || before === 0) return undefined;
  return round4(((now - before) / Math.abs(before)) * 100);
}

/** The derived metrics record, or undefined when not one field can be derived. */
export function deriveMetrics(inputs: MetricsInputs): MetricsRecord | undefined {
  const { income, balance, opening, cashFlow, priorYear, shares } = inputs;
  const fields: Omit<MetricsRecord, 'period_end' | 'announce_date'> = {
    eps_basic: ok(income.basic_eps) ? income.basic_eps : undefined,
    eps_diluted: ok(income.diluted_eps) ? income.diluted_eps : undefined,
    bps: ratio(balance?.equity_attributable, shares),
    ocfps: ratio(cashFlow?.net_operating_cash_flow, shares),
    roe: ratio(income.net_income_attributable, mean(opening?.equity_attributable, balance?.equity_attributable), 100),
    roe_diluted: ratio(income.net_income_attributable, balance?.equity_attributable, 100),
    roa: ratio(income.net_income, mean(opening?.total_assets, balance?.total_assets), 100),
    gross_margin: ok(income.revenue) && ok(income.operating_cost) ? ratio(income.revenue - income.operating_cost, income.revenue, 100) : undefined,
    net_margin: ratio(income.net_income, income.revenue, 100),
    debt_to_asset_ratio: ratio(balance?.total_liabilities, balance?.total_assets, 100),
    revenue_yoy: growth(income.revenue, priorYear?.revenue),
    net_income_yoy: growth(income.net_income_attributable, priorYear?.net_income_attributable),
    inventory_turnover: ratio(income.operating_cost, mean(opening?.inventory, balance?.inventory)),
    operating_cash_to_revenue: ratio(cashFlow?.net_operating_cash_flow, income.revenue, 100),
  };
  const out: MetricsRecord = { period_end: income.period_end, announce_date: income.announce_date };
  if (income.currency !== undefined) out.currency = income.currency;
  if (income.period_months !== undefined) out.period_months = income.period_months;
  let any = false;
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    (out as unknown as Record<string, unknown>)[name] = value;
    any = true;
  }
  return any ? out : undefined;
}

/** The last day of the month `months` months before the month of `date` (YYYY-MM-DD). */
export function monthEndBefore(date: string, months: number): string {
  const year = Number(date.slice(0, 4));
  const month = Number(date.slice(5, 7)) - months; // 1-based, may run below 1
  // Day 0 of the next month is the last day of this one; Date.UTC normalises the year.
  const last = new Date(Date.UTC(year, month, 0));
  return last.toISOString().slice(0, 10);
}

/** The metrics series of one symbol, from its statements (each ascending); records with no derivable field are left out. */
export function deriveMetricsSeries(set: Pick<StatementSet, 'income' | 'balance_sheet' | 'cash_flow' | 'shares'>): MetricsRecord[] {
  const span = (r: { period_end: string; period_months?: number | null }) => `${r.period_end}|${r.period_months ?? ''}`;
  const balanceBySpan = new Map(set.balance_sheet.map((b) => [span(b), b]));
  const balanceByDate = new Map<string, BalanceSheetRecord>();
  for (const b of set.balance_sheet) if (!balanceByDate.has(b.period_end)) balanceByDate.set(b.period_end, b);
  const cashBySpan = new Map(set.cash_flow.map((c) => [span(c), c]));
  const incomeBySpan = new Map(set.income.map((i) => [span(i), i]));
  const sharesByDate = new Map<string, SharesRecord>(set.shares.map((s) => [s.period_end, s]));
  const out: MetricsRecord[] = [];
  for (const income of set.income) {
    const months = income.period_months ?? 12;
    const end = income.period_end;
    const metrics = deriveMetrics({
      income,
      balance: balanceBySpan.get(span(income)) ?? balanceByDate.get(end),
      opening: balanceByDate.get(monthEndBefore(end, months)),
      cashFlow: cashBySpan.get(span(income)),
      priorYear: incomeBySpan.get(`${monthEndBefore(end, 12)}|${income.period_months ?? ''}`),
      shares: sharesByDate.get(end)?.total_shares,
    });
    if (metrics !== undefined) out.push(metrics);
  }
  return out;
}
