// Yahoo fundamentals-timeseries (issue 25): the requests as yfinance / yahoo-finance2 send them
// (only the asked statement's types, chunked under ~2 KB), each parser on real captures
// (gadicc/yahoo-finance2 AAPL income, balance sheet and cash flow, annual and quarterly; BTC-USD as
// the meta-only "no data" answer; see mocks/fixtures/README.md), input to output with the values
// checked against the capture's raw numbers, the metrics derived from the captured statements,
// and the adapter's getFinancials through msw (symbols with no data left out, CN never asked),
// including the contract suite's statements case.
import { readFileSync } from 'node:fs';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import {
  buildTimeseriesRequests, MAX_URL_LENGTH, parseStatementTimeseries, readTimeseries, statementRecords,
  typesOf, uniqueShareDates, YAHOO_TYPES, type Frequency,
} from '../../adapters/yahoo/financials.ts';
import { createYahooAdapter, yahooCapabilities } from '../../adapters/yahoo/index.ts';
import { payloadReader } from '../../adapters/common/validate.ts';
import { YAHOO_TEST_BASE, yahooHandlers } from '../../mocks/handlers/yahoo.ts';
import type { CapturedRequest } from '../../mocks/handlers/support.ts';
import { AppError } from '../../src/errors.ts';
import { deriveMetricsSeries } from '../../src/financials/derive.ts';
import { STATEMENTS } from '../../src/financials/types.ts';
import { contractCases } from './contract.ts';
import { nyTime, ref, testHttp, vendorServer } from './helpers.ts';

const fixture = (name: string) => readFileSync(new URL(`../../mocks/fixtures/yahoo/${name}`, import.meta.url), 'utf8');
const r = payloadReader('yahoo');
const log: CapturedRequest[] = [];
const { server } = vendorServer(yahooHandlers(log), () => {
  log.length = 0;
});

const AAPL = ref('AAPL.US');
const TENCENT = ref('00700.HK');
const WIRE = { baseUrl: 'https://query2.finance.yahoo.com', userAgent: 'ua' };

/** The raw value the capture holds for `type` (frequency-prefixed) on `date`, read straight from the JSON. */
function raw(name: string, type: string, date: string): number {
  const body = JSON.parse(fixture(name)) as { timeseries: { result: Array<Record<string, unknown>> } };
  for (const entry of body.timeseries.result) {
    const points = entry[type] as Array<{ asOfDate: string; reportedValue: { raw: number } } | null> | undefined;
    const point = points?.find((p) => p?.asOfDate === date);
    if (point) return point.reportedValue.raw;
  }
  throw new Error(`${name}: no ${type} on ${date}`);
}

const round4 = (v: number) => Math.round(v * 10_000) / 10_000;

function err(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    return e as AppError;
  }
  throw new Error('no error');
}

function adapter() {
  return createYahooAdapter({ baseUrl: YAHOO_TEST_BASE }, { now: () => nyTime('2026-02-20', '04:00'), http: testHttp('yahoo') });
}

