// Eastmoney datacenter financials: the pure request builder and parser against real captures
// (mocks/fixtures/README.md names each source), input to output, including "no data".
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildFinancialsRequest, EASTMONEY_REPORTS, parseHkIndicators, spanMonths } from '../../adapters/eastmoney/financials.ts';
import { payloadReader } from '../../adapters/common/validate.ts';
import { AppError } from '../../src/errors.ts';

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
  it('declares the five statements for HK only', async () => {
    const { eastmoneyCapabilities } = await import('../../adapters/eastmoney/index.ts');
    const caps = eastmoneyCapabilities(50);
    for (const r of ['financialsIncome', 'financialsBalanceSheet', 'financialsCashFlow', 'financialsMetrics', 'financialsShares'] as const) {
      expect(caps.resources[r]).toBe(true);
      expect(caps.resourceMarkets?.[r]).toEqual(['HK']);
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
