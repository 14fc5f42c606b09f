// Yahoo fundamentals-timeseries (issue 25; docs/vendors.md#yahoo-fundamentals-timeseries): the income statement,
// balance sheet, cash flow and share count of US and HK issuers, and the metrics record derived
// from them. Requests go per frequency (annual, then quarterly), as yfinance and yahoo-finance2
// send them:
//
//   {base}/ws/fundamentals-timeseries/v1/finance/timeseries/{SYM}?symbol={SYM}&type=annualTotalAssets,…&period1=…&period2=…
//
// Only the types of the statement asked for are requested (getFinancials is called per statement;
// the metrics record asks for the four statements' types together, once). The type list is cut
// into chunks so that no URL passes MAX_URL_LENGTH (~2 KB, as yfinance keeps it): several requests
// per frequency when needed, their entries merged by period. Yahoo answered a single 8 KB URL in
// yahoo-finance2's captures, so the limit is prudence (proxies, logs), not a documented cap.
//
// The answer is `{timeseries: {result: [entry…], error}}`, one entry per requested type:
// `{meta: {symbol: [SYM], type: [T]}, timestamp: […], T: [{asOfDate, periodType: "12M"|"3M",
// currencyCode, reportedValue: {raw, fmt}} | null, …]}`. An entry with only `meta` has no data for
// that type; a symbol whose every entry is meta-only (BTC-USD in the captured answers) has no
// statements (absent: X-Missing-Symbols), never a failure; a non-null `error` is a failure. Yahoo
// keeps about 4 fiscal years and 5 quarters. Records are the periods (asOfDate) of each frequency:
// US quarters are single quarters (periodType 3M → period_months 3), fiscal years 12;
// `announce_date` is null (Yahoo has no publication date: `as_of` leaves these records out);
// currency from currencyCode.
//
// Field mapping. Every choice was checked against the captured AAPL answers (gadicc/yahoo-finance2,
// 2026-02-20; mocks/fixtures/README.md), where each identity below holds to the dollar on every
// period, annual and quarterly.
//
// Income:
//   revenue←TotalRevenue  operating_cost←CostOfRevenue  operating_profit←OperatingIncome
//   total_profit←PretaxIncome  income_tax←TaxProvision
//   net_income←NetIncomeIncludingNoncontrollingInterests  net_income_attributable←NetIncome
//   basic_eps←BasicEPS  diluted_eps←DilutedEPS  rd_expense←ResearchAndDevelopment
//   Left out: selling_expense and admin_expense (Yahoo reports them combined, as
//   SellingGeneralAndAdministration), financial_expense, non_operating_income/expense (no type
//   with the same meaning).
//
// Balance sheet (figures at period_end; the record keeps its report's span, as income does):
//   total_assets←TotalAssets  total_current_assets←CurrentAssets
//   total_non_current_assets←TotalNonCurrentAssets          (current + non-current = total)
//   total_liabilities←TotalLiabilitiesNetMinorityInterest  total_current_liabilities←CurrentLiabilities
//   total_non_current_liabilities←TotalNonCurrentLiabilitiesNetMinorityInterest   (likewise)
//   total_equity←TotalEquityGrossMinorityInterest: equity including minority interest, so that
//     total_assets = total_liabilities + total_equity (holds on the capture; Yahoo's liabilities
//     are "net of minority interest" precisely because the minority sits in this equity figure).
//   equity_attributable←StockholdersEquity: the parent's shareholders' equity, i.e. total equity
//     less MinorityInterest (CommonStockEquity would also take out preferred stock; equal at AAPL).
//   minority_interest←MinorityInterest (meta-only at AAPL: absent, not 0)
//   cash_and_equivalents←CashAndCashEquivalents (not CashCashEquivalentsAndShortTermInvestments,
//     which adds marketable securities)
//   accounts_receivable←AccountsReceivable (trade receivables; Receivables adds other receivables)
//   inventory←Inventory  accounts_payable←AccountsPayable (trade; Payables adds other payables)
//   fixed_assets←NetPPE (net of accumulated depreciation: GrossPPE + AccumulatedDepreciation)
//   goodwill←Goodwill  intangible_assets←OtherIntangibleAssets (intangibles other than goodwill,
//     which has its own field; GoodwillAndOtherIntangibleAssets would count goodwill twice). Both
//     meta-only at AAPL, so absent there.
//   short_term_borrowing←CurrentDebt (= CommercialPaper + OtherCurrentBorrowings on the capture;
//     CurrentDebtAndCapitalLeaseObligation adds lease liabilities, which are not borrowing)
//   long_term_borrowing←LongTermDebt (likewise without LongTermCapitalLeaseObligation)
//   retained_earnings←RetainedEarnings (negative at AAPL: buybacks exceed retained profit)
//
// Cash flow:
//   net_operating_cash_flow←OperatingCashFlow  net_investing_cash_flow←InvestingCashFlow
//   net_financing_cash_flow←FinancingCashFlow   (the totals including any discontinued operations;
//     the CashFlowFromContinuing… types leave those out)
//   net_cash_change←ChangesInCash (= operating + investing + financing, and = EndCashPosition −
//     BeginningCashPosition on the capture; an exchange-rate effect, which Yahoo reports apart as
//     EffectOfExchangeRateChanges, is not in it: meta-only at AAPL)
//   capex←CapitalExpenditure, SIGN FLIPPED: Yahoo reports it as a cash outflow, negative
//     (FreeCashFlow = OperatingCashFlow + CapitalExpenditure on the capture); the gateway serves
//     capex as the amount paid, positive, as its schema and the sim do (src/financials/schemas.ts).
//
// Shares: total_shares←OrdinarySharesNumber, the common shares outstanding at the balance-sheet
//   date (ShareIssued less TreasurySharesNumber; equal at AAPL, which retires what it buys back).
//   One record per date (period_months null, no currency: a count at a date, as the sim's), the
//   annual report's when both frequencies give the date. float_shares is left out: the timeseries
//   has no float type (Yahoo's floatShares is a quoteSummary snapshot, not a series).
//
// Metrics: derived by src/financials/derive.ts (deriveMetricsSeries: one documented formula per
// field, present only when every input is), from the four statements fetched in one go.
import { AppError } from '../../src/errors.ts';
import { FINANCIALS_RESOURCES, type PeriodMonths, type SharesRecord, type Statement, type StatementRecord } from '../../src/financials/types.ts';
import type { JsonRecord, PayloadReader } from '../common/validate.ts';
import type { UpstreamRequest } from '../types.ts';
import { ADAPTER_ID } from './errors.ts';