describe('yahoo fundamentals-timeseries: requests', () => {
  it('asks one frequency\'s income types with symbol, period1 and period2, in one request', () => {
    const reqs = buildTimeseriesRequests(WIRE, 'AAPL', 'income', 'annual', 0, 1767139200);
    expect(reqs).toHaveLength(1);
    const url = new URL(reqs[0].url);
    expect(url.origin + url.pathname).toBe('https://query2.finance.yahoo.com/ws/fundamentals-timeseries/v1/finance/timeseries/AAPL');
    expect(url.searchParams.get('symbol')).toBe('AAPL');
    expect(url.searchParams.get('period1')).toBe('0');
    expect(url.searchParams.get('period2')).toBe('1767139200');
    expect(url.searchParams.get('type')!.split(',')).toEqual(Object.values(YAHOO_TYPES.income).map((t) => `annual${t}`));
    expect(reqs[0].resource).toBe('financialsIncome');
  });

  it('asks only the asked statement\'s types', () => {
    for (const statement of ['balance_sheet', 'cash_flow', 'shares'] as const) {
      const types = buildTimeseriesRequests(WIRE, 'AAPL', statement, 'quarterly', 0, 1).flatMap((q) => new URL(q.url).searchParams.get('type')!.split(','));
      expect(types, statement).toEqual(Object.values(YAHOO_TYPES[statement]).map((t) => `quarterly${t}`));
    }
    expect(typesOf('shares')).toEqual(['OrdinarySharesNumber']);
  });

  it('metrics ask the four statements\' types at once; a list too long for one URL is chunked, nothing lost or repeated', () => {
    const all = typesOf('metrics');
    expect(all).toHaveLength(10 + 19 + 5 + 1);
    // The longest list (metrics, quarterly) fits one URL under the limit today (~1.2 KB).
    const one = buildTimeseriesRequests(WIRE, 'AAPL', 'metrics', 'quarterly', 0, 1767139200);
    expect(one).toHaveLength(1);
    expect(one[0].url.length).toBeLessThanOrEqual(MAX_URL_LENGTH);
    expect(one[0].resource).toBe('financialsMetrics');
    // A tighter limit gives several requests, each within it, together asking every type once, in order.
    for (const limit of [600, 400]) {
      const reqs = buildTimeseriesRequests(WIRE, 'AAPL', 'metrics', 'quarterly', 0, 1767139200, limit);
      expect(reqs.length).toBeGreaterThan(one[0].url.length / limit);
      for (const q of reqs) expect(q.url.length).toBeLessThanOrEqual(limit);
      expect(reqs.flatMap((q) => new URL(q.url).searchParams.get('type')!.split(','))).toEqual(all.map((t) => `quarterly${t}`));
      for (const q of reqs) expect(new URL(q.url).searchParams.get('period2')).toBe('1767139200');
    }
  });

  it('the answers of one frequency\'s chunks merge by period into the same records as one answer', () => {
    const periods = readTimeseries(fixture('financials-timeseries-aapl-annual.json'), 'annual', r);
    readTimeseries(fixture('financials-timeseries-aapl-balance-sheet-annual.json'), 'annual', r, periods);
    readTimeseries(fixture('financials-timeseries-aapl-cash-flow-annual.json'), 'annual', r, periods);
    expect(statementRecords('income', periods.values())).toEqual(parseStatementTimeseries('income', fixture('financials-timeseries-aapl-annual.json'), 'annual', r));
    expect(statementRecords('balance_sheet', periods.values()))
      .toEqual(parseStatementTimeseries('balance_sheet', fixture('financials-timeseries-aapl-balance-sheet-annual.json'), 'annual', r));
    expect(statementRecords('cash_flow', periods.values()))
      .toEqual(parseStatementTimeseries('cash_flow', fixture('financials-timeseries-aapl-cash-flow-annual.json'), 'annual', r));
    expect(periods.size).toBe(4);
  });
});

