// Eastmoney datacenter financials (issue 25; reference/financials.md §2): pure request builders and
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
import type { SymbolRef } from '../../src/domain.ts';
import type {
  PeriodMonths, StatementRecord, StatementSet, Statement,
} from '../../src/financials/types.ts';
import { PERIOD_MONTHS } from '../../src/financials/types.ts';
import type { JsonRecord, PayloadReader } from '../common/validate.ts';
import { readDatacenter } from './errors.ts';

export const DATACENTER_FINANCIALS_HOST = 'https://datacenter.eastmoney.com';

/** Report names (reference/financials.md §2). */
export const EASTMONEY_REPORTS = {
  cnIncome: 'RPT_F10_FINANCE_GINCOME',
  cnBalance: 'RPT_F10_FINANCE_GBALANCE',
  cnCashFlow: 'RPT_F10_FINANCE_GCASHFLOW',
  cnIndicators: 'RPT_F10_FINANCE_MAINFINADATA',
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
 * The adapter's statements (capabilities: HK only; A-share statements are not served, see
 * mocks/fixtures/README.md): per HK symbol one RPT_HKF10_FN_MAININDICATOR page, `statement`'s
 * records from it. A 9201 answer, or rows without that statement's figures, leave the symbol out.
 */
export function financialsSeries<S extends Statement>(text: string, statement: S, r: PayloadReader): StatementRecord<S>[] | undefined {
  const list = parseHkIndicators(text, r)[statement] as StatementRecord<S>[];
  const figures = list.filter((record) => Object.keys(record).some((k) => !HEAD_KEYS.has(k)));
  return figures.length === 0 ? undefined : figures;
}

const HEAD_KEYS = new Set(['period_end', 'announce_date', 'currency', 'period_months']);
