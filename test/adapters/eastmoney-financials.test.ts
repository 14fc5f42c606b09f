// Eastmoney datacenter financials: the pure request builders and parsers against real captures
// (mocks/fixtures/README.md names each source and what was rebuilt), input to output, including
// "no data"; then the adapter's getFinancials through msw.
import { readFileSync } from 'node:fs';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import {
  buildCnStatementRequest, buildFinancialsRequest, deriveCnMetrics, EASTMONEY_REPORTS, parseCnShares, parseCnStatement,
  parseHkIndicators, readStatementRows, spanMonths, yearToDateMonths,
} from '../../adapters/eastmoney/financials.ts';
import { createEastmoneyAdapter } from '../../adapters/eastmoney/index.ts';
import { payloadReader } from '../../adapters/common/validate.ts';
import { AppError } from '../../src/errors.ts';
import { EASTMONEY_TEST_HOSTS as HOSTS, eastmoneyHandlers } from '../../mocks/handlers/eastmoney.ts';
import type { CapturedRequest } from '../../mocks/handlers/support.ts';
import { failure, ref, testHttp, vendorServer } from './helpers.ts';

const fixture = (name: string) => readFileSync(new URL(`../../mocks/fixtures/eastmoney/${name}`, import.meta.url), 'utf8');
const r = payloadReader('eastmoney');
const HK = { symbol: '02367.HK', code: '02367', exchange: 'HK', region: 'HK' } as const;

describe('eastmoney financials', () => {
  it('builds the HK main-indicator request as the captured one was sent', () => {
    const req = buildFinancialsRequest(EASTMONEY_REPORTS.hkIndicators, HK, 9);
    const url = new URL(req.url);
    expect(url.origin + url.pathname).toBe('https://datacenter.eastmoney.com/securities/api/data/v1/get');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      reportName: 'RPT_HKF10_FN_MAININDICATOR', columns: 'ALL', filter: '(SECUCODE="02367.HK")', pageNumber: '1', pageSize: '9',
      sortTypes: '-1', sortColumns: 'STD_REPORT_DATE', source: 'F10', client: 'PC',
    });
  });

  it('parses the captured HK indicators of 02367.HK into the five statements, ascending, year-to-date spans', () => {
    const set = parseHkIndicators(fixture('financials-hk-indicators-02367.json'), r);
    expect(set.metrics.map((m) => [m.period_end, m.period_months])).toEqual([
      ['2020-12-31', 12], ['2021-12-31', 12], ['2022-06-30', 6], ['2022-12-31', 12], ['2023-06-30', 6],
      ['2023-12-31', 12], ['2024-06-30', 6], ['2024-12-31', 12], ['2025-06-30', 6],
    ]);
    const last = set.metrics[set.metrics.length - 1];
    expect(last).toEqual({
      period_end: '2025-06-30', announce_date: null, currency: 'HKD', period_months: 6,
      eps_basic: 1.14, eps_diluted: 1.13, bps: 8.56928071984, ocfps: 0.668303601443, roe: 14.517366162383, roa: 12.234216213618,
      gross_margin: 81.67751590118, net_margin: 37.988191458, debt_to_asset_ratio: 18.583728615, revenue_yoy: 22.5249091493,
      net_income_yoy: 20.2325349586, operating_cash_to_revenue: 22.992827361275,
    });
    const fy2024 = (list: { period_end: string }[]) => list.find((x) => x.period_end === '2024-12-31');
    expect(fy2024(set.income)).toEqual({
      period_end: '2024-12-31', announce_date: null, currency: 'HKD', period_months: 12,
      revenue: 5538812000, operating_profit: 2461594000, total_profit: 2457754000, net_income_attributable: 2062347000,
      basic_eps: 2.1, diluted_eps: 2.06,
    });
    expect(fy2024(set.balance_sheet)).toEqual({
      period_end: '2024-12-31', announce_date: null, currency: 'HKD', period_months: 12,
      total_assets: 8037958000, total_liabilities: 918136000, equity_attributable: 7108212000,
    });
    expect(fy2024(set.cash_flow)).toEqual({
      period_end: '2024-12-31', announce_date: null, currency: 'HKD', period_months: 12,
      net_operating_cash_flow: 2041202000, net_investing_cash_flow: -1106121000, net_financing_cash_flow: 582948000,
    });
    expect(fy2024(set.shares)).toEqual({
      period_end: '2024-12-31', announce_date: null, currency: 'HKD', period_months: null, total_shares: 1070904000, float_shares: 1070904000,
    });
  });

  it('code 9201 (返回数据为空, a real answer for a code with no rows) is no data, not a failure', () => {
    const set = parseHkIndicators(fixture('financials-no-data-9201.json'), r);
    expect(set).toEqual({ income: [], balance_sheet: [], cash_flow: [], metrics: [], shares: [] });
  });

  it('code 9501 (报表配置不存在) is UPSTREAM_ERROR; an HTML page is UPSTREAM_BAD_RESPONSE', () => {
    const reasonOf = (text: string) => {
      try {
        parseHkIndicators(text, r);
      } catch (error) {
        return (error as AppError).reason;
      }
      return 'no error';
    };
    expect(reasonOf(fixture('dividends-bad-report.json'))).toBe('UPSTREAM_ERROR');
    expect(reasonOf('<html><body>502 Bad Gateway</body></html>')).toBe('UPSTREAM_BAD_RESPONSE');
    // A row whose figure is a string is a broken payload, never a silent zero.
    const spoiled = fixture('financials-hk-indicators-02367.json').replace('"BASIC_EPS": 1.14', '"BASIC_EPS": "1.14"');
    expect(reasonOf(spoiled)).toBe('UPSTREAM_BAD_RESPONSE');
  });

  it('spans: year-to-date months from START_DATE to REPORT_DATE', () => {
    expect(spanMonths('2025-01-01', '2025-06-30')).toBe(6);
    expect(spanMonths('2024-04-01', '2025-03-31')).toBe(12);
    expect(spanMonths('2025-01-01', '2025-02-28')).toBeNull();
  });
});