describe('yahoo fundamentals-timeseries: income', () => {
  it('parses the captured AAPL annual answer: four fiscal years, every mapped field, USD, 12 months', () => {
    const records = parseStatementTimeseries('income', fixture('financials-timeseries-aapl-annual.json'), 'annual', r);
    expect(records.map((x) => x.period_end)).toEqual(['2022-09-30', '2023-09-30', '2024-09-30', '2025-09-30']);
    expect(records[3]).toEqual({
      period_end: '2025-09-30', announce_date: null, currency: 'USD', period_months: 12,
      net_income: 112010000000, basic_eps: 7.49, revenue: 416161000000, rd_expense: 34550000000, net_income_attributable: 112010000000,
      operating_cost: 220960000000, total_profit: 132729000000, income_tax: 20719000000, operating_profit: 133050000000, diluted_eps: 7.46,
    });
    // The statement adds up as Apple reported it: pretax − tax = net income.
    for (const x of records) expect(x.total_profit! - x.income_tax!).toBe(x.net_income);
  });

  it('parses the captured AAPL quarterly answer: single quarters (3 months); a meta-only type adds nothing', () => {
    const records = parseStatementTimeseries('income', fixture('financials-timeseries-aapl-quarterly.json'), 'quarterly', r);
    expect(records.map((x) => [x.period_end, x.period_months])).toEqual([
      ['2024-12-31', 3], ['2025-03-31', 3], ['2025-06-30', 3], ['2025-09-30', 3], ['2025-12-31', 3],
    ]);
    expect(records[0]).toEqual({
      period_end: '2024-12-31', announce_date: null, currency: 'USD', period_months: 3,
      revenue: 124300000000, operating_profit: 42832000000, net_income_attributable: 36330000000,
    });
  });
});

describe('yahoo fundamentals-timeseries: balance sheet', () => {
  const annual = () => parseStatementTimeseries('balance_sheet', fixture('financials-timeseries-aapl-balance-sheet-annual.json'), 'annual', r);

  it('parses the captured AAPL annual answer: every mapped type the capture carries, with its raw value', () => {
    const records = annual();
    expect(records.map((x) => x.period_end)).toEqual(['2022-09-30', '2023-09-30', '2024-09-30', '2025-09-30']);
    expect(records[3]).toEqual({
      period_end: '2025-09-30', announce_date: null, currency: 'USD', period_months: 12,
      total_assets: 359241000000, total_current_assets: 147957000000, total_non_current_assets: 211284000000,
      cash_and_equivalents: 35934000000, accounts_receivable: 39777000000, inventory: 5718000000, fixed_assets: 49834000000,
      total_liabilities: 285508000000, total_current_liabilities: 165631000000, total_non_current_liabilities: 119877000000,
      accounts_payable: 69860000000, short_term_borrowing: 20329000000, long_term_borrowing: 78328000000,
      total_equity: 73733000000, equity_attributable: 73733000000, retained_earnings: -14264000000,
    });
    // Goodwill, other intangibles and minority interest are meta-only entries at AAPL: absent, not 0.
    for (const x of records) for (const f of ['goodwill', 'intangible_assets', 'minority_interest']) expect(x).not.toHaveProperty(f);
  });

  it('the mapping keeps the balance sheet whole on every captured period, annual and quarterly', () => {
    const quarterly = parseStatementTimeseries('balance_sheet', fixture('financials-timeseries-aapl-balance-sheet-quarterly.json'), 'quarterly', r);
    expect(quarterly.map((x) => `${x.period_end}/${x.period_months}`)).toEqual(['2024-12-31/3', '2025-03-31/3', '2025-06-30/3', '2025-09-30/3', '2025-12-31/3']);
    for (const x of [...annual(), ...quarterly]) {
      expect(x.total_assets, x.period_end).toBe(x.total_liabilities! + x.total_equity!);
      expect(x.total_assets).toBe(x.total_current_assets! + x.total_non_current_assets!);
      expect(x.total_liabilities).toBe(x.total_current_liabilities! + x.total_non_current_liabilities!);
    }
    const q = quarterly[4];
    expect([q.total_assets, q.total_liabilities, q.total_equity, q.cash_and_equivalents, q.short_term_borrowing])
      .toEqual([379297000000, 291107000000, 88190000000, 45317000000, 13824000000]);
    // Borrowing is debt without leases: the capture's CurrentDebt, not CurrentDebtAndCapitalLeaseObligation.
    expect(annual()[0].short_term_borrowing).toBe(raw('financials-timeseries-aapl-balance-sheet-annual.json', 'annualCurrentDebt', '2022-09-30'));
  });
});

