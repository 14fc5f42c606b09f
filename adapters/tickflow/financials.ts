// TickFlow financials (issue 25): a pass-through of a TickFlow-compatible vendor's
// /v1/financials/<statement> (tickflow-org/tickflow `resources/financials.py`), validated at the
// boundary. The answer is `{"data": {symbol: [record, …]}}` with the records of the client's
// generated_model.py: `period_end` (YYYY-MM-DD) required, `announce_date` and every figure optional
// and nullable. Each record is checked field by field:
//
//   period_end     a calendar date, else the record is dropped ('invalid_period_end')
//   announce_date  absent/null → null; a calendar date; anything else drops the record
//   figures        the statement's fields only (others are not passed on); number or null; a
//                  non-finite number drops the record ('invalid_value'); a string where a number
//                  belongs fails the payload (UPSTREAM_BAD_RESPONSE), as for every TickFlow route
//   currency, period_months   kept when the vendor sends them valid (a gateway like this one)
//
// The vendor sends the whole series when asked without dates (we never send start_date, end_date
// or latest: the route filters the cached series). A symbol left out, mapped to null or to [] has
// no statements there (absent: X-Missing-Symbols); a symbol whose every record was invalid is a
// vendor failure for that symbol (rejected). Records come out ascending by period_end.
import type { SymbolRef } from '../../src/domain.ts';
import { compareRecords } from '../../src/financials/select.ts';
import {
  FINANCIALS_RESOURCES, PERIOD_MONTHS, STATEMENT_FIELDS, STATEMENT_ROUTES, type PeriodMonths, type Statement, type StatementRecord,
} from '../../src/financials/types.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { reject, settleBatch, type PayloadReader, type RowCheck } from '../common/validate.ts';
import type { BySymbol, UpstreamRequest } from '../types.ts';
import type { TickflowEndpoint } from './requests.ts';

const ACCEPT = [400, 401, 403, 404, 429];

export function buildFinancialsRequest(ep: TickflowEndpoint, statement: Statement, symbols: string[]): UpstreamRequest {
  const u = new URL(`${ep.baseUrl.replace(/\/+$/, '')}/v1/financials/${STATEMENT_ROUTES[statement]}`);
  u.searchParams.set('symbols', symbols.join(','));
  const headers: Record<string, string> = { accept: 'application/json' };
  if (ep.apiKey) headers['x-api-key'] = ep.apiKey;
  return { url: u.toString(), method: 'GET', headers, resource: FINANCIALS_RESOURCES[statement], acceptStatus: ACCEPT };
}

/** 'YYYY-MM-DD' naming a real day. */
export function isCalendarDate(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === value;
}

/** One vendor record → ours, or the reason it is dropped. */
export function checkRecord<S extends Statement>(statement: S, raw: unknown, path: string, r: PayloadReader): StatementRecord<S> | string {
  const e = r.record(raw, path);
  if (!isCalendarDate(e.period_end)) return 'invalid_period_end';
  const announce = e.announce_date;
  if (announce !== undefined && announce !== null && !isCalendarDate(announce)) return 'invalid_announce_date';
  const out: Record<string, unknown> = { period_end: e.period_end, announce_date: announce ?? null };
  if (typeof e.currency === 'string' && /^[A-Z]{3}$/.test(e.currency)) out.currency = e.currency;
  if ((PERIOD_MONTHS as readonly unknown[]).includes(e.period_months)) out.period_months = e.period_months as PeriodMonths;
  for (const field of STATEMENT_FIELDS[statement]) {
    const value = e[field];
    if (value === undefined) continue;
    if (value === null) {
      out[field] = null;
      continue;
    }
    const n = r.value(value, `${path}.${field}`);
    if (!Number.isFinite(n)) return 'invalid_value';
    out[field] = n;
  }
  return out as StatementRecord<S>;
}

/** `data` of a /v1/financials/<statement> answer → each requested symbol's series, ascending. */
export function parseFinancials<S extends Statement>(
  statement: S, data: unknown, refs: Map<string, SymbolRef>, r: PayloadReader, check: (symbol?: string) => RowCheck,
): BySymbol<StatementRecord<S>[]> {
  const out: BySymbol<StatementRecord<S>[]> = new Map();
  let sent = 0;
  for (const [key, value] of Object.entries(r.record(data, 'data'))) {
    const canonical = parseSymbol(key)?.symbol;
    const ref = canonical === undefined ? undefined : refs.get(canonical);
    if (ref === undefined || value === null) continue;
    const items = r.array(value, `data.${key}`);
    if (items.length === 0) continue;
    sent++;
    const c = check(ref.symbol);
    const records: StatementRecord<S>[] = [];
    items.forEach((item, i) => {
      const record = checkRecord(statement, item, `data.${key}[${i}]`, r);
      if (typeof record === 'string') c.drop(record);
      else records.push(record);
    });
    c.flush();
    if (records.length === 0) {
      reject(out, ref.symbol);
      continue;
    }
    out.set(ref.symbol, records.sort(compareRecords));
  }
  settleBatch(check(), sent, out.size);
  return out;
}
