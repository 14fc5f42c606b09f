// The three real vendors as the fault matrix sees them: how to point the adapter at a fake
// vendor, which resource a vendor request is for, a clean payload per resource (the msw
// fixtures), and the edits that break one quote or one candle row in the vendor's own format.
import { fixture } from '../../mocks/handlers/support.ts';
import { DEADLINE_MS } from './harness.ts';

export type FaultResource = 'quotes' | 'candles' | 'other';
export type QuoteField = 'price' | 'volume';
export type BarField = 'close' | 'volume' | 'high';

/** A value that JSON cannot carry: written into the body text as is (see `vendorText`). */
export const RAW_INFINITY = '__RAW__1e999';
export const RAW_NAN = '__RAW__NaN';

/** The body as the vendor would send it, with RAW_* markers turned into bare literals. */
export function vendorText(body: unknown): string {
  return JSON.stringify(body).replace(/"__RAW__([^"]*)"/g, '$1');
}

export interface VendorSpec {
  id: 'tickflow' | 'eastmoney' | 'yahoo';
  market: 'CN' | 'US';
  symbol: string;
  /** The fake clock: after the close of the fixtures' last session. */
  now: number;
  options(baseUrl: string): Record<string, unknown>;
  resourceOf(url: URL): FaultResource;
  clean(resource: FaultResource): unknown;
  /** A 200 whose body is the vendor's error envelope. */
  errorBody200: unknown;
  /** Quote payload edits (on a clean quotes body). */
  setQuote(body: unknown, field: QuoteField, value: unknown): unknown;
  /** No quote at all (the vendor's "nothing found"). */
  emptyQuotes(body: unknown): unknown;
  /** The quote twice, an older copy (−60 s, other price) listed after the current one; undefined: not applicable. */
  duplicateQuote?(body: unknown): unknown;
  /** Candle payload edits (on a clean candles body); `row` indexes the vendor's rows. */
  setBar(body: unknown, row: number, field: BarField, value: unknown): unknown;
  emptyBars(body: unknown): unknown;
  /** One column shorter than the others (row-text vendors: a row with too few fields). */
  unequalColumns(body: unknown): unknown;
  duplicateRow(body: unknown, row: number): unknown;
  swapRows(body: unknown, a: number, b: number): unknown;
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const cnTime = (date: string, hhmm: string) => {
  const [y, m, d] = date.split('-').map(Number);
  const [hh, mm] = hhmm.split(':').map(Number);
  return Date.UTC(y, m - 1, d, hh, mm) - 8 * 3_600_000;
};

// A vendor's deadline is its `http.timeoutMs` where the data path takes it from there (and
// upstream.deadlineMs where it does not): both are DEADLINE_MS.
const HTTP = { timeoutMs: DEADLINE_MS, retry: { maxRetries: 1, baseDelayMs: 20 }, breaker: { failureThreshold: 1_000, openMs: 1_000 }, budget: { max: 10_000, windowMs: 60_000 } };

function columns(body: Json, edit: (name: string, column: unknown[]) => unknown[]): Json {
  for (const [name, column] of Object.entries(body)) if (Array.isArray(column)) body[name] = edit(name, column);
  return body;
}

const swap = <T>(list: T[], a: number, b: number): T[] => {
  const out = [...list];
  [out[a], out[b]] = [out[b], out[a]];
  return out;
};
const repeat = <T>(list: T[], row: number): T[] => [...list.slice(0, row + 1), list[row], ...list.slice(row + 1)];

export const TICKFLOW: VendorSpec = {
  id: 'tickflow',
  market: 'CN',
  symbol: '600519.SH',
  now: cnTime('2024-06-04', '16:00'),
  options: (baseUrl) => ({ baseUrl, apiKey: 'k', http: HTTP }),
  resourceOf: (url) => (url.pathname === '/v1/quotes' ? 'quotes' : url.pathname === '/v1/klines' ? 'candles' : 'other'),
  clean(resource) {
    if (resource === 'quotes') {
      const body = fixture<Json>('tickflow', 'quotes-ok');
      return { data: body.data.filter((q: Json) => q.symbol === '600519.SH') };
    }
    if (resource === 'candles') return fixture('tickflow', 'klines-daily-ok');
    return { data: {} };
  },
  errorBody200: { code: 'INTERNAL_ERROR', message: 'upstream exploded' },
  setQuote(body, field, value) {
    (body as Json).data[0][field === 'price' ? 'last_price' : 'volume'] = value;
    return body;
  },
  emptyQuotes: () => ({ data: [] }),
  duplicateQuote(body) {
    const fresh = (body as Json).data[0];
    return { data: [fresh, { ...fresh, last_price: fresh.last_price - 5, timestamp: fresh.timestamp - 60_000 }] };
  },
  setBar(body, row, field, value) {
    (body as Json).data[field][row] = value;
    return body;
  },
  emptyBars: (body) => ({ data: columns((body as Json).data, () => []) }),
  unequalColumns(body) {
    (body as Json).data.close.pop();
    return body;
  },
  duplicateRow: (body, row) => ({ data: columns((body as Json).data, (_n, c) => repeat(c, row)) }),
  swapRows: (body, a, b) => ({ data: columns((body as Json).data, (_n, c) => swap(c, a, b)) }),
};

const EM_COLUMN: Record<BarField, number> = { close: 2, high: 3, volume: 5 };

function emRows(body: unknown, edit: (rows: string[]) => string[]): unknown {
  const b = body as Json;
  b.data.klines = edit(b.data.klines as string[]);
  return b;
}

export const EASTMONEY: VendorSpec = {
  id: 'eastmoney',
  market: 'CN',
  symbol: '600519.SH',
  now: cnTime('2024-06-04', '16:00'),
  options: (baseUrl) => ({ quoteHosts: [baseUrl], historyHosts: [baseUrl], datacenterHosts: [baseUrl], http: HTTP }),
  resourceOf: (url) => (url.pathname === '/api/qt/ulist.np/get' ? 'quotes' : url.pathname === '/api/qt/stock/kline/get' ? 'candles' : 'other'),
  clean(resource) {
    if (resource === 'quotes') {
      const body = fixture<Json>('eastmoney', 'ulist-quotes-ok');
      body.data.diff = body.data.diff.filter((q: Json) => q.f12 === '600519');
      body.data.total = body.data.diff.length;
      return body;
    }
    if (resource === 'candles') return fixture('eastmoney', 'kline-daily-600519');
    return fixture('eastmoney', 'dividends-empty');
  },
  errorBody200: { rc: 1, rt: 4, svr: 1, lt: 1, full: 1, data: { total: 0, diff: [] } },
  setQuote(body, field, value) {
    (body as Json).data.diff[0][field === 'price' ? 'f2' : 'f5'] = value;
    return body;
  },
  emptyQuotes: (body) => ({ ...(body as Json), data: null }),
  duplicateQuote(body) {
    const b = body as Json;
    const fresh = b.data.diff[0];
    b.data.diff = [fresh, { ...fresh, f2: fresh.f2 - 5, f124: fresh.f124 - 60 }];
    return b;
  },
  setBar(body, row, field, value) {
    return emRows(body, (rows) => rows.map((line, i) => {
      if (i !== row) return line;
      const cells = line.split(',');
      cells[EM_COLUMN[field]] = String(value).replace(/^__RAW__/, '');
      return cells.join(',');
    }));
  },
  emptyBars: (body) => emRows(body, () => []),
  unequalColumns: (body) => emRows(body, (rows) => rows.map((line, i) => (i === 2 ? line.split(',').slice(0, 4).join(',') : line))),
  duplicateRow: (body, row) => emRows(body, (rows) => repeat(rows, row)),
  swapRows: (body, a, b) => emRows(body, (rows) => swap(rows, a, b)),
};

function chartResult(body: unknown): Json {
  return (body as Json).chart.result[0];
}

function yahooColumns(body: unknown, edit: (c: unknown[]) => unknown[]): unknown {
  const r = chartResult(body);
  r.timestamp = edit(r.timestamp);
  columns(r.indicators.quote[0], (_n, c) => edit(c));
  if (r.indicators.adjclose) columns(r.indicators.adjclose[0], (_n, c) => edit(c));
  return body;
}

export const YAHOO: VendorSpec = {
  id: 'yahoo',
  market: 'US',
  symbol: 'AAPL.US',
  // 2024-06-03 17:00 EDT: after the close of the fixtures' last session.
  now: Date.UTC(2024, 5, 3, 21, 0),
  options: (baseUrl) => ({ baseUrl, http: HTTP }),
  resourceOf: (url) => (!url.pathname.startsWith('/v8/finance/chart/') ? 'other' : url.searchParams.has('range') ? 'quotes' : 'candles'),
  clean(resource) {
    if (resource === 'quotes') return fixture('yahoo', 'chart-latest-aapl');
    return fixture('yahoo', 'chart-daily-aapl');
  },
  errorBody200: { chart: { result: null, error: { code: 'Internal Server Error', description: 'upstream exploded' } } },
  setQuote(body, field, value) {
    const r = chartResult(body);
    if (field === 'price') {
      r.meta.regularMarketPrice = value;
      r.indicators.quote[0].close[r.indicators.quote[0].close.length - 1] = value;
    } else {
      r.meta.regularMarketVolume = value;
      r.indicators.quote[0].volume[r.indicators.quote[0].volume.length - 1] = value;
    }
    return body;
  },
  emptyQuotes: () => ({ chart: { result: [], error: null } }),
  setBar(body, row, field, value) {
    chartResult(body).indicators.quote[0][field][row] = value;
    return body;
  },
  emptyBars: (body) => yahooColumns(body, () => []),
  unequalColumns(body) {
    chartResult(body).indicators.quote[0].close.pop();
    return body;
  },
  duplicateRow: (body, row) => yahooColumns(body, (c) => repeat(c, row)),
  swapRows: (body, a, b) => yahooColumns(body, (c) => swap(c, a, b)),
};

export const VENDORS: VendorSpec[] = [TICKFLOW, EASTMONEY, YAHOO];