describe('yahoo fundamentals-timeseries: cash flow', () => {
  const CF_ANNUAL = 'financials-timeseries-aapl-cash-flow-annual.json';

  it('parses the captured AAPL annual answer; capex is served as the amount paid (Yahoo\'s negative outflow, flipped)', () => {
    const records = parseStatementTimeseries('cash_flow', fixture(CF_ANNUAL), 'annual', r);
    expect(records.map((x) => x.period_end)).toEqual(['2022-09-30', '2023-09-30', '2024-09-30', '2025-09-30']);
    expect(records[3]).toEqual({
      period_end: '2025-09-30', announce_date: null, currency: 'USD', period_months: 12,
      net_operating_cash_flow: 111482000000, net_investing_cash_flow: 15195000000, net_financing_cash_flow: -120686000000,
      net_cash_change: 5991000000, capex: 12715000000,
    });
    for (const x of records) {
      const capture = raw(CF_ANNUAL, 'annualCapitalExpenditure', x.period_end);
      expect(capture).toBeLessThan(0);
      expect(x.capex).toBe(-capture);
      // Yahoo's own free cash flow is operating cash flow less the capex paid.
      expect(raw(CF_ANNUAL, 'annualFreeCashFlow', x.period_end)).toBe(x.net_operating_cash_flow! - x.capex!);
      expect(x.net_operating_cash_flow! + x.net_investing_cash_flow! + x.net_financing_cash_flow!).toBe(x.net_cash_change);
      expect(raw(CF_ANNUAL, 'annualEndCashPosition', x.period_end) - raw(CF_ANNUAL, 'annualBeginningCashPosition', x.period_end)).toBe(x.net_cash_change);
    }
  });

  it('parses the captured AAPL quarterly answer: five single quarters', () => {
    const records = parseStatementTimeseries('cash_flow', fixture('financials-timeseries-aapl-cash-flow-quarterly.json'), 'quarterly', r);
    expect(records.map((x) => `${x.period_end}/${x.period_months}`)).toEqual(['2024-12-31/3', '2025-03-31/3', '2025-06-30/3', '2025-09-30/3', '2025-12-31/3']);
    expect(records[4]).toEqual({
      period_end: '2025-12-31', announce_date: null, currency: 'USD', period_months: 3,
      net_operating_cash_flow: 53925000000, net_investing_cash_flow: -4886000000, net_financing_cash_flow: -39656000000,
      net_cash_change: 9383000000, capex: 2373000000,
    });
    for (const x of records) expect(x.net_operating_cash_flow! + x.net_investing_cash_flow! + x.net_financing_cash_flow!).toBe(x.net_cash_change);
  });
});

describe('yahoo fundamentals-timeseries: shares', () => {
  it('total_shares is OrdinarySharesNumber at each balance-sheet date; one record per date, no span, no float', () => {
    const periods = (name: string, frequency: Frequency) => readTimeseries(fixture(name), frequency, r).values();
    const annual = statementRecords('shares', periods('financials-timeseries-aapl-balance-sheet-annual.json', 'annual'));
    const quarterly = statementRecords('shares', periods('financials-timeseries-aapl-balance-sheet-quarterly.json', 'quarterly'));
    expect(annual[3]).toEqual({ period_end: '2025-09-30', announce_date: null, period_months: null, total_shares: 14773260000 });
    const merged = uniqueShareDates([...annual, ...quarterly]);
    expect(merged.map((x) => [x.period_end, x.total_shares])).toEqual([
      ['2022-09-30', 15943425000], ['2023-09-30', 15550061000], ['2024-09-30', 15116786000],
      ['2024-12-31', 15037874000], ['2025-03-31', 14939315000], ['2025-06-30', 14856722000],
      ['2025-09-30', 14773260000], ['2025-12-31', 14697926000],
    ]);
    for (const x of merged) expect(x).not.toHaveProperty('float_shares');
  });
});

