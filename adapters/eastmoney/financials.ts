// Eastmoney datacenter financials (issue 25; docs/vendors.md#eastmoney-datacenter-financials): pure request builders and
// parsers. The envelope is the datacenter's (errors.ts readDatacenter): `code: 9201` (返回数据为空)
// is "no data" for that code (an answer, never a failure, never a breaker failure); `9501`
// (报表配置不存在) and any other code are UPSTREAM_ERROR; a body that is not JSON (an HTML error
// page) is UPSTREAM_BAD_RESPONSE.
//
// HK: RPT_HKF10_FN_MAININDICATOR (one row per report: 年报 DATE_TYPE_CODE 001, 中报 002) carries
// the indicators and the headline figures of all four statements. Captured answer:
// mocks/fixtures/eastmoney/financials-hk-indicators-02367.json (see mocks/fixtures/README.md).
// Field mapping, checked against that capture (ratios are percent there, as we serve them):
//   metrics   eps_basic←BASIC_EPS eps_diluted←DILUTED_EPS bps←BPS ocfps←PER_NETCASH_OPERATE
//             roe←ROE_AVG roa←ROA gross_margin←GROSS_PROFIT_RATIO net_margin←NET_PROFIT_RATIO
//             debt_to_asset_ratio←DEBT_ASSET_RATIO revenue_yoy←OPERATE_INCOME_YOY
//             net_income_yoy←HOLDER_PROFIT_YOY operating_cash_to_revenue←OCF_SALES
//             (roe_diluted, inventory_turnover: not in the table; INVENTORY_TDAYS is ambiguous)
//   income    revenue←OPERATE_INCOME operating_profit←OPERATE_PROFIT total_profit←PRETAX_PROFIT
//             net_income_attributable←HOLDER_PROFIT basic_eps←BASIC_EPS diluted_eps←DILUTED_EPS
//   balance   total_assets←TOTAL_ASSETS total_liabilities←TOTAL_LIABILITIES
//             equity_attributable←TOTAL_PARENT_EQUITY
//   cash flow net_operating/investing/financing_cash_flow←NETCASH_OPERATE/INVEST/FINANCE
//   shares    total_shares←ISSUED_COMMON_SHARES float_shares←HK_COMMON_SHARES (shares listed in HK)
//   every record: period_end←REPORT_DATE, currency←CURRENCY, period_months from START_DATE to
//   REPORT_DATE (HK reports are year-to-date: interim 6, annual 12); announce_date null (the
//   table has no publication date, so as_of leaves these records out).
//
// A-shares (CN): the F10 statement tables, one request each, on the datacenter's `data/get` form
// (`type=<report>&sty=<style>&p&ps&st&sr`, the form WackyGem/Fleur documents with real 601088.SH
// answers; no capture of these tables through `data/v1/get` was found). Its envelope depends on
// the style: the income and cash-flow answers carry `code: 0, success, message` and
// `result.count`, the balance sheet's only `{version, result: {pages, data}}` (readStatementRows:
// a `code` gets the datacenter's verdicts above; none, the rows). Captures (mocks/fixtures/README.md):
// financials-cn-income|balance|cashflow|shares-601088.json. Statements are as reported: year-to-date
// (Q1 3 months, interim 6, Q3 9, annual 12, from REPORT_DATE's month), announce_date←NOTICE_DATE,
// currency←CURRENCY, 'CNY' where the row has none (Fleur's profile of the whole table counts 878 of
// 298,396 income rows with a null CURRENCY; A-share statements are in yuan). Mapping, each column
// checked against the 601088.SH rows (amounts in yuan, EPS in yuan per share):
//   income    RPT_F10_FINANCE_GINCOME (sty APP_F10_GINCOME): revenue←TOTAL_OPERATE_INCOME (营业总收入)
//             operating_cost←OPERATE_COST operating_profit←OPERATE_PROFIT total_profit←TOTAL_PROFIT
//             income_tax←INCOME_TAX net_income←NETPROFIT net_income_attributable←PARENT_NETPROFIT
//             basic_eps←BASIC_EPS diluted_eps←DILUTED_EPS rd_expense←RESEARCH_EXPENSE
//             selling_expense←SALE_EXPENSE admin_expense←MANAGE_EXPENSE financial_expense←FINANCE_EXPENSE
//             non_operating_income←NONBUSINESS_INCOME non_operating_expense←NONBUSINESS_EXPENSE
//   balance   RPT_F10_FINANCE_GBALANCE (sty F10_FINANCE_GBALANCE): total_assets←TOTAL_ASSETS
//             total_current_assets←TOTAL_CURRENT_ASSETS total_non_current_assets←TOTAL_NONCURRENT_ASSETS
//             cash_and_equivalents←MONETARYFUNDS (货币资金: cash and deposits, the statement's own line)
//             accounts_receivable←ACCOUNTS_RECE inventory←INVENTORY fixed_assets←FIXED_ASSET
//             intangible_assets←INTANGIBLE_ASSET goodwill←GOODWILL total_liabilities←TOTAL_LIABILITIES
//             total_current_liabilities←TOTAL_CURRENT_LIAB total_non_current_liabilities←TOTAL_NONCURRENT_LIAB
//             accounts_payable←ACCOUNTS_PAYABLE short_term_borrowing←SHORT_LOAN long_term_borrowing←LONG_LOAN
//             total_equity←TOTAL_EQUITY equity_attributable←TOTAL_PARENT_EQUITY
//             minority_interest←MINORITY_EQUITY retained_earnings←UNASSIGN_RPOFIT (Eastmoney's spelling)
//   cash flow RPT_F10_FINANCE_GCASHFLOW (sty APP_F10_GCASHFLOW): net_operating_cash_flow←NETCASH_OPERATE
//             net_investing_cash_flow←NETCASH_INVEST net_financing_cash_flow←NETCASH_FINANCE
//             net_cash_change←CCE_ADD capex←CONSTRUCT_LONG_ASSET (购建固定资产、无形资产和其他长期资产
//             支付的现金, positive as schemas.ts wants it)
//   shares    RPT_F10_EH_EQUITY (data/v1/get, one row per share-capital change): period_end←END_DATE
//             announce_date←NOTICE_DATE total_shares←TOTAL_SHARES float_shares←LISTED_A_SHARES
//             (已上市流通A股: what trades on the A-share market. Not UNLIMITED_SHARES, which adds the
//             H shares of an A+H issuer: 601088.SH 19,868,519,955 = 16,491,037,955 A + 3,377,482,000 H;
//             not FREE_SHARES, which equals TOTAL_SHARES in the captures, even before listing);
//             period_months null, no currency (a count).
//   metrics   derived (src/financials/derive.ts) from the four: no captured answer of
//             RPT_F10_FINANCE_MAINFINADATA (or of emweb ZYZBAjaxNew) was found, so the indicator
//             table is not requested. Inputs per income record: the balance sheet of the same date,
//             the one at the previous year end (opening, the span being year-to-date), the income
//             record of the same span a year earlier, total shares at the latest change on or
//             before period_end. Costs four requests per symbol.
import type { SymbolRef } from '../../src/domain.ts';
import { deriveMetricsSeries } from '../../src/financials/derive.ts';
import type {
  BalanceSheetRecord, CashFlowRecord, IncomeRecord, MetricsRecord, PeriodMonths, SharesRecord, StatementRecord, StatementSet, Statement,
} from '../../src/financials/types.ts';
import { PERIOD_MONTHS } from '../../src/financials/types.ts';
import type { JsonRecord, PayloadReader } from '../common/validate.ts';
import { readDatacenter } from './errors.ts';