describe('eastmoney adapter: statements through the HK main-indicator table', () => {
  it('declares the five statements for CN and HK (not US)', async () => {
    const { eastmoneyCapabilities } = await import('../../adapters/eastmoney/index.ts');
    const caps = eastmoneyCapabilities(50);
    for (const r of ['financialsIncome', 'financialsBalanceSheet', 'financialsCashFlow', 'financialsMetrics', 'financialsShares'] as const) {
      expect(caps.resources[r]).toBe(true);
      expect(caps.resourceMarkets?.[r]).toEqual(['CN', 'HK']);
    }
  });

  it('financialsSeries: the captured 02367.HK answer gives each statement\'s records; 9201 gives none', async () => {
    const { financialsSeries } = await import('../../adapters/eastmoney/financials.ts');
    const text = fixture('financials-hk-indicators-02367.json');
    expect(financialsSeries(text, 'cash_flow', r)?.map((x) => x.period_end)).toEqual([
      '2020-12-31', '2021-12-31', '2022-06-30', '2022-12-31', '2023-06-30', '2023-12-31', '2024-06-30', '2024-12-31', '2025-06-30',
    ]);
    expect(financialsSeries(text, 'shares', r)?.at(-1)?.period_months).toBeNull();
    expect(financialsSeries(fixture('financials-no-data-9201.json'), 'income', r)).toBeUndefined();
  });
});

// ---- A-shares: 601088.SH (中国神华), the answers WackyGem/Fleur documents (mocks/fixtures/README.md) ----