describe('yahoo fundamentals-timeseries: no data and failures', () => {
  it('a symbol without fundamentals (every entry meta-only, BTC-USD) is no data for every statement, not a failure', () => {
    for (const statement of ['income', 'balance_sheet', 'cash_flow', 'shares'] as const) {
      expect(parseStatementTimeseries(statement, fixture('financials-timeseries-btc-no-data.json'), 'quarterly', r), statement).toEqual([]);
    }
    // The other frequency's entries are not read as this one's.
    expect(parseStatementTimeseries('balance_sheet', fixture('financials-timeseries-aapl-balance-sheet-annual.json'), 'quarterly', r)).toEqual([]);
  });

  it('an error in the envelope is UPSTREAM_ERROR; a body that is not the envelope is UPSTREAM_BAD_RESPONSE', () => {
    expect(err(() => parseStatementTimeseries('income', '{"timeseries":{"result":null,"error":{"code":"Bad Request"}}}', 'annual', r)).reason).toBe('UPSTREAM_ERROR');
    expect(err(() => parseStatementTimeseries('cash_flow', '{"timeseries":{"result":[],"error":{"code":"Bad Request"}}}', 'annual', r)).reason).toBe('UPSTREAM_ERROR');
    expect(err(() => parseStatementTimeseries('income', '<html>', 'annual', r)).reason).toBe('UPSTREAM_BAD_RESPONSE');
    const badDate = '{"timeseries":{"result":[{"meta":{"symbol":["AAPL"],"type":["annualTotalAssets"]},"annualTotalAssets":[{"asOfDate":"30/09/2025","periodType":"12M","reportedValue":{"raw":1}}]}],"error":null}}';
    expect(err(() => parseStatementTimeseries('balance_sheet', badDate, 'annual', r)).reason).toBe('UPSTREAM_BAD_RESPONSE');
  });
});