export const DATACENTER_FINANCIALS_HOST = 'https://datacenter.eastmoney.com';

/** Report names (docs/vendors.md#eastmoney-datacenter-financials). */
export const EASTMONEY_REPORTS = {
  cnIncome: 'RPT_F10_FINANCE_GINCOME',
  cnBalance: 'RPT_F10_FINANCE_GBALANCE',
  cnCashFlow: 'RPT_F10_FINANCE_GCASHFLOW',
  cnShares: 'RPT_F10_EH_EQUITY',
  hkIndicators: 'RPT_HKF10_FN_MAININDICATOR',
} as const;
export type EastmoneyReport = (typeof EASTMONEY_REPORTS)[keyof typeof EASTMONEY_REPORTS];

/** What the adapter sends (it adds the resource label and deadline). */
export interface DatacenterRequest {
  url: string;
  headers: Record<string, string>;
}

/**
 * One datacenter page of a report for one symbol, newest first. A-share reports filter on the
 * dotted SECUCODE ('600519.SH'); the HK indicator table answered the captured request with
 * SECUCODE '02367.HK' and sorts on STD_REPORT_DATE.
 */
export function buildFinancialsRequest(report: EastmoneyReport, ref: SymbolRef, pageSize = 200, host = DATACENTER_FINANCIALS_HOST): DatacenterRequest {
  const hk = report === EASTMONEY_REPORTS.hkIndicators;
  const sortColumns = hk ? 'STD_REPORT_DATE' : report === EASTMONEY_REPORTS.cnShares ? 'END_DATE' : 'REPORT_DATE';
  const params = new URLSearchParams({
    reportName: report,
    columns: 'ALL',
    filter: `(SECUCODE="${ref.symbol}")`,
    pageNumber: '1',
    pageSize: String(pageSize),
    sortTypes: '-1',
    sortColumns,
    source: hk ? 'F10' : 'HSF10',
    client: 'PC',
  });
  return { url: `${host}/securities/api/data/v1/get?${params.toString()}`, headers: { Referer: 'https://emweb.securities.eastmoney.com/' } };
}

