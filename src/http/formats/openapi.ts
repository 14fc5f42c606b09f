// The OpenAPI side of the formats (issue 26): a table route's 200 response with one media type per
// format (the JSON schema, then CSV, Arrow IPC stream and Parquet with the table's columns), and
// the paging headers of the candle routes.
import type { TSchema } from 'typebox';
import { FORMATS, MEDIA_TYPE } from './negotiate.ts';
import { columnsOf, type ColumnType, type TableKind } from './tables.ts';

const TYPE_TEXT: Record<ColumnType, string> = {
  timestamp: 'timestamp[ms, UTC] (CSV: epoch ms)',
  float64: 'float64',
  int64: 'int64',
  symbol: 'string, dictionary-encoded',
  utf8: 'string',
  bool: 'bool',
  date: 'date32 (CSV: YYYY-MM-DD)',
};

const LONG_FORM: Partial<Record<TableKind, string>> = {
  'candles-batch': ' Long form: one row per symbol and bar, symbols in request order.',
  'market-day': ' Long form: one row per symbol and bar, symbols in universe (or request) order.',
  'ex-factors': ' Long form: one row per symbol and event.',
};

/** Columns a table adds when it holds China futures (docs/futures.md). */
const FUTURES_CANDLES = ' With a futures contract: open_interest (int64), settlement_price (float64) follow.';
const FUTURES_TEXT: Partial<Record<TableKind, string>> = {
  candles: FUTURES_CANDLES,
  'candles-batch': FUTURES_CANDLES,
  quotes: ' With a futures contract: ext.open_interest (int64), ext.settlement_price, ext.prev_settlement_price (float64) follow.',
  instruments: ' With a futures contract: ext.multiplier (float64), ext.last_trade_date (date32), ext.product (dictionary), ext.main_contract (bool) follow.',
};

function columnsText(kind: TableKind): string {
  const columns = columnsOf(kind).map((c) => `${c.name} (${TYPE_TEXT[c.type]})`).join(', ');
  const financial = kind.startsWith('financials:') ? ' Long form: one row per symbol and record.' : '';
  const futures = FUTURES_TEXT[kind] ?? '';
  return `Columns: ${columns}.${LONG_FORM[kind] ?? financial}${futures} Empty cells (CSV) and nulls (Arrow, Parquet) where JSON has null or omits the field.`;
}

/** The paging headers (docs/formats.md#paging). */
export const NEXT_PAGE_HEADERS = {
  'X-Next-End-Time': {
    type: 'integer',
    description: 'Older bars exist before the first bar of this answer inside [start_time, end_time] (no start_time: anywhere in the history): the end_time (epoch ms, inclusive) of the next, older page. Absent when the answer reaches the start of the range or of the history.',
  },
  Link: {
    type: 'string',
    description: 'With X-Next-End-Time: `<url of the next, older page>; rel="next"` (RFC 8288), the same request with end_time set to the cursor.',
  },
};

export const TRUNCATED_HEADERS = {
  'X-Truncated-Symbols': {
    type: 'string',
    description: 'Symbols, comma-separated, whose bars were cut by count: older bars exist in the range. Page each through the single-symbol route (its X-Next-End-Time).',
  },
};

const VARY = { Vary: { type: 'string', description: 'Accept, Accept-Encoding: the format is negotiated by Accept too' } };

/** A table route's 200 response: JSON (`json`) plus CSV, Arrow IPC stream and Parquet. */
export function tableResponse(json: TSchema, kind: TableKind, headers: Record<string, unknown> = {}): Record<string, unknown> {
  const text = columnsText(kind);
  const content: Record<string, unknown> = {};
  for (const format of FORMATS) {
    const media = MEDIA_TYPE[format].split(';')[0];
    if (format === 'json') content[media] = { schema: json };
    else if (format === 'csv') content[media] = { schema: { type: 'string', description: `UTF-8, a header row of the column names, then the rows; RFC 4180 quoting, \\n line ends. ${text}` } };
    else if (format === 'arrow') content[media] = { schema: { type: 'string', format: 'binary', description: `Apache Arrow IPC stream: one record batch. ${text}` } };
    else content[media] = { schema: { type: 'string', format: 'binary', description: `Apache Parquet file (ZSTD). ${text}` } };
  }
  return {
    description: 'The answer in the negotiated format: `format` (json, csv, arrow, parquet) or the Accept header (the parameter wins; anything else, */* or text/plain gets JSON). Errors are always JSON.',
    headers: { ...VARY, ...headers },
    content,
  };
}
