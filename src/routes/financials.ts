// GET /v1/financials/{income,balance-sheet,cash-flow,metrics,shares} (issue 25), as the official
// TickFlow client calls them: `symbols` (comma-joined, up to the plan's symbol cap; the client sends
// chunks of 100), `start_date`/`end_date` (YYYY-MM-DD, inclusive on period_end), `latest`
// (true|false) and, beyond TickFlow, `as_of` (point in time). The answer is
// `{"data": {symbol: [record, …]}}`, each list ascending by period_end.
//
// Each statement is its own by-symbol resource (src/data/resources/financials.ts): the service's
// generic `bySymbol` loads a symbol's whole cached series and the parameters select from it here
// (src/financials/select.ts), so no parameter combination refetches. Symbols the vendor does not
// know or has no statements for are left out of `data` and named in X-Missing-Symbols; a symbol
// whose vendor failed is named in X-Failed-Symbols and the answer is not cached.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.ts';
import { FINANCIALS_SCHEMAS, FinancialsQuery, financialsResponse } from '../financials/schemas.ts';
import { selectRecords, type FinancialsSelection } from '../financials/select.ts';
import { FINANCIALS_RESOURCES, STATEMENT_ROUTES, STATEMENTS, type Statement } from '../financials/types.ts';
import { access, listedSymbols, requireAccess, symbolList } from './common.ts';
import type { RouteContext } from './context.ts';
import { ERROR_RESPONSES } from './errors-doc.ts';
import { tableResponse } from '../http/formats/openapi.ts';
import { FormatQuery } from '../schemas.ts';

/** The statement query plus `format` (issue 26: the records as one long table in CSV, Arrow, Parquet). */
const QueryWithFormat = { ...FinancialsQuery, properties: { ...FinancialsQuery.properties, ...FormatQuery.properties } };

interface FinancialsQuerystring {
  symbols: string;
  start_date?: string;
  end_date?: string;
  latest?: 'true' | 'false';
  as_of?: string;
}

const SUMMARIES: Readonly<Record<Statement, string>> = {
  income: 'Income statements',
  balance_sheet: 'Balance sheets',
  cash_flow: 'Cash-flow statements',
  metrics: 'Financial indicators',
  shares: 'Share capital',
};

/** Stable OpenAPI operation ids: generated clients name their methods by them. */
const OPERATION_IDS: Readonly<Record<Statement, string>> = {
  income: 'getFinancialsIncome',
  balance_sheet: 'getFinancialsBalanceSheet',
  cash_flow: 'getFinancialsCashFlow',
  metrics: 'getFinancialsMetrics',
  shares: 'getFinancialsShares',
};

const DESCRIPTION = [
  'Each symbol\'s records, oldest period first (ascending `period_end`), with the field names of the TickFlow client.',
  'Units: amounts in the reporting currency\'s units (`currency`, where the vendor says it), ratios in **percent** (`roe` 15.2 is 15.2 %; an exception to the fractions used elsewhere), shares as counts.',
  '`period_months` (3, 6, 9, 12) says how many months a record\'s flow figures cover: A-share and HK reports are year-to-date (an A-share Q3 is 9), US quarters are single quarters (3).',
  '`start_date`/`end_date` bound `period_end` inclusively; `latest=true` keeps only the newest `period_end` per symbol.',
  '`as_of=YYYY-MM-DD` answers, per period, the newest version announced on or before that date (point in time, for backtests without look-ahead); records without an `announce_date` are left out under `as_of`. Without `as_of`, the newest version of each period.',
  'Symbols with no statements (unknown, or an ETF) are left out of `data` and named in `X-Missing-Symbols`; a symbol whose vendor failed is named in `X-Failed-Symbols`. A known symbol with no record in the window maps to [].',
].join(' ');

/** YYYY-MM-DD that names a real calendar day (the schema checks the pattern only). */
function calendarDate(name: string, value: string | undefined): void {
  if (value === undefined) return;
  const ms = Date.parse(`${value}T00:00:00Z`);
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    throw new AppError('INVALID_PARAMETER', `${name} must be a calendar date YYYY-MM-DD, got '${value.slice(0, 32)}'`, { details: { parameter: name } });
  }
}

export default async function financialsRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  for (const schema of FINANCIALS_SCHEMAS) app.addSchema(schema);
  for (const statement of STATEMENTS) {
    const resource = FINANCIALS_RESOURCES[statement];
    const segment = STATEMENT_ROUTES[statement];
    app.get<{ Querystring: FinancialsQuerystring }>(`/v1/financials/${segment}`, {
      config: access(listedSymbols('financials')),
      schema: {
        operationId: OPERATION_IDS[statement],
        summary: SUMMARIES[statement],
        description: DESCRIPTION,
        tags: ['financials'],
        querystring: QueryWithFormat,
        response: { 200: tableResponse(financialsResponse(statement), `financials:${statement}`), ...ERROR_RESPONSES },
      },
    }, async (request, reply) => {
      const symbols = symbolList(request.query.symbols);
      const { start_date: start, end_date: end, as_of: asOf, latest } = request.query;
      calendarDate('start_date', start);
      calendarDate('end_date', end);
      calendarDate('as_of', asOf);
      if (start !== undefined && end !== undefined && start > end) {
        throw new AppError('INVALID_TIME_RANGE', 'start_date must not be after end_date', { details: { start_date: start, end_date: end } });
      }
      requireAccess(request);
      const selection: FinancialsSelection = { start_date: start, end_date: end, as_of: asOf, latest: latest === 'true' };
      const key = `financials/${segment}|${symbols.map((r) => r.symbol).join(',')}|${start ?? ''}|${end ?? ''}|${selection.latest ? 1 : 0}|${asOf ?? ''}`;
      return ctx.responder.respond(request, reply, { key, resource, table: `financials:${statement}` }, async () => {
        const result = await ctx.service.bySymbol(resource, symbols);
        const data: Record<string, unknown> = {};
        for (const ref of symbols) {
          const series = result.items.get(ref.symbol);
          if (series !== undefined) data[ref.symbol] = selectRecords(series, selection);
        }
        return { body: { data }, missing: result.unknown, failed: result.failed, status: result.status };
      });
    });
  }
}