/** '2025-06-30 00:00:00' → '2025-06-30'; anything else fails the payload. */
function dateOf(value: unknown, path: string, r: PayloadReader): string {
  const text = r.string(value, path);
  const match = /^(\d{4}-\d{2}-\d{2})(?:[ T]00:00:00)?$/.exec(text);
  if (match === null) return r.fail(path);
  return match[1];
}

/** Months from `start` (first day) to `end` (last day) inclusive, when it is 3, 6, 9 or 12. */
export function spanMonths(start: string, end: string): PeriodMonths | null {
  const months = (Number(end.slice(0, 4)) - Number(start.slice(0, 4))) * 12 + Number(end.slice(5, 7)) - Number(start.slice(5, 7)) + 1;
  return (PERIOD_MONTHS as readonly number[]).includes(months) ? (months as PeriodMonths) : null;
}

type Fields<S extends Statement> = Partial<Record<keyof StatementRecord<S>, string>>;

const HK_FIELDS: { [S in Statement]: Fields<S> } = {
  metrics: {
    eps_basic: 'BASIC_EPS', eps_diluted: 'DILUTED_EPS', bps: 'BPS', ocfps: 'PER_NETCASH_OPERATE', roe: 'ROE_AVG', roa: 'ROA',
    gross_margin: 'GROSS_PROFIT_RATIO', net_margin: 'NET_PROFIT_RATIO', debt_to_asset_ratio: 'DEBT_ASSET_RATIO',
    revenue_yoy: 'OPERATE_INCOME_YOY', net_income_yoy: 'HOLDER_PROFIT_YOY', operating_cash_to_revenue: 'OCF_SALES',
  },
  income: {
    revenue: 'OPERATE_INCOME', operating_profit: 'OPERATE_PROFIT', total_profit: 'PRETAX_PROFIT',
    net_income_attributable: 'HOLDER_PROFIT', basic_eps: 'BASIC_EPS', diluted_eps: 'DILUTED_EPS',
  },
  balance_sheet: { total_assets: 'TOTAL_ASSETS', total_liabilities: 'TOTAL_LIABILITIES', equity_attributable: 'TOTAL_PARENT_EQUITY' },
  cash_flow: { net_operating_cash_flow: 'NETCASH_OPERATE', net_investing_cash_flow: 'NETCASH_INVEST', net_financing_cash_flow: 'NETCASH_FINANCE' },
  shares: { total_shares: 'ISSUED_COMMON_SHARES', float_shares: 'HK_COMMON_SHARES' },
};

function pick<S extends Statement>(row: JsonRecord, fields: Fields<S>, head: StatementRecord<S>, path: string, r: PayloadReader): StatementRecord<S> {
  const out = head as Record<string, unknown>;
  for (const [field, column] of Object.entries(fields) as [string, string][]) {
    const value = r.optionalNumber(row[column], `${path}.${column}`);
    if (value !== null) out[field] = value;
  }
  return out as StatementRecord<S>;
}

/**
 * RPT_HKF10_FN_MAININDICATOR's answer → the five statements (headline figures), ascending by
 * period_end. A 9201 answer (no rows for that code) gives five empty lists.
 */
export function parseHkIndicators(text: string, r: PayloadReader): StatementSet {
  const rows = readDatacenter(text, r);
  const out: StatementSet = { income: [], balance_sheet: [], cash_flow: [], metrics: [], shares: [] };
  rows.forEach((raw, i) => {
    const path = `result.data[${i}]`;
    const row = r.record(raw, path);
    const periodEnd = dateOf(row.REPORT_DATE, `${path}.REPORT_DATE`, r);
    const start = row.START_DATE === null || row.START_DATE === undefined ? undefined : dateOf(row.START_DATE, `${path}.START_DATE`, r);
    const currency = r.optionalString(row.CURRENCY, `${path}.CURRENCY`);
    const months = start === undefined ? null : spanMonths(start, periodEnd);
    const head = () => ({ period_end: periodEnd, announce_date: null, currency, period_months: months });
    out.metrics.push(pick(row, HK_FIELDS.metrics, head(), path, r));
    out.income.push(pick(row, HK_FIELDS.income, head(), path, r));
    out.balance_sheet.push(pick(row, HK_FIELDS.balance_sheet, head(), path, r));
    out.cash_flow.push(pick(row, HK_FIELDS.cash_flow, head(), path, r));
    out.shares.push(pick(row, HK_FIELDS.shares, { ...head(), period_months: null }, path, r));
  });
  for (const list of Object.values(out)) list.sort((a, b) => (a.period_end < b.period_end ? -1 : a.period_end > b.period_end ? 1 : 0));
  return out;
}

