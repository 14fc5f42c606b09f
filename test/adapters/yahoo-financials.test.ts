// Yahoo fundamentals-timeseries (issue 25): the request as yfinance / yahoo-finance2 send it, the
// income parser on real captures (gadicc/yahoo-finance2 AAPL annual and quarterly, BTC-USD as the
// meta-only "no data" answer; reduced, see mocks/fixtures/README.md), input to output, and the
// adapter's getFinancials through msw (symbols with no data left out, CN never asked).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildTimeseriesRequest, parseIncomeTimeseries, YAHOO_INCOME_TYPES } from '../../adapters/yahoo/financials.ts';
import { createYahooAdapter, yahooCapabilities } from '../../adapters/yahoo/index.ts';
import { payloadReader } from '../../adapters/common/validate.ts';
import { YAHOO_TEST_BASE, yahooHandlers } from '../../mocks/handlers/yahoo.ts';
import type { CapturedRequest } from '../../mocks/handlers/support.ts';
import { AppError } from '../../src/errors.ts';
import { nyTime, ref, testHttp, vendorServer } from './helpers.ts';

const fixture = (name: string) => readFileSync(new URL(`../../mocks/fixtures/yahoo/${name}`, import.meta.url), 'utf8');
const r = payloadReader('yahoo');
const log: CapturedRequest[] = [];
vendorServer(yahooHandlers(log), () => {
  log.length = 0;
});

describe('yahoo fundamentals-timeseries: income', () => {
  it('asks one frequency\'s income types with symbol, period1 and period2', () => {
    const req = buildTimeseriesRequest({ baseUrl: 'https://query2.finance.yahoo.com', userAgent: 'ua' }, 'AAPL', 'annual', 0, 1767139200);
    const url = new URL(req.url);
    expect(url.origin + url.pathname).toBe('https://query2.finance.yahoo.com/ws/fundamentals-timeseries/v1/finance/timeseries/AAPL');
    expect(url.searchParams.get('symbol')).toBe('AAPL');
    expect(url.searchParams.get('period1')).toBe('0');
    expect(url.searchParams.get('period2')).toBe('1767139200');
    expect(url.searchParams.get('type')!.split(',')).toEqual(Object.values(YAHOO_INCOME_TYPES).map((t) => `annual${t}`));
  });

  it('parses the captured AAPL annual answer: four fiscal years, every mapped field, USD, 12 months', () => {
    const records = parseIncomeTimeseries(fixture('financials-timeseries-aapl-annual.json'), 'annual', r);
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
    const records = parseIncomeTimeseries(fixture('financials-timeseries-aapl-quarterly.json'), 'quarterly', r);
    expect(records.map((x) => [x.period_end, x.period_months])).toEqual([
      ['2024-12-31', 3], ['2025-03-31', 3], ['2025-06-30', 3], ['2025-09-30', 3], ['2025-12-31', 3],
    ]);
    expect(records[0]).toEqual({
      period_end: '2024-12-31', announce_date: null, currency: 'USD', period_months: 3,
      revenue: 124300000000, operating_profit: 42832000000, net_income_attributable: 36330000000,
    });
  });

  it('a symbol without fundamentals (every entry meta-only, BTC-USD) is no data, not a failure', () => {
    expect(parseIncomeTimeseries(fixture('financials-timeseries-btc-no-data.json'), 'quarterly', r)).toEqual([]);
  });

  it('an error in the envelope is UPSTREAM_ERROR; a body that is not the envelope is UPSTREAM_BAD_RESPONSE', () => {
    const err = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return e as AppError;
      }
      throw new Error('no error');
    };
    expect(err(() => parseIncomeTimeseries('{"timeseries":{"result":null,"error":{"code":"Bad Request"}}}', 'annual', r)).reason).toBe('UPSTREAM_ERROR');
    expect(err(() => parseIncomeTimeseries('<html>', 'annual', r)).reason).toBe('UPSTREAM_BAD_RESPONSE');
  });

  it('declares the income statement for US and HK only', () => {
    const caps = yahooCapabilities(20);
    expect(caps.resources.financialsIncome).toBe(true);
    expect(caps.resourceMarkets?.financialsIncome).toEqual(['US', 'HK']);
    for (const r2 of ['financialsBalanceSheet', 'financialsCashFlow', 'financialsMetrics', 'financialsShares'] as const) expect(caps.resources[r2]).toBe(false);
  });

  it('getFinancials: annual and quarterly merged ascending per symbol; no-data symbols and CN symbols left out', async () => {
    const adapter = createYahooAdapter({ baseUrl: YAHOO_TEST_BASE }, { now: () => nyTime('2026-02-20', '04:00'), http: testHttp('yahoo') });
    const found = await adapter.getFinancials!([ref('AAPL.US'), ref('00700.HK'), ref('600519.SH')], 'income');
    expect([...found.keys()]).toEqual(['AAPL.US']);
    const series = found.get('AAPL.US')!;
    expect(series.map((x) => `${x.period_end}/${x.period_months}`)).toEqual([
      '2022-09-30/12', '2023-09-30/12', '2024-09-30/12', '2024-12-31/3', '2025-03-31/3', '2025-06-30/3', '2025-09-30/3', '2025-09-30/12', '2025-12-31/3',
    ]);
    const asked = log.map((req) => new URL(req.url));
    expect(asked.map((u) => `${u.pathname.split('/').pop()} ${u.searchParams.get('type')!.split(',')[0]}`).sort()).toEqual([
      '0700.HK annualTotalRevenue', '0700.HK quarterlyTotalRevenue', 'AAPL annualTotalRevenue', 'AAPL quarterlyTotalRevenue',
    ]);
  });
});