describe('yahoo fundamentals-timeseries: the derived metrics on the capture', () => {
  const BS = 'financials-timeseries-aapl-balance-sheet-annual.json';
  const CF = 'financials-timeseries-aapl-cash-flow-annual.json';
  const IS = 'financials-timeseries-aapl-annual.json';

  it('each formula of src/financials/derive.ts, on the captured fiscal 2025 (opening: fiscal 2024)', async () => {
    const series = await adapter().getFinancials!([AAPL], 'metrics');
    const m = series.get('AAPL.US')!.find((x) => x.period_end === '2025-09-30' && x.period_months === 12)!;
    const at = (name: string, type: string, date = '2025-09-30') => raw(name, type, date);
    const shares = at(BS, 'annualOrdinarySharesNumber');
    expect(m).toEqual({
      period_end: '2025-09-30', announce_date: null, currency: 'USD', period_months: 12,
      eps_basic: 7.49, eps_diluted: 7.46,
      bps: round4(at(BS, 'annualStockholdersEquity') / shares),
      ocfps: round4(at(CF, 'annualOperatingCashFlow') / shares),
      roe: round4(at(IS, 'annualNetIncome') / ((at(BS, 'annualStockholdersEquity', '2024-09-30') + at(BS, 'annualStockholdersEquity')) / 2) * 100),
      roe_diluted: round4(at(IS, 'annualNetIncome') / at(BS, 'annualStockholdersEquity') * 100),
      roa: round4(at(IS, 'annualNetIncomeIncludingNoncontrollingInterests') / ((at(BS, 'annualTotalAssets', '2024-09-30') + at(BS, 'annualTotalAssets')) / 2) * 100),
      gross_margin: round4((at(IS, 'annualTotalRevenue') - at(IS, 'annualCostOfRevenue')) / at(IS, 'annualTotalRevenue') * 100),
      net_margin: round4(at(IS, 'annualNetIncomeIncludingNoncontrollingInterests') / at(IS, 'annualTotalRevenue') * 100),
      debt_to_asset_ratio: round4(at(BS, 'annualTotalLiabilitiesNetMinorityInterest') / at(BS, 'annualTotalAssets') * 100),
      revenue_yoy: round4((at(IS, 'annualTotalRevenue') - at(IS, 'annualTotalRevenue', '2024-09-30')) / at(IS, 'annualTotalRevenue', '2024-09-30') * 100),
      net_income_yoy: round4((at(IS, 'annualNetIncome') - at(IS, 'annualNetIncome', '2024-09-30')) / at(IS, 'annualNetIncome', '2024-09-30') * 100),
      inventory_turnover: round4(at(IS, 'annualCostOfRevenue') / ((at(BS, 'annualInventory', '2024-09-30') + at(BS, 'annualInventory')) / 2)),
      operating_cash_to_revenue: round4(at(CF, 'annualOperatingCashFlow') / at(IS, 'annualTotalRevenue') * 100),
    });
    // The figures as a reader would check them: 285.508 / 359.241 bn = 79.4753 %; (416.161 − 220.960) / 416.161 = 46.9052 %.
    expect(m.debt_to_asset_ratio).toBe(79.4753);
    expect(m.gross_margin).toBe(46.9052);
  });

  it('a field without every input is absent: the first fiscal year has no opening balance sheet and no prior year', async () => {
    const m = (await adapter().getFinancials!([AAPL], 'metrics')).get('AAPL.US')!.find((x) => x.period_end === '2022-09-30')!;
    expect(m.debt_to_asset_ratio).toBe(round4(302083000000 / 352755000000 * 100));
    for (const f of ['roe', 'roa', 'revenue_yoy', 'net_income_yoy', 'inventory_turnover']) expect(m).not.toHaveProperty(f);
  });

  it('a single quarter opens on the previous quarter end, taken from the fiscal-year report when that is where it is', async () => {
    const series = (await adapter().getFinancials!([AAPL], 'metrics')).get('AAPL.US')!;
    const q = series.find((x) => x.period_end === '2024-12-31')!;
    expect(q.period_months).toBe(3);
    // 2024-09-30 is Apple's fiscal year end: only the annual balance sheet carries it.
    expect(q.roe).toBe(round4(36330000000 / ((56950000000 + 66758000000) / 2) * 100));
    expect(q.debt_to_asset_ratio).toBe(round4(277327000000 / 344085000000 * 100));
    // The reduced quarterly income capture has no cost of revenue: no gross margin there.
    expect(q).not.toHaveProperty('gross_margin');
    // Same quarter a year later: growth against 2024-12-31.
    const later = series.find((x) => x.period_end === '2025-12-31')!;
    expect(later.net_income_yoy).toBe(round4((raw('financials-timeseries-aapl-quarterly.json', 'quarterlyNetIncome', '2025-12-31') - 36330000000) / 36330000000 * 100));
  });

  it('deriveMetricsSeries pairs records by date and span only', () => {
    const head = { announce_date: null, currency: 'USD' };
    const out = deriveMetricsSeries({
      income: [{ period_end: '2025-06-30', period_months: 3, ...head, revenue: 100, net_income: 10 }],
      balance_sheet: [{ period_end: '2025-06-30', period_months: 12, ...head, total_assets: 400, total_liabilities: 100 }],
      cash_flow: [{ period_end: '2025-06-30', period_months: 12, ...head, net_operating_cash_flow: 50 }],
      shares: [],
    });
    // The balance sheet of that date whatever its report; a cash flow of another span is not this quarter's.
    expect(out).toEqual([{ period_end: '2025-06-30', period_months: 3, ...head, net_margin: 10, debt_to_asset_ratio: 25 }]);
  });
});