/**
 * An HK symbol's statements: one RPT_HKF10_FN_MAININDICATOR page, `statement`'s records from it.
 * A 9201 answer, or rows without that statement's figures, leave the symbol out.
 */
export function financialsSeries<S extends Statement>(text: string, statement: S, r: PayloadReader): StatementRecord<S>[] | undefined {
  const list = parseHkIndicators(text, r)[statement] as StatementRecord<S>[];
  const figures = list.filter((record) => Object.keys(record).some((k) => !HEAD_KEYS.has(k)));
  return figures.length === 0 ? undefined : figures;
}

const HEAD_KEYS = new Set(['period_end', 'announce_date', 'currency', 'period_months']);

// ---- A-shares -------------------------------------------------------------------------------

/** The A-share statement tables and the `sty` field style the `data/get` form names with each. */
export const CN_STATEMENT_TABLES = {
  income: { report: EASTMONEY_REPORTS.cnIncome, style: 'APP_F10_GINCOME' },
  balance_sheet: { report: EASTMONEY_REPORTS.cnBalance, style: 'F10_FINANCE_GBALANCE' },
  cash_flow: { report: EASTMONEY_REPORTS.cnCashFlow, style: 'APP_F10_GCASHFLOW' },
} as const;
export type CnStatement = keyof typeof CN_STATEMENT_TABLES;

/**
 * Newest first, one page: 200 reports is 50 years of quarters, more than any A-share has (the
 * oldest listings date from 1990; Fleur's pipeline asks these tables for 500 rows a page).
 */
export const CN_STATEMENT_PAGE_SIZE = 200;

/** One `data/get` page of an A-share statement table for one symbol (dotted SECUCODE), newest first. */
export function buildCnStatementRequest(statement: CnStatement, ref: SymbolRef, pageSize = CN_STATEMENT_PAGE_SIZE, host = DATACENTER_FINANCIALS_HOST): DatacenterRequest {
  const { report, style } = CN_STATEMENT_TABLES[statement];
  const params = new URLSearchParams({
    type: report,
    sty: style,
    filter: `(SECUCODE="${ref.symbol}")`,
    p: '1',
    ps: String(pageSize),
    sr: '-1',
    st: 'REPORT_DATE',
    source: 'HSF10',
    client: 'PC',
  });
  return { url: `${host}/securities/api/data/get?${params.toString()}`, headers: { Referer: 'https://emweb.securities.eastmoney.com/' } };
}

/**
 * A `data/get` answer → its rows. With a `code` (income, cash flow) it is read as `data/v1/get`'s
 * (0 rows, 9201 no data, 9501 and others failures); without (the balance sheet's
 * `{version, result: {pages, data}}`), `result: null` or `data: null` is no rows.
 */
export function readStatementRows(text: string, r: PayloadReader): unknown[] {
  const body = r.record(r.json(text, 'body'), 'body');
  if (body.code !== undefined) return readDatacenter(text, r);
  if (body.result === null) return [];
  const data = r.record(body.result, 'result').data;
  return data === null ? [] : r.array(data, 'result.data');
}

