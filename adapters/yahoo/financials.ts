// Yahoo fundamentals-timeseries (issue 25; reference/financials.md §2): the income statement of US
// and HK issuers. One request per frequency (annual, then quarterly), as yfinance and
// yahoo-finance2 send them:
//
//   {base}/ws/fundamentals-timeseries/v1/finance/timeseries/{SYM}?symbol={SYM}&type=annualTotalRevenue,…&period1=…&period2=…
//
// The answer is `{timeseries: {result: [entry…], error}}`, one entry per requested type:
// `{meta: {symbol: [SYM], type: [T]}, timestamp: […], T: [{asOfDate, periodType: "12M"|"3M",
// currencyCode, reportedValue: {raw, fmt}} | null, …]}`. An entry with only `meta` has no data for
// that type; a symbol whose every entry is meta-only (BTC-USD in the captured answers) has no
// statements (absent: X-Missing-Symbols), never a failure. Yahoo keeps about 4 fiscal years and 5
// quarters. Records are the periods (asOfDate) of each frequency: US quarters are single quarters
// (periodType 3M → period_months 3), fiscal years 12; `announce_date` is null (Yahoo has no
// publication date: `as_of` leaves these records out); currency from currencyCode.
//
// Field mapping (income; each checked against the captured AAPL answers, mocks/fixtures/README.md):
//   revenue←TotalRevenue  operating_cost←CostOfRevenue  operating_profit←OperatingIncome
//   total_profit←PretaxIncome  income_tax←TaxProvision
//   net_income←NetIncomeIncludingNoncontrollingInterests  net_income_attributable←NetIncome
//   basic_eps←BasicEPS  diluted_eps←DilutedEPS  rd_expense←ResearchAndDevelopment
// Left out: selling_expense and admin_expense (Yahoo reports them combined, as
// SellingGeneralAndAdministration), financial_expense, non_operating_income/expense (no type
// with the same meaning). The balance sheet, cash flow, shares and the derived metrics are not
// served from Yahoo yet: their type mappings have no captured answer checked here.
import { AppError } from '../../src/errors.ts';
import type { IncomeRecord, PeriodMonths } from '../../src/financials/types.ts';
import type { JsonRecord, PayloadReader } from '../common/validate.ts';
import type { UpstreamRequest } from '../types.ts';
import { ADAPTER_ID } from './errors.ts';

export type Frequency = 'annual' | 'quarterly';

/** Our income field → Yahoo's type name (without the frequency prefix). */
export const YAHOO_INCOME_TYPES: Readonly<Partial<Record<keyof IncomeRecord, string>>> = Object.freeze({
  revenue: 'TotalRevenue',
  operating_cost: 'CostOfRevenue',
  operating_profit: 'OperatingIncome',
  total_profit: 'PretaxIncome',
  income_tax: 'TaxProvision',
  net_income: 'NetIncomeIncludingNoncontrollingInterests',
  net_income_attributable: 'NetIncome',
  basic_eps: 'BasicEPS',
  diluted_eps: 'DilutedEPS',
  rd_expense: 'ResearchAndDevelopment',
});

const FIELD_OF_TYPE = new Map(Object.entries(YAHOO_INCOME_TYPES).map(([field, type]) => [type as string, field]));

const PERIOD_MONTHS: Readonly<Record<string, PeriodMonths>> = { '12M': 12, '3M': 3 };

/** The timeseries request for one symbol and frequency, from period1 to period2 (epoch seconds). */
export function buildTimeseriesRequest(
  base: { baseUrl: string; userAgent: string }, ticker: string, frequency: Frequency, period1: number, period2: number,
): UpstreamRequest {
  const u = new URL(`${base.baseUrl.replace(/\/+$/, '')}/ws/fundamentals-timeseries/v1/finance/timeseries/${encodeURIComponent(ticker)}`);
  u.searchParams.set('symbol', ticker);
  u.searchParams.set('type', Object.values(YAHOO_INCOME_TYPES).map((t) => `${frequency}${t}`).join(','));
  u.searchParams.set('period1', String(period1));
  u.searchParams.set('period2', String(period2));
  return { url: u.toString(), method: 'GET', headers: { 'user-agent': base.userAgent }, resource: 'financialsIncome', acceptStatus: [400, 404] };
}

function vendorError(details: Record<string, unknown>): AppError {
  return new AppError('UPSTREAM_ERROR', 'The upstream data source answered with an error', { details: { adapter: ADAPTER_ID, ...details } });
}

/**
 * One timeseries answer → income records of that frequency, ascending by period_end (empty: no
 * data). A non-null `timeseries.error` is a vendor failure; a body that is not the envelope is a
 * bad response (the payload reader's UPSTREAM_BAD_RESPONSE).
 */
export function parseIncomeTimeseries(text: string, frequency: Frequency, r: PayloadReader): IncomeRecord[] {
  const body = r.record(r.json(text, 'body'), 'body');
  const ts = r.record(body.timeseries, 'timeseries');
  if (ts.error !== null && ts.error !== undefined) throw vendorError({ error: ts.error });
  if (ts.result === null || ts.result === undefined) return [];
  const byDate = new Map<string, IncomeRecord>();
  r.array(ts.result, 'timeseries.result').forEach((raw, i) => {
    const path = `timeseries.result[${i}]`;
    const entry = r.record(raw, path);
    const type = r.array(r.record(entry.meta, `${path}.meta`).type, `${path}.meta.type`)[0];
    if (typeof type !== 'string' || !type.startsWith(frequency)) return;
    const field = FIELD_OF_TYPE.get(type.slice(frequency.length));
    const points = entry[type];
    if (field === undefined || points === undefined || points === null) return;
    r.array(points, `${path}.${type}`).forEach((point, k) => {
      if (point === null) return;
      const p: JsonRecord = r.record(point, `${path}.${type}[${k}]`);
      const date = r.string(p.asOfDate, `${path}.${type}[${k}].asOfDate`);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) r.fail(`${path}.${type}[${k}].asOfDate`);
      const months = PERIOD_MONTHS[r.string(p.periodType, `${path}.${type}[${k}].periodType`)];
      if (months === undefined) return;
      const value = r.optionalNumber(r.record(p.reportedValue, `${path}.${type}[${k}].reportedValue`).raw, `${path}.${type}[${k}].reportedValue.raw`);
      let record = byDate.get(date);
      if (record === undefined) {
        record = { period_end: date, announce_date: null, currency: r.optionalString(p.currencyCode, `${path}.${type}[${k}].currencyCode`), period_months: months };
        byDate.set(date, record);
      }
      (record as unknown as Record<string, unknown>)[field] = value;
    });
  });
  return [...byDate.values()].sort((a, b) => (a.period_end < b.period_end ? -1 : a.period_end > b.period_end ? 1 : 0));
}
