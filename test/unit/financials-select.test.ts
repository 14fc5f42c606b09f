// Local selection from a cached series (issue 25, items 1 and 4) and the derived metrics formulas.
import { describe, expect, it } from 'vitest';
import { deriveMetrics } from '../../src/financials/derive.ts';
import { mergeVersions, selectRecords } from '../../src/financials/select.ts';
import type { IncomeRecord } from '../../src/financials/types.ts';

const rec = (period_end: string, announce_date: string | null, revenue: number, period_months: 3 | 6 | 9 | 12 = 12): IncomeRecord =>
  ({ period_end, announce_date, period_months, revenue });

// FY2023 announced 2024-03-20 and restated 2024-08-10; FY2024 announced 2025-03-25; a Yahoo-style
// record without an announcement date.
const series = [
  rec('2023-12-31', '2024-03-20', 100),
  rec('2023-12-31', '2024-08-10', 90),
  rec('2024-03-31', '2024-04-25', 30, 3),
  rec('2024-12-31', '2025-03-25', 120),
  rec('2024-12-31', null, 119, 3),
];

describe('selectRecords', () => {
  it('serves the newest version of each period, ascending by period_end then span', () => {
    expect(selectRecords(series, {}).map((r) => [r.period_end, r.period_months, r.revenue])).toEqual([
      ['2023-12-31', 12, 90], ['2024-03-31', 3, 30], ['2024-12-31', 3, 119], ['2024-12-31', 12, 120],
    ]);
  });
  it('as_of: what was announced by then (the original before its restatement); no date = left out', () => {
    expect(selectRecords(series, { as_of: '2024-05-01' }).map((r) => r.revenue)).toEqual([100, 30]);
    expect(selectRecords(series, { as_of: '2024-08-10' }).map((r) => r.revenue)).toEqual([90, 30]);
    expect(selectRecords(series, { as_of: '2030-01-01' }).some((r) => r.announce_date === null)).toBe(false);
  });
  it('start_date and end_date bound period_end inclusively; latest keeps the newest period_end', () => {
    expect(selectRecords(series, { start_date: '2024-03-31', end_date: '2024-03-31' }).map((r) => r.revenue)).toEqual([30]);
    expect(selectRecords(series, { latest: true }).map((r) => r.revenue)).toEqual([119, 120]);
    expect(selectRecords(series, { latest: true, end_date: '2024-06-30' }).map((r) => r.revenue)).toEqual([30]);
    expect(selectRecords(series, { latest: true, as_of: '2024-04-01' }).map((r) => r.revenue)).toEqual([100]);
    expect(selectRecords([], { latest: true })).toEqual([]);
  });
  it('mergeVersions keeps a restatement beside the original and replaces an identical version', () => {
    const merged = mergeVersions([rec('2023-12-31', '2024-03-20', 100)], [rec('2023-12-31', '2024-08-10', 90), rec('2023-12-31', '2024-03-20', 101)]);
    expect(merged.map((r) => [r.announce_date, r.revenue])).toEqual([['2024-03-20', 101], ['2024-08-10', 90]]);
  });
});

describe('deriveMetrics', () => {
  it('applies each documented formula, and leaves out a field whose input is missing', () => {
    const m = deriveMetrics({
      income: { period_end: '2024-12-31', announce_date: null, revenue: 200, operating_cost: 150, net_income: 20, net_income_attributable: 18, basic_eps: 1.8 },
      balance: { period_end: '2024-12-31', announce_date: null, total_assets: 400, total_liabilities: 100, equity_attributable: 280, inventory: 40 },
      opening: { period_end: '2023-12-31', announce_date: null, total_assets: 360, equity_attributable: 260, inventory: 20 },
      cashFlow: { period_end: '2024-12-31', announce_date: null, net_operating_cash_flow: 30 },
      priorYear: { period_end: '2023-12-31', announce_date: null, revenue: 160, net_income_attributable: -12 },
      shares: 10,
    })!;
    expect(m).toEqual({
      period_end: '2024-12-31', announce_date: null, eps_basic: 1.8, bps: 28, ocfps: 3, roe: 6.6667, roe_diluted: 6.4286,
      roa: 5.2632, gross_margin: 25, net_margin: 10, debt_to_asset_ratio: 25, revenue_yoy: 25, net_income_yoy: 250,
      inventory_turnover: 5, operating_cash_to_revenue: 15,
    });
    expect(deriveMetrics({ income: { period_end: '2024-12-31', announce_date: null } })).toBeUndefined();
    expect(deriveMetrics({ income: { period_end: '2024-12-31', announce_date: null, revenue: 0, net_income: 5 } })).toBeUndefined();
  });
});