const SHENHUA = { symbol: '601088.SH', code: '601088', exchange: 'SH', region: 'CN' } as const;
const HEAD_FY2025 = { period_end: '2025-12-31', announce_date: '2026-03-31', currency: 'CNY', period_months: 12 } as const;
const HEAD_Q1_2026 = { period_end: '2026-03-31', announce_date: '2026-04-25', currency: 'CNY', period_months: 3 } as const;
const INCOME_Q1_2026 = {
  ...HEAD_Q1_2026,
  revenue: 70397000000, operating_cost: 47244000000, operating_profit: 16637000000, total_profit: 16594000000,
  income_tax: 3282000000, net_income: 13312000000, net_income_attributable: 10667000000, basic_eps: 0.53, diluted_eps: 0.53,
  rd_expense: 333000000, selling_expense: 114000000, admin_expense: 2410000000, financial_expense: 292000000,
  non_operating_income: 64000000, non_operating_expense: 107000000,
};
const SHARES_601088 = [
  { period_end: '2010-10-11', announce_date: '2010-09-28', period_months: null, total_shares: 19889620455, float_shares: 16311037955 },
  { period_end: '2013-10-09', announce_date: '2013-09-27', period_months: null, total_shares: 19889620455, float_shares: 16491037955 },
  { period_end: '2021-03-08', announce_date: '2021-03-09', period_months: null, total_shares: 19868519955, float_shares: 16491037955 },
  { period_end: '2026-03-16', announce_date: '2026-03-18', period_months: null, total_shares: 21231768401, float_shares: 16491037955 },
  { period_end: '2026-04-07', announce_date: '2026-04-09', period_months: null, total_shares: 21689434304, float_shares: 16491037955 },
];
const METRICS_601088 = [
  {
    ...HEAD_FY2025, eps_basic: 2.66, eps_diluted: 2.66,
    ocfps: 3.7778, // 75,059 M / 19,868,519,955 shares (the 2021-03-08 change, the last before 2025-12-31)
    gross_margin: 35.0781, // (294,916 − 191,465) / 294,916 × 100
    net_margin: 21.2884, // 62,783 / 294,916 × 100
    operating_cash_to_revenue: 25.451, // 75,059 / 294,916 × 100
  },
  {
    ...HEAD_Q1_2026, eps_basic: 0.53, eps_diluted: 0.53,
    bps: 22.6501, // 480,902 M / 21,231,768,401 shares (the 2026-03-16 change)
    ocfps: 0.8178, // 17,363 M / 21,231,768,401
    roe_diluted: 2.2181, // 10,667 / 480,902 × 100
    roa: 1.8868, // 13,312 / mean(627,761, 783,279) × 100: the 2025 year-end sheet opens the year-to-date span
    gross_margin: 32.8892, // (70,397 − 47,244) / 70,397 × 100
    net_margin: 18.9099, // 13,312 / 70,397 × 100
    debt_to_asset_ratio: 29.0313, // 227,396 / 783,279 × 100
    inventory_turnover: 4.1731, // 47,244 / mean(11,850, 10,792)
    operating_cash_to_revenue: 24.6644, // 17,363 / 70,397 × 100
  },
];
const reasonOf = (parse: () => unknown) => {
  try {
    parse();
  } catch (error) {
    return (error as AppError).reason;
  }
  return 'no error';
};