const CN_FIELDS: { [S in CnStatement]: Fields<S> } = {
  income: {
    revenue: 'TOTAL_OPERATE_INCOME', operating_cost: 'OPERATE_COST', operating_profit: 'OPERATE_PROFIT', total_profit: 'TOTAL_PROFIT',
    income_tax: 'INCOME_TAX', net_income: 'NETPROFIT', net_income_attributable: 'PARENT_NETPROFIT', basic_eps: 'BASIC_EPS',
    diluted_eps: 'DILUTED_EPS', rd_expense: 'RESEARCH_EXPENSE', selling_expense: 'SALE_EXPENSE', admin_expense: 'MANAGE_EXPENSE',
    financial_expense: 'FINANCE_EXPENSE', non_operating_income: 'NONBUSINESS_INCOME', non_operating_expense: 'NONBUSINESS_EXPENSE',
  },
  balance_sheet: {
    total_assets: 'TOTAL_ASSETS', total_current_assets: 'TOTAL_CURRENT_ASSETS', total_non_current_assets: 'TOTAL_NONCURRENT_ASSETS',
    cash_and_equivalents: 'MONETARYFUNDS', accounts_receivable: 'ACCOUNTS_RECE', inventory: 'INVENTORY', fixed_assets: 'FIXED_ASSET',
    intangible_assets: 'INTANGIBLE_ASSET', goodwill: 'GOODWILL', total_liabilities: 'TOTAL_LIABILITIES',
    total_current_liabilities: 'TOTAL_CURRENT_LIAB', total_non_current_liabilities: 'TOTAL_NONCURRENT_LIAB',
    accounts_payable: 'ACCOUNTS_PAYABLE', short_term_borrowing: 'SHORT_LOAN', long_term_borrowing: 'LONG_LOAN',
    total_equity: 'TOTAL_EQUITY', equity_attributable: 'TOTAL_PARENT_EQUITY', minority_interest: 'MINORITY_EQUITY',
    retained_earnings: 'UNASSIGN_RPOFIT',
  },
  cash_flow: {
    net_operating_cash_flow: 'NETCASH_OPERATE', net_investing_cash_flow: 'NETCASH_INVEST', net_financing_cash_flow: 'NETCASH_FINANCE',
    net_cash_change: 'CCE_ADD', capex: 'CONSTRUCT_LONG_ASSET',
  },
};

/** A-share reports run on the calendar year, year-to-date: the report date's month is the span. */
export function yearToDateMonths(periodEnd: string): PeriodMonths | null {
  const months = Number(periodEnd.slice(5, 7));
  return (PERIOD_MONTHS as readonly number[]).includes(months) ? (months as PeriodMonths) : null;
}

function optionalDate(value: unknown, path: string, r: PayloadReader): string | null {
  return value === null || value === undefined ? null : dateOf(value, path, r);
}

const byPeriod = (a: { period_end: string }, b: { period_end: string }) => (a.period_end < b.period_end ? -1 : a.period_end > b.period_end ? 1 : 0);

/** An A-share statement table's answer → records, ascending by period_end; no rows (9201) is []. */
export function parseCnStatement<S extends CnStatement>(text: string, statement: S, r: PayloadReader): StatementRecord<S>[] {
  const fields = CN_FIELDS[statement] as Fields<S>;
  return readStatementRows(text, r).map((raw, i) => {
    const path = `result.data[${i}]`;
    const row = r.record(raw, path);
    const periodEnd = dateOf(row.REPORT_DATE, `${path}.REPORT_DATE`, r);
    const head = {
      period_end: periodEnd,
      announce_date: optionalDate(row.NOTICE_DATE, `${path}.NOTICE_DATE`, r),
      currency: r.optionalString(row.CURRENCY, `${path}.CURRENCY`) ?? 'CNY',
      period_months: yearToDateMonths(periodEnd),
    } as StatementRecord<S>;
    return pick(row, fields, head, path, r);
  }).sort(byPeriod);
}

/** RPT_F10_EH_EQUITY's answer → one shares record per capital change, ascending; 9201 is []. */
export function parseCnShares(text: string, r: PayloadReader): SharesRecord[] {
  return readDatacenter(text, r).map((raw, i) => {
    const path = `result.data[${i}]`;
    const row = r.record(raw, path);
    const head: SharesRecord = {
      period_end: dateOf(row.END_DATE, `${path}.END_DATE`, r),
      announce_date: optionalDate(row.NOTICE_DATE, `${path}.NOTICE_DATE`, r),
      period_months: null,
    };
    return pick(row, { total_shares: 'TOTAL_SHARES', float_shares: 'LISTED_A_SHARES' }, head, path, r);
  }).sort(byPeriod);
}

export interface CnStatements {
  income: IncomeRecord[];
  balance_sheet: BalanceSheetRecord[];
  cash_flow: CashFlowRecord[];
  shares: SharesRecord[];
}

/** Metrics per income record, derived from the A-share statements (see the header), ascending. */
export function deriveCnMetrics(statements: CnStatements): MetricsRecord[] {
  // Share capital is dated by its changes, not by report: each report takes the count in force
  // at its period end; the rest is the one derivation every vendor without an indicator table uses.
  const changes = [...statements.shares].sort(byPeriod);
  const shares = statements.income.map((income): SharesRecord => ({
    period_end: income.period_end,
    announce_date: null,
    total_shares: changes.filter((s) => s.period_end <= income.period_end).at(-1)?.total_shares ?? null,
  }));
  return deriveMetricsSeries({ ...statements, shares }).sort(byPeriod);
}