export type Frequency = 'annual' | 'quarterly';

/** The statements read straight from Yahoo's types (metrics are derived from them). */
export type ReportedStatement = Exclude<Statement, 'metrics'>;

type TypeMap<S extends ReportedStatement> = Readonly<Partial<Record<keyof StatementRecord<S> & string, string>>>;

/** Our field → Yahoo's type name (without the frequency prefix), per statement. */
export const YAHOO_TYPES: { readonly [S in ReportedStatement]: TypeMap<S> } = Object.freeze({
  income: {
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
  },
  balance_sheet: {
    total_assets: 'TotalAssets',
    total_current_assets: 'CurrentAssets',
    total_non_current_assets: 'TotalNonCurrentAssets',
    cash_and_equivalents: 'CashAndCashEquivalents',
    accounts_receivable: 'AccountsReceivable',
    inventory: 'Inventory',
    fixed_assets: 'NetPPE',
    intangible_assets: 'OtherIntangibleAssets',
    goodwill: 'Goodwill',
    total_liabilities: 'TotalLiabilitiesNetMinorityInterest',
    total_current_liabilities: 'CurrentLiabilities',
    total_non_current_liabilities: 'TotalNonCurrentLiabilitiesNetMinorityInterest',
    accounts_payable: 'AccountsPayable',
    short_term_borrowing: 'CurrentDebt',
    long_term_borrowing: 'LongTermDebt',
    total_equity: 'TotalEquityGrossMinorityInterest',
    equity_attributable: 'StockholdersEquity',
    minority_interest: 'MinorityInterest',
    retained_earnings: 'RetainedEarnings',
  },
  cash_flow: {
    net_operating_cash_flow: 'OperatingCashFlow',
    net_investing_cash_flow: 'InvestingCashFlow',
    net_financing_cash_flow: 'FinancingCashFlow',
    net_cash_change: 'ChangesInCash',
    capex: 'CapitalExpenditure',
  },
  shares: {
    total_shares: 'OrdinarySharesNumber',
  },
});

