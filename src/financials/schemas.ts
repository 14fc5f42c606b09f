// TypeBox schemas of the financials records and query (issue 25): the OpenAPI document's shapes,
// and the validator the tickflow pass-through checks a vendor's records with. Built from the
// field lists in types.ts so the schema, the types and the parsers name the same fields.
import { Type, type TSchema } from 'typebox';
import { STATEMENT_FIELDS, STATEMENTS, type Statement } from './types.ts';

const DATE = '^\\d{4}-\\d{2}-\\d{2}$';
const NullableNum = Type.Union([Type.Number(), Type.Null()]);

/** Per field: what it is and its unit, for the OpenAPI document. */
const FIELD_DOCS: Readonly<Record<string, string>> = {
  basic_eps: 'Attributable net income ÷ weighted average shares, currency per share',
  diluted_eps: 'Currency per share',
  eps_basic: 'Currency per share',
  eps_diluted: 'Currency per share',
  bps: 'Book value (attributable equity) per share at period end',
  ocfps: 'Operating cash flow per share',
  roe: 'Percent: attributable net income ÷ average attributable equity (weighted)',
  roe_diluted: 'Percent: attributable net income ÷ attributable equity at period end',
  roa: 'Percent: net income ÷ average total assets',
  gross_margin: 'Percent: (revenue − operating cost) ÷ revenue',
  net_margin: 'Percent: net income ÷ revenue',
  debt_to_asset_ratio: 'Percent: total liabilities ÷ total assets',
  revenue_yoy: 'Percent change against the same span a year earlier',
  net_income_yoy: 'Percent change of attributable net income against the same span a year earlier',
  inventory_turnover: 'Times over the span: operating cost ÷ average inventory',
  operating_cash_to_revenue: 'Percent: net operating cash flow ÷ revenue',
  total_shares: 'Shares (count)',
  float_shares: 'Shares (count)',
  capex: 'Cash paid for fixed, intangible and other long-term assets (a positive amount)',
};

function recordSchema(statement: Statement, title: string): TSchema {
  const properties: Record<string, TSchema> = {
    period_end: Type.String({ pattern: DATE, description: 'YYYY-MM-DD, the last day the record covers' }),
    announce_date: Type.Optional(Type.Union([Type.String({ pattern: DATE }), Type.Null()], {
      description: 'YYYY-MM-DD the report was published; null where the vendor does not say (Yahoo)',
    })),
    currency: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Reporting currency (ISO 4217) where the vendor says it' })),
    period_months: Type.Optional(Type.Union([Type.Literal(3), Type.Literal(6), Type.Literal(9), Type.Literal(12), Type.Null()], {
      description: 'Months the flow figures cover: A-share reports are year-to-date (Q3 = 9), US quarters single (3)',
    })),
  };
  for (const field of STATEMENT_FIELDS[statement]) {
    const doc = FIELD_DOCS[field] ?? 'Amount in the reporting currency';
    properties[field] = Type.Optional(Type.Union([Type.Number(), Type.Null()], { description: doc }));
  }
  return Type.Object(properties, { $id: title, title });
}

export const IncomeRecord = recordSchema('income', 'IncomeRecord');
export const BalanceSheetRecord = recordSchema('balance_sheet', 'BalanceSheetRecord');
export const CashFlowRecord = recordSchema('cash_flow', 'CashFlowRecord');
export const MetricsRecord = recordSchema('metrics', 'MetricsRecord');
export const SharesRecord = recordSchema('shares', 'SharesRecord');

export const RECORD_SCHEMAS: Readonly<Record<Statement, TSchema>> = Object.freeze({
  income: IncomeRecord, balance_sheet: BalanceSheetRecord, cash_flow: CashFlowRecord, metrics: MetricsRecord, shares: SharesRecord,
});

export const FINANCIALS_SCHEMAS: TSchema[] = STATEMENTS.map((s) => RECORD_SCHEMAS[s]);

/** `{"data": {symbol: [record, …]}}` for one statement. */
export function financialsResponse(statement: Statement): TSchema {
  return Type.Object({
    data: Type.Record(Type.String(), Type.Array(Type.Unsafe({ $ref: `${(RECORD_SCHEMAS[statement] as { $id?: string }).$id}#` }))),
  });
}

const DateParam = (description: string) => Type.String({ pattern: DATE, description });

export const FinancialsQuery = Type.Object({
  symbols: Type.String({ minLength: 1, description: 'Comma-separated symbols, up to the plan\'s symbol cap (the client sends 100)' }),
  start_date: Type.Optional(DateParam('YYYY-MM-DD: period_end on or after')),
  end_date: Type.Optional(DateParam('YYYY-MM-DD: period_end on or before')),
  latest: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true: only the newest period per symbol' })),
  as_of: Type.Optional(DateParam('YYYY-MM-DD: per period, the newest version announced on or before this date; records without an announcement date are left out')),
});