describe('eastmoney financials: A-share statements', () => {
  it('builds the data/get request of each statement table, newest first, on the dotted SECUCODE', () => {
    const url = new URL(buildCnStatementRequest('income', SHENHUA).url);
    expect(url.origin + url.pathname).toBe('https://datacenter.eastmoney.com/securities/api/data/get');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      type: 'RPT_F10_FINANCE_GINCOME', sty: 'APP_F10_GINCOME', filter: '(SECUCODE="601088.SH")', p: '1', ps: '200',
      sr: '-1', st: 'REPORT_DATE', source: 'HSF10', client: 'PC',
    });
    const tableOf = (s: 'balance_sheet' | 'cash_flow') => Object.fromEntries(new URL(buildCnStatementRequest(s, SHENHUA, 8, 'https://f10.em.test').url).searchParams);
    expect(tableOf('balance_sheet')).toMatchObject({ type: 'RPT_F10_FINANCE_GBALANCE', sty: 'F10_FINANCE_GBALANCE', ps: '8' });
    expect(tableOf('cash_flow')).toMatchObject({ type: 'RPT_F10_FINANCE_GCASHFLOW', sty: 'APP_F10_GCASHFLOW' });
    // Share capital: the v1 form akshare's stock_zh_a_gbjg_em sends.
    expect(Object.fromEntries(new URL(buildFinancialsRequest(EASTMONEY_REPORTS.cnShares, SHENHUA, 500).url).searchParams)).toEqual({
      reportName: 'RPT_F10_EH_EQUITY', columns: 'ALL', filter: '(SECUCODE="601088.SH")', pageNumber: '1', pageSize: '500',
      sortTypes: '-1', sortColumns: 'END_DATE', source: 'HSF10', client: 'PC',
    });
  });

  it('income (RPT_F10_FINANCE_GINCOME): as reported, year-to-date, ascending; every mapped column', () => {
    expect(parseCnStatement(fixture('financials-cn-income-601088.json'), 'income', r)).toEqual([
      {
        ...HEAD_FY2025,
        revenue: 294916000000, operating_cost: 191465000000, operating_profit: 75532000000, total_profit: 79339000000,
        income_tax: 16556000000, net_income: 62783000000, net_income_attributable: 52849000000, basic_eps: 2.66, diluted_eps: 2.66,
        rd_expense: 2854000000, selling_expense: 527000000, admin_expense: 11380000000, financial_expense: 445000000,
        non_operating_income: 685000000, non_operating_expense: -3122000000, // negative as Eastmoney has it
      },
      INCOME_Q1_2026,
    ]);
  });

  it('balance sheet (RPT_F10_FINANCE_GBALANCE, the envelope without code): null and absent columns are left out, never zeros', () => {
    const [fy2025, q1] = parseCnStatement(fixture('financials-cn-balance-601088.json'), 'balance_sheet', r);
    expect(q1).toEqual({
      ...HEAD_Q1_2026,
      total_assets: 783279000000, total_current_assets: 167634000000, total_non_current_assets: 615645000000,
      cash_and_equivalents: 118585000000, accounts_receivable: 13308000000, inventory: 10792000000, fixed_assets: 271055000000,
      intangible_assets: 69511000000, total_liabilities: 227396000000, total_current_liabilities: 169294000000,
      total_non_current_liabilities: 58102000000, accounts_payable: 34365000000, short_term_borrowing: 86700000000,
      long_term_borrowing: 29673000000, total_equity: 555883000000, equity_attributable: 480902000000, minority_interest: 74981000000,
      retained_earnings: 280670000000,
    });
    expect('goodwill' in q1).toBe(false); // GOODWILL: null
    expect(q1.total_liabilities! + q1.total_equity!).toBe(q1.total_assets); // the captured sheet balances
    // The 2025 row as printed stops at its 150th column (TOTAL_LIAB_EQUITY): the later totals are absent.
    expect(fy2025).toEqual({
      ...HEAD_FY2025,
      total_assets: 627761000000, total_current_assets: 146969000000, cash_and_equivalents: 96772000000, accounts_receivable: 13225000000,
      inventory: 11850000000, fixed_assets: 272172000000, intangible_assets: 69857000000, total_current_liabilities: 89262000000,
      accounts_payable: 41176000000, short_term_borrowing: 409000000, long_term_borrowing: 28268000000, total_equity: 481451000000,
      minority_interest: 72344000000,
    });
  });

  it('cash flow (RPT_F10_FINANCE_GCASHFLOW): net flows, CCE_ADD, capex from CONSTRUCT_LONG_ASSET (positive)', () => {
    expect(parseCnStatement(fixture('financials-cn-cashflow-601088.json'), 'cash_flow', r)).toEqual([
      {
        ...HEAD_FY2025, net_operating_cash_flow: 75059000000, net_investing_cash_flow: -21794000000, net_financing_cash_flow: -96242000000,
        net_cash_change: -43125000000, capex: 48398000000,
      },
      {
        ...HEAD_Q1_2026, net_operating_cash_flow: 17363000000, net_investing_cash_flow: -102346000000, net_financing_cash_flow: 106535000000,
        net_cash_change: 21409000000, capex: 9583000000,
      },
    ]);
  });

  it('shares (RPT_F10_EH_EQUITY): one record per capital change, ascending; float is the listed A shares, not UNLIMITED_SHARES (A + H)', () => {
    expect(parseCnShares(fixture('financials-cn-shares-601088.json'), r)).toEqual(SHARES_601088);
    const row = (JSON.parse(fixture('financials-cn-shares-601088.json')) as { result: { data: Record<string, number>[] } }).result.data[0];
    expect(row.UNLIMITED_SHARES).toBe(row.LISTED_A_SHARES + row.H_FREE_SHARE);
  });

  it('metrics derived from the four statements; a field whose inputs are missing is left out', () => {
    const income = parseCnStatement(fixture('financials-cn-income-601088.json'), 'income', r);
    const balance = parseCnStatement(fixture('financials-cn-balance-601088.json'), 'balance_sheet', r);
    const cashFlow = parseCnStatement(fixture('financials-cn-cashflow-601088.json'), 'cash_flow', r);
    const shares = parseCnShares(fixture('financials-cn-shares-601088.json'), r);
    // No 2024 sheet or income: no roe (opening equity), no yoy; the 2025 sheet lacks its liabilities.
    expect(deriveCnMetrics({ income, balance_sheet: balance, cash_flow: cashFlow, shares })).toEqual(METRICS_601088);
    expect(deriveCnMetrics({ income, balance_sheet: [], cash_flow: [], shares: [] })).toEqual([
      { ...HEAD_FY2025, eps_basic: 2.66, eps_diluted: 2.66, gross_margin: 35.0781, net_margin: 21.2884 },
      { ...HEAD_Q1_2026, eps_basic: 0.53, eps_diluted: 0.53, gross_margin: 32.8892, net_margin: 18.9099 },
    ]);
  });

  it('period_months from the report month (year-to-date): 3, 6, 9, 12; anything else null', () => {
    expect(['2025-03-31', '2025-06-30', '2025-09-30', '2025-12-31', '2025-05-31'].map(yearToDateMonths)).toEqual([3, 6, 9, 12, null]);
  });

  it('a row without CURRENCY is stated in CNY; a row without NOTICE_DATE has a null announce_date', () => {
    const text = fixture('financials-cn-income-601088.json').replaceAll('"CURRENCY": "CNY"', '"CURRENCY": null').replace('"NOTICE_DATE": "2026-04-25 00:00:00"', '"NOTICE_DATE": null');
    const [fy2025, q1] = parseCnStatement(text, 'income', r);
    expect([fy2025.currency, fy2025.announce_date]).toEqual(['CNY', '2026-03-31']);
    expect([q1.currency, q1.announce_date, q1.period_months]).toEqual(['CNY', null, 3]);
  });

  it('no data: the captured 9201 answer and a `result: null` give no records, not a failure', () => {
    const noData = fixture('financials-no-data-9201.json');
    expect(parseCnStatement(noData, 'income', r)).toEqual([]);
    expect(parseCnShares(noData, r)).toEqual([]);
    expect(readStatementRows('{"version":null,"result":null}', r)).toEqual([]);
    expect(readStatementRows('{"result":{"pages":0,"data":null}}', r)).toEqual([]);
  });

  it('failures: 9501 is UPSTREAM_ERROR; an HTML page, a missing result, a string figure or a bad date is UPSTREAM_BAD_RESPONSE', () => {
    expect(reasonOf(() => parseCnStatement(fixture('dividends-bad-report.json'), 'income', r))).toBe('UPSTREAM_ERROR');
    expect(reasonOf(() => parseCnShares(fixture('dividends-bad-report.json'), r))).toBe('UPSTREAM_ERROR');
    expect(reasonOf(() => parseCnStatement('<html><body>502 Bad Gateway</body></html>', 'cash_flow', r))).toBe('UPSTREAM_BAD_RESPONSE');
    expect(reasonOf(() => parseCnShares('<html></html>', r))).toBe('UPSTREAM_BAD_RESPONSE');
    expect(reasonOf(() => parseCnStatement('{"version":"x"}', 'income', r))).toBe('UPSTREAM_BAD_RESPONSE');
    const spoiled = fixture('financials-cn-income-601088.json').replace('"PARENT_NETPROFIT": 10667000000', '"PARENT_NETPROFIT": "10667000000"');
    expect(reasonOf(() => parseCnStatement(spoiled, 'income', r))).toBe('UPSTREAM_BAD_RESPONSE');
    const badDate = fixture('financials-cn-balance-601088.json').replace('"REPORT_DATE": "2026-03-31 00:00:00"', '"REPORT_DATE": "2026Q1"');
    expect(reasonOf(() => parseCnStatement(badDate, 'balance_sheet', r))).toBe('UPSTREAM_BAD_RESPONSE');
  });
});