/** Fields whose sign we turn: Yahoo reports capex as an outflow (negative), we serve it paid (positive). */
const FLIPPED: ReadonlySet<string> = new Set(['capex']);

/** Statements fetched for a request of `statement`: metrics need the other four. */
export function sourcesOf(statement: Statement): ReportedStatement[] {
  return statement === 'metrics' ? ['income', 'balance_sheet', 'cash_flow', 'shares'] : [statement];
}

/** Yahoo type names (unprefixed, without duplicates) a request of `statement` asks for. */
export function typesOf(statement: Statement): string[] {
  return [...new Set(sourcesOf(statement).flatMap((s) => Object.values(YAHOO_TYPES[s]) as string[]))];
}

/** The longest URL a timeseries request may have; longer type lists are split. */
export const MAX_URL_LENGTH = 2_000;

function timeseriesUrl(baseUrl: string, ticker: string, types: readonly string[], frequency: Frequency, period1: number, period2: number): string {
  const u = new URL(`${baseUrl.replace(/\/+$/, '')}/ws/fundamentals-timeseries/v1/finance/timeseries/${encodeURIComponent(ticker)}`);
  u.searchParams.set('symbol', ticker);
  u.searchParams.set('type', types.map((t) => `${frequency}${t}`).join(','));
  u.searchParams.set('period1', String(period1));
  u.searchParams.set('period2', String(period2));
  return u.toString();
}

/**
 * The timeseries requests for one symbol, statement and frequency, from period1 to period2 (epoch
 * seconds): the statement's types in order, cut greedily so that each URL stays within maxLength.
 */