describe('yahoo adapter: financials', () => {
  it('declares all five statements for US and HK only', () => {
    const caps = yahooCapabilities(20);
    for (const resource of ['financialsIncome', 'financialsBalanceSheet', 'financialsCashFlow', 'financialsMetrics', 'financialsShares'] as const) {
      expect(caps.resources[resource], resource).toBe(true);
      expect(caps.resourceMarkets?.[resource], resource).toEqual(['US', 'HK']);
    }
  });

  it('getFinancials: annual and quarterly merged ascending per symbol; no-data symbols and CN symbols left out', async () => {
    const found = await adapter().getFinancials!([AAPL, TENCENT, ref('600519.SH')], 'income');
    expect([...found.keys()]).toEqual(['AAPL.US']);
    const series = found.get('AAPL.US')!;
    expect(series.map((x) => `${x.period_end}/${x.period_months}`)).toEqual([
      '2022-09-30/12', '2023-09-30/12', '2024-09-30/12', '2024-12-31/3', '2025-03-31/3', '2025-06-30/3', '2025-09-30/3', '2025-09-30/12', '2025-12-31/3',
    ]);
    const asked = log.map((req) => req.url);
    expect(asked.map((u) => `${u.pathname.split('/').pop()} ${u.searchParams.get('type')!.split(',')[0]}`).sort()).toEqual([
      '0700.HK annualTotalRevenue', '0700.HK quarterlyTotalRevenue', 'AAPL annualTotalRevenue', 'AAPL quarterlyTotalRevenue',
    ]);
  });

  it('each statement asks only its own types, every URL within the limit, and answers from the captures', async () => {
    const counts: Record<string, number> = {};
    for (const statement of STATEMENTS) {
      log.length = 0;
      const found = await adapter().getFinancials!([AAPL, TENCENT], statement);
      expect([...found.keys()], statement).toEqual(['AAPL.US']);
      counts[statement] = found.get('AAPL.US')!.length;
      const wanted = new Set(typesOf(statement));
      for (const req of log) {
        expect(req.url.toString().length).toBeLessThanOrEqual(MAX_URL_LENGTH);
        for (const t of req.url.searchParams.get('type')!.split(',')) expect(wanted.has(t.replace(/^(annual|quarterly)/, '')), `${statement}: ${t}`).toBe(true);
      }
      // Every type asked, per symbol and frequency: no more, no less.
      const aaplAnnual = log.filter((q) => q.url.pathname.endsWith('/AAPL')).flatMap((q) => q.url.searchParams.get('type')!.split(',')).filter((t) => t.startsWith('annual'));
      expect(aaplAnnual.sort(), statement).toEqual([...wanted].map((t) => `annual${t}`).sort());
    }
    // 4 fiscal years + 5 quarters; shares once per date (8); metrics for each income record (9).
    expect(counts).toEqual({ income: 9, balance_sheet: 9, cash_flow: 9, metrics: 9, shares: 8 });
  });

  it('an HTTP 404 is no data; another status is a failure of that call', async () => {
    server.use(http.get(`${YAHOO_TEST_BASE}/ws/fundamentals-timeseries/v1/finance/timeseries/:ticker`, () => HttpResponse.json({}, { status: 404 })));
    expect((await adapter().getFinancials!([AAPL], 'balance_sheet')).size).toBe(0);
    server.use(http.get(`${YAHOO_TEST_BASE}/ws/fundamentals-timeseries/v1/finance/timeseries/:ticker`, () =>
      HttpResponse.json({ timeseries: { result: null, error: { code: 'Bad Request', description: 'invalid type' } } }, { status: 400 })));
    await expect(adapter().getFinancials!([AAPL], 'cash_flow')).rejects.toMatchObject({ reason: 'UPSTREAM_ERROR' });
  });

  it('the contract suite\'s statements case passes for yahoo (US and HK symbols, an unknown one absent)', async () => {
    const cases = contractCases(() => adapter(), { batch: [AAPL, TENCENT], financials: [AAPL, TENCENT], unknown: ref('ZZZZ.US') });
    const statements = cases.filter((c) => c.name.startsWith('financial statements'));
    expect(statements).toHaveLength(1);
    await statements[0].run();
  });
});