describe('eastmoney adapter: A-share statements through msw', () => {
  const log: CapturedRequest[] = [];
  const { server } = vendorServer(eastmoneyHandlers(log), () => {
    log.length = 0;
  });
  const adapter = () => createEastmoneyAdapter({
    quoteHosts: HOSTS.quote, historyHosts: HOSTS.history, datacenterHosts: HOSTS.datacenter, f10Hosts: HOSTS.f10,
  }, { now: () => Date.UTC(2026, 10, 1), http: testHttp('eastmoney') });
  const f10 = () => log.filter((q) => q.url.origin === 'https://f10.em.test').map((q) => `${q.url.pathname} ${q.url.searchParams.get('type') ?? q.url.searchParams.get('reportName')} ${q.url.searchParams.get('filter')}`);

  it('income: one data/get request per CN symbol; the unknown code (9201) and the US symbol are left out, HK still served', async () => {
    const found = await adapter().getFinancials!([ref('601088.SH'), ref('999999.SH'), ref('AAPL.US'), ref('02367.HK')], 'income');
    expect([...found.keys()].sort()).toEqual(['02367.HK', '601088.SH']);
    expect(found.get('601088.SH')?.map((x) => [x.period_end, x.period_months, x.revenue])).toEqual([['2025-12-31', 12, 294916000000], ['2026-03-31', 3, 70397000000]]);
    expect(found.get('601088.SH')?.[1]).toEqual(INCOME_Q1_2026);
    expect(found.get('02367.HK')?.at(-1)?.period_end).toBe('2025-06-30');
    expect(f10().sort()).toEqual([
      '/securities/api/data/get RPT_F10_FINANCE_GINCOME (SECUCODE="601088.SH")',
      '/securities/api/data/get RPT_F10_FINANCE_GINCOME (SECUCODE="999999.SH")',
      '/securities/api/data/v1/get RPT_HKF10_FN_MAININDICATOR (SECUCODE="02367.HK")',
    ]);
    const sent = log.find((q) => q.url.searchParams.get('type') === 'RPT_F10_FINANCE_GINCOME')!;
    expect(sent.headers.get('referer')).toBe('https://emweb.securities.eastmoney.com/');
  });

  it('balance sheet, cash flow and shares: each its own table', async () => {
    const a = adapter();
    expect((await a.getFinancials!([ref('601088.SH')], 'balance_sheet')).get('601088.SH')?.map((b) => b.total_assets)).toEqual([627761000000, 783279000000]);
    expect((await a.getFinancials!([ref('601088.SH')], 'cash_flow')).get('601088.SH')?.map((c) => c.capex)).toEqual([48398000000, 9583000000]);
    expect((await a.getFinancials!([ref('601088.SH')], 'shares')).get('601088.SH')).toEqual(SHARES_601088);
    expect(f10()).toEqual([
      '/securities/api/data/get RPT_F10_FINANCE_GBALANCE (SECUCODE="601088.SH")',
      '/securities/api/data/get RPT_F10_FINANCE_GCASHFLOW (SECUCODE="601088.SH")',
      '/securities/api/data/v1/get RPT_F10_EH_EQUITY (SECUCODE="601088.SH")',
    ]);
  });

  it('metrics: the four tables asked, the derived records answered', async () => {
    const found = await adapter().getFinancials!([ref('601088.SH')], 'metrics');
    expect(found.get('601088.SH')).toEqual(METRICS_601088);
    expect(f10().sort()).toEqual([
      '/securities/api/data/get RPT_F10_FINANCE_GBALANCE (SECUCODE="601088.SH")',
      '/securities/api/data/get RPT_F10_FINANCE_GCASHFLOW (SECUCODE="601088.SH")',
      '/securities/api/data/get RPT_F10_FINANCE_GINCOME (SECUCODE="601088.SH")',
      '/securities/api/data/v1/get RPT_F10_EH_EQUITY (SECUCODE="601088.SH")',
    ]);
  });

  it('a 9501 answer fails the call (UPSTREAM_ERROR); an HTML page is UPSTREAM_BAD_RESPONSE', async () => {
    server.use(http.get(`${HOSTS.f10[0]}/securities/api/data/get`, () => HttpResponse.json(JSON.parse(fixture('dividends-bad-report.json')))));
    expect((await failure(adapter().getFinancials!([ref('601088.SH')], 'income'))).reason).toBe('UPSTREAM_ERROR');
    server.use(http.get(`${HOSTS.f10[0]}/securities/api/data/get`, () => new HttpResponse('<html><body>upstream busy</body></html>', { headers: { 'content-type': 'text/html' } })));
    expect((await failure(adapter().getFinancials!([ref('601088.SH')], 'cash_flow'))).reason).toBe('UPSTREAM_BAD_RESPONSE');
  });
});
