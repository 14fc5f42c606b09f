// Financial statements (issue 25): the five records the TickFlow client reads, with the field names
// of its generated_model.py (tickflow-org/tickflow v0.1.21: IncomeRecord, BalanceSheetRecord,
// CashFlowRecord, MetricsRecord, SharesRecord), plus `currency` and `period_months`.
//
// Units: amounts in the reporting currency's units (yuan, HK dollars, dollars, not 万 or 亿);
// ratios in PERCENT (roe 15.2 means 15.2 %, as TickFlow's own examples read them: an exception to
// the fractions of docs/contract.md#shapes-and-units); share counts as counts; per-share figures in currency per share.
// `period_months` says how many months the record's flow figures cover (3, 6, 9 or 12): an A-share
// Q3 record is year-to-date (9), a US quarter is a single quarter (3). Balance-sheet figures are
// at `period_end` whatever the span; the record carries its report's span all the same.

export const STATEMENTS = ['income', 'balance_sheet', 'cash_flow', 'metrics', 'shares'] as const;
export type Statement = (typeof STATEMENTS)[number];

/** The route segment of each statement: /v1/financials/<segment>. */
export const STATEMENT_ROUTES: Readonly<Record<Statement, string>> = Object.freeze({
  income: 'income', balance_sheet: 'balance-sheet', cash_flow: 'cash-flow', metrics: 'metrics', shares: 'shares',
});

/** The resource name of each statement (metrics labels, /v1/meta, capabilities). */
export const FINANCIALS_RESOURCES = {
  income: 'financialsIncome',
  balance_sheet: 'financialsBalanceSheet',
  cash_flow: 'financialsCashFlow',
  metrics: 'financialsMetrics',
  shares: 'financialsShares',
} as const satisfies Record<Statement, string>;

/** The numeric fields of each record, in the client's order (all optional and nullable there). */
export const STATEMENT_FIELDS = {
  income: [
    'revenue', 'operating_cost', 'operating_profit', 'total_profit', 'income_tax', 'net_income', 'net_income_attributable',
    'basic_eps', 'diluted_eps', 'rd_expense', 'selling_expense', 'admin_expense', 'financial_expense',
    'non_operating_income', 'non_operating_expense',
  ],
  balance_sheet: [
    'total_assets', 'total_current_assets', 'total_non_current_assets', 'cash_and_equivalents', 'accounts_receivable',
    'inventory', 'fixed_assets', 'intangible_assets', 'goodwill', 'total_liabilities', 'total_current_liabilities',
    'total_non_current_liabilities', 'accounts_payable', 'short_term_borrowing', 'long_term_borrowing', 'total_equity',
    'equity_attributable', 'minority_interest', 'retained_earnings',
  ],
  cash_flow: ['net_operating_cash_flow', 'net_investing_cash_flow', 'net_financing_cash_flow', 'net_cash_change', 'capex'],
  metrics: [
    'eps_basic', 'eps_diluted', 'bps', 'ocfps', 'roe', 'roe_diluted', 'roa', 'gross_margin', 'net_margin',
    'debt_to_asset_ratio', 'revenue_yoy', 'net_income_yoy', 'inventory_turnover', 'operating_cash_to_revenue',
  ],
  shares: ['total_shares', 'float_shares'],
} as const satisfies Record<Statement, readonly string[]>;

export type FieldOf<S extends Statement> = (typeof STATEMENT_FIELDS)[S][number];

export const PERIOD_MONTHS = [3, 6, 9, 12] as const;
export type PeriodMonths = (typeof PERIOD_MONTHS)[number];

/** What every record carries besides its figures. */
export interface RecordHead {
  /** YYYY-MM-DD, the last day the record covers (balance-sheet date). */
  period_end: string;
  /** YYYY-MM-DD the report was published; null when the vendor does not say (Yahoo). */
  announce_date: string | null;
  /** ISO 4217 reporting currency where the vendor says it (absent otherwise). */
  currency?: string | null;
  /** Months the flow figures cover; null where the record has no span (a share-capital change). */
  period_months?: PeriodMonths | null;
}

export type StatementRecord<S extends Statement> = RecordHead & { [F in FieldOf<S>]?: number | null };

export type IncomeRecord = StatementRecord<'income'>;
export type BalanceSheetRecord = StatementRecord<'balance_sheet'>;
export type CashFlowRecord = StatementRecord<'cash_flow'>;
export type MetricsRecord = StatementRecord<'metrics'>;
export type SharesRecord = StatementRecord<'shares'>;

export type AnyStatementRecord = StatementRecord<Statement>;

/** All five statements of one symbol, each ascending by period_end (then announce_date). */
export type StatementSet = { [S in Statement]: StatementRecord<S>[] };

/** Which statements an adapter serves in which market (capabilities are data, with explicit absence). */
export type FinancialsCapability = Readonly<Partial<Record<Statement, readonly ('CN' | 'HK' | 'US')[]>>>;