export function buildTimeseriesRequests(
  base: { baseUrl: string; userAgent: string }, ticker: string, statement: Statement, frequency: Frequency,
  period1: number, period2: number, maxLength = MAX_URL_LENGTH,
): UpstreamRequest[] {
  const chunks: string[][] = [];
  let chunk: string[] = [];
  for (const type of typesOf(statement)) {
    if (chunk.length > 0 && timeseriesUrl(base.baseUrl, ticker, [...chunk, type], frequency, period1, period2).length > maxLength) {
      chunks.push(chunk);
      chunk = [];
    }
    chunk.push(type);
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks.map((types) => ({
    url: timeseriesUrl(base.baseUrl, ticker, types, frequency, period1, period2),
    method: 'GET',
    headers: { 'user-agent': base.userAgent },
    resource: FINANCIALS_RESOURCES[statement],
    acceptStatus: [400, 404],
  }));
}

/** One reported period of one frequency: every value the answer(s) carried for it, by Yahoo type. */
export interface TimeseriesPeriod {
  date: string;
  months: PeriodMonths;
  currency: string | null;
  values: Map<string, number | null>;
}

const PERIOD_MONTHS: Readonly<Record<string, PeriodMonths>> = { '12M': 12, '3M': 3 };

function vendorError(details: Record<string, unknown>): AppError {
  return new AppError('UPSTREAM_ERROR', 'The upstream data source answered with an error', { details: { adapter: ADAPTER_ID, ...details } });
}

/**
 * One timeseries answer → its periods of that frequency, merged into `into` (keyed by date and
 * span), so the chunks of one frequency add up. A non-null `timeseries.error` is a vendor failure;
 * a body that is not the envelope is a bad response (the payload reader's UPSTREAM_BAD_RESPONSE);
 * a meta-only entry adds nothing.
 */
export function readTimeseries(
  text: string, frequency: Frequency, r: PayloadReader, into: Map<string, TimeseriesPeriod> = new Map(),
): Map<string, TimeseriesPeriod> {
  const body = r.record(r.json(text, 'body'), 'body');
  const ts = r.record(body.timeseries, 'timeseries');
  if (ts.error !== null && ts.error !== undefined) throw vendorError({ error: ts.error });
  if (ts.result === null || ts.result === undefined) return into;
  r.array(ts.result, 'timeseries.result').forEach((raw, i) => {
    const path = `timeseries.result[${i}]`;
    const entry = r.record(raw, path);
    const type = r.array(r.record(entry.meta, `${path}.meta`).type, `${path}.meta.type`)[0];
    if (typeof type !== 'string' || !type.startsWith(frequency)) return;
    const points = entry[type];
    if (points === undefined || points === null) return;
    const name = type.slice(frequency.length);
    r.array(points, `${path}.${type}`).forEach((point, k) => {
      if (point === null) return;
      const at = `${path}.${type}[${k}]`;
      const p: JsonRecord = r.record(point, at);
      const date = r.string(p.asOfDate, `${at}.asOfDate`);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) r.fail(`${at}.asOfDate`);
      const months = PERIOD_MONTHS[r.string(p.periodType, `${at}.periodType`)];
      if (months === undefined) return;
      const value = r.optionalNumber(r.record(p.reportedValue, `${at}.reportedValue`).raw, `${at}.reportedValue.raw`);
      const key = `${date}|${months}`;
      let period = into.get(key);
      if (period === undefined) {
        period = { date, months, currency: r.optionalString(p.currencyCode, `${at}.currencyCode`), values: new Map() };
        into.set(key, period);
      }
      period.values.set(name, value);
    });
  });
  return into;
}

const byDate = (a: { period_end: string }, b: { period_end: string }): number => (a.period_end < b.period_end ? -1 : a.period_end > b.period_end ? 1 : 0);

/**
 * The records of one statement from the periods read: a period gives a record when the answer
 * carried at least one of the statement's types for it. Ascending by period_end. Shares: one
 * record per date, without span or currency.
 */
export function statementRecords<S extends ReportedStatement>(statement: S, periods: Iterable<TimeseriesPeriod>): StatementRecord<S>[] {
  const map = Object.entries(YAHOO_TYPES[statement]) as [string, string][];
  const out: StatementRecord<S>[] = [];
  for (const period of periods) {
    let record: Record<string, unknown> | undefined;
    for (const [field, type] of map) {
      if (!period.values.has(type)) continue;
      const raw = period.values.get(type) ?? null;
      record ??= statement === 'shares'
        ? { period_end: period.date, announce_date: null, period_months: null }
        : { period_end: period.date, announce_date: null, currency: period.currency, period_months: period.months };
      record[field] = raw !== null && FLIPPED.has(field) ? (raw === 0 ? 0 : -raw) : raw;
    }
    if (record !== undefined) out.push(record as StatementRecord<S>);
  }
  return out.sort(byDate);
}

/** Shares at the same date from both frequencies: the first kept (the annual report's, read first). */
export function uniqueShareDates(records: readonly SharesRecord[]): SharesRecord[] {
  const seen = new Map<string, SharesRecord>();
  for (const record of records) if (!seen.has(record.period_end)) seen.set(record.period_end, record);
  return [...seen.values()].sort(byDate);
}

/** One answer → records of one statement and frequency (empty: no data). */
export function parseStatementTimeseries<S extends ReportedStatement>(statement: S, text: string, frequency: Frequency, r: PayloadReader): StatementRecord<S>[] {
  return statementRecords(statement, readTimeseries(text, frequency, r).values());
}
