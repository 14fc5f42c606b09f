// The examples of the OpenAPI document (src/http/docs.ts): answers of the service to the requests
// the parameter and body examples make, at 2025-06-18 10:15:30 Asia/Shanghai (CN and HK in their
// morning session, US closed). test/routes/openapi-examples.test.ts validates each against its
// schema and compares its shape with the app's own answer, so no placeholder survives here.
import type { TableKind } from './formats/tables.ts';

export const NOW = 1750212930000; // 2025-06-18 10:15:30 Asia/Shanghai
const DAY0 = 1750176000000; // 2025-06-18 00:00 Asia/Shanghai
const REQUEST_ID = '6f1c2a9e-5b7d-4c1e-9a3f-2d8e4b6c0a71';

const FINANCIALS_HEAD = { period_end: '2025-03-31', announce_date: '2025-04-15', currency: 'CNY', period_months: 3 };

/** One example value per component schema, by its $id (src/schemas.ts, src/financials/schemas.ts). */
export const COMPONENT_EXAMPLES: Record<string, unknown> = {
  Quote: {
    symbol: '600519.SH', region: 'CN', last_price: 1020, open: 1024.79, high: 1027.91, low: 1018.18, prev_close: 1022.6,
    volume: 4507000, amount: 4621147137.77, timestamp: NOW, session: 'regular',
    ext: { type: 'cn_equity', name: '贵州茅台', amplitude: 0.009515, change_amount: -2.6, change_pct: -0.002543, turnover_rate: 0.003588 },
  },
  Candles: {
    timestamp: [DAY0 - 86_400_000, DAY0], open: [993.62, 1024.79], high: [1031.22, 1027.91], low: [982.81, 1018.18],
    close: [1022.6, 1020], volume: [30205100, 4507000], amount: [30456254226.44, 4621147137.77], prev_close: [993.95, 1022.6],
  },
  Depth: {
    symbol: '600519.SH', region: 'CN', timestamp: NOW,
    bid_prices: [1019.99, 1019.98, 1019.97, 1019.96, 1019.95], bid_volumes: [46500, 49500, 54800, 23700, 33300],
    ask_prices: [1020, 1020.01, 1020.02, 1020.03, 1020.04], ask_volumes: [48200, 44400, 55300, 44500, 93900],
  },
  Instrument: {
    code: '600519', exchange: 'SH', name: '贵州茅台', region: 'CN', symbol: '600519.SH', type: 'stock',
    ext: { type: 'cn_equity', float_shares: 1256200000, limit_down: 920.34, limit_up: 1124.86, listing_date: '2001-08-27', tick_size: 0.01, total_shares: 1256200000, lot_size: 100 },
  },
  // The 2023 final dividend: 30.876 per share, ex-date 2024-06-19.
  ExFactor: { timestamp: 1718726400000, ex_factor: 1.020596, cash_dividend: 30.876, bonus_ratio: 0, rights_ratio: 0, rights_price: 0, parts_known: true },
  UniverseSummary: { id: 'CN_Stock', name: 'A股', region: 'CN', category: 'equity', symbol_count: 86 },
  UniverseDetail: { id: 'CN_ETF', name: '沪深ETF', region: 'CN', category: 'etf', symbol_count: 2, symbols: ['510300.SH', '159915.SZ'] },
  IncomeRecord: {
    ...FINANCIALS_HEAD, revenue: 124780331040, operating_cost: 103427437941, operating_profit: 7146817732, total_profit: 7216853041,
    income_tax: 1169437876, net_income: 6047415165, net_income_attributable: 6047415165, basic_eps: 4.8141, diluted_eps: 4.7674,
    rd_expense: 1116864176, selling_expense: 7637225310, admin_expense: 4746909288, financial_expense: 705076593,
    non_operating_income: 326513076, non_operating_expense: 256477767,
  },
  BalanceSheetRecord: {
    ...FINANCIALS_HEAD, total_assets: 1289237654391, total_current_assets: 169704750341, total_non_current_assets: 1119532904050,
    cash_and_equivalents: 37434099312, accounts_receivable: 108859452848, inventory: 8437558456, fixed_assets: 340518413589,
    intangible_assets: 50144166679, goodwill: 18457487812, total_liabilities: 614832853604, total_current_liabilities: 298534042850,
    total_non_current_liabilities: 316298810754, accounts_payable: 87668169014, short_term_borrowing: 210865873836,
    long_term_borrowing: 316298810754, total_equity: 674404800787, equity_attributable: 674404800787, minority_interest: 0,
    retained_earnings: 339050814248,
  },
  CashFlowRecord: {
    ...FINANCIALS_HEAD, net_operating_cash_flow: 5684486294, net_investing_cash_flow: -5245583092, net_financing_cash_flow: 2422218899,
    net_cash_change: 2861122101, capex: 5162365967,
  },
  MetricsRecord: {
    ...FINANCIALS_HEAD, eps_basic: 4.8141, eps_diluted: 4.7674, bps: 536.861, ocfps: 4.5251, roe: 0.9007, roe_diluted: 0.8967,
    roa: 0.4719, gross_margin: 17.1124, net_margin: 4.8464, debt_to_asset_ratio: 47.6896, revenue_yoy: 19.2382,
    net_income_yoy: 22.3133, inventory_turnover: 12.7879, operating_cash_to_revenue: 4.5556,
  },
  // A change of share capital carries no currency and covers no span of months.
  SharesRecord: { period_end: '2013-06-24', announce_date: '2013-06-13', period_months: null, total_shares: 1256200000, float_shares: 1256200000 },
};

/** Parameter examples by name: what "Try it out" pre-fills. */
export const PARAM_EXAMPLES: Record<string, unknown> = {
  symbol: '600519.SH',
  symbols: '600519.SH,00700.HK,AAPL.US',
  count: 5,
  id: 'CN_Stock',
  market: 'CN',
  exchange: 'SH',
  date: '2025-06-17',
};

/** Request body examples by path (the POST routes). */
export const BODY_EXAMPLES: Record<string, unknown> = {
  '/v1/universes/batch': { ids: ['CN_ETF'] },
  '/v1/quotes': { symbols: ['600519.SH', '00700.HK', 'AAPL.US'] },
  '/v1/instruments': { symbols: ['600519.SH', '00700.HK', 'AAPL.US'] },
};

// Two one-minute bars of the session, the second still forming (its label is the end of the minute).
const MINUTE_CANDLES = {
  timestamp: [NOW - 30_000, NOW + 30_000], open: [1020.5, 1019.8], high: [1020.88, 1020.1], low: [1019.62, 1019.8],
  close: [1019.8, 1020], volume: [60300, 18400], amount: [61518060, 18767080], prev_close: [1020.5, 1019.8],
};

/** 200 answers the component examples do not compose: inline schemas and routes of their own. */
export const RESPONSE_EXAMPLES: Record<string, unknown> = {
  '/v1/klines/intraday': { data: MINUTE_CANDLES },
  '/v1/klines/intraday/batch': { data: { '600519.SH': MINUTE_CANDLES } },
  // What the store holds of two days before NOW (after a request for the newest two daily bars).
  '/v1/coverage': {
    data: {
      '600519.SH': {
        adapter: 'sim', first: 1716825600000, last: DAY0 - 86_400_000, start_date: '2025-06-16', end_date: '2025-06-17',
        expected: 2, stored: 2, empty: 0, missing: [], missing_count: 0, holidays: [],
      },
    },
  },
  // The day before NOW: one row per symbol (1d), the symbol column first.
  '/v1/klines/market': {
    data: {
      symbol: ['600519.SH'], timestamp: [DAY0 - 86_400_000], open: [993.62], high: [1031.22], low: [982.81], close: [1022.6],
      volume: [30205100], amount: [30456254226.44], prev_close: [993.95],
    },
  },
  '/v1/universes/batch': { data: { CN_ETF: COMPONENT_EXAMPLES.UniverseDetail } },
  '/v1/exchanges': {
    data: [
      { exchange: 'SH', region: 'CN', count: 65 }, { exchange: 'SZ', region: 'CN', count: 41 }, { exchange: 'BJ', region: 'CN', count: 5 },
      { exchange: 'HK', region: 'HK', count: 59 }, { exchange: 'US', region: 'US', count: 54 },
    ],
  },
  '/v1/exchanges/{exchange}/instruments': {
    exchange: 'SH',
    count: 2,
    data: [
      COMPONENT_EXAMPLES.Instrument,
      {
        code: '510300', exchange: 'SH', name: '沪深300ETF华泰柏瑞', region: 'CN', symbol: '510300.SH', type: 'etf',
        ext: { type: 'cn_equity', float_shares: 90000000000, limit_down: 3.065, limit_up: 3.747, listing_date: '2012-05-28', tick_size: 0.001, total_shares: 90000000000, lot_size: 100 },
      },
    ],
  },
  '/v1/calendar': {
    market: 'HK', timezone: 'Asia/Hong_Kong', start: '2025-12-23', end: '2025-12-29', coverage: { first: '1986-01-01', last: '2027-12-31' },
    data: [
      {
        date: '2025-12-23', open: '09:30', close: '16:00', half_day: false,
        sessions: [
          { open: '09:30', close: '12:00', open_time: 1766453400000, close_time: 1766462400000 },
          { open: '13:00', close: '16:00', open_time: 1766466000000, close_time: 1766476800000 },
        ],
      },
      {
        date: '2025-12-24', open: '09:30', close: '12:00', half_day: true, note: 'Christmas Eve',
        sessions: [{ open: '09:30', close: '12:00', open_time: 1766539800000, close_time: 1766548800000 }],
      },
      {
        date: '2025-12-29', open: '09:30', close: '16:00', half_day: false,
        sessions: [
          { open: '09:30', close: '12:00', open_time: 1766971800000, close_time: 1766980800000 },
          { open: '13:00', close: '16:00', open_time: 1766984400000, close_time: 1766995200000 },
        ],
      },
    ],
    holidays: [{ date: '2025-12-25', name: 'Christmas Day' }, { date: '2025-12-26', name: 'The first weekday after Christmas Day' }],
    unknown: [],
  },
  '/v1/market-status': {
    data: [
      {
        market: 'CN', timezone: 'Asia/Shanghai', session: 'regular', is_open: true, local_time: '2025-06-18T10:15:30+08:00',
        next_open: 1750222800000, next_open_local: '2025-06-18T13:00:00+08:00', next_close: 1750217400000, next_close_local: '2025-06-18T11:30:00+08:00',
      },
      {
        market: 'HK', timezone: 'Asia/Hong_Kong', session: 'regular', is_open: true, local_time: '2025-06-18T10:15:30+08:00',
        next_open: 1750222800000, next_open_local: '2025-06-18T13:00:00+08:00', next_close: 1750219200000, next_close_local: '2025-06-18T12:00:00+08:00',
      },
      {
        market: 'US', timezone: 'America/New_York', session: 'closed', is_open: false, local_time: '2025-06-17T22:15:30-04:00',
        next_open: 1750253400000, next_open_local: '2025-06-18T09:30:00-04:00', next_close: 1750276800000, next_close_local: '2025-06-18T16:00:00-04:00',
      },
    ],
  },
  '/v1/me': {
    data: {
      key_id: 'demo', anonymous: false, plan: 'demo', markets: ['CN', 'HK', 'US'],
      features: ['quotes', 'pools', 'depth', 'klines_daily', 'klines_minute', 'intraday', 'ex_factors', 'instruments', 'financials', 'batch'],
      max_symbols: 100, max_bars: 500000,
      rate_limit: { limit: 6000, window_ms: 60000, remaining: 5999, reset_at: NOW + 60_000, shared: false },
      stream: { max_connections: 10, max_subscriptions: 200 },
      expires_at: null,
    },
  },
};

/** The table each CSV answer is built from (the route's `table` kind): the CSV examples are encoded from the JSON ones. */
export const TABLE_KINDS: Record<string, TableKind> = {
  '/v1/quotes': 'quotes',
  '/v1/klines': 'candles',
  '/v1/klines/batch': 'candles-batch',
  '/v1/klines/market': 'market-day',
  '/v1/klines/intraday': 'candles',
  '/v1/klines/intraday/batch': 'candles-batch',
  '/v1/klines/ex-factors': 'ex-factors',
  '/v1/instruments': 'instruments',
  '/v1/financials/income': 'financials:income',
  '/v1/financials/balance-sheet': 'financials:balance_sheet',
  '/v1/financials/cash-flow': 'financials:cash_flow',
  '/v1/financials/metrics': 'financials:metrics',
  '/v1/financials/shares': 'financials:shares',
};

type ErrorExample = { error: string; message: string; details?: unknown; retry_after_ms?: number };

/** One error answer per status, as the service words it. */
const ERROR_EXAMPLES: Record<number, ErrorExample> = {
  400: {
    error: 'INVALID_SYMBOL', message: "'600519' is not a valid symbol; use <code>.<exchange>, e.g. 600519.SH, 00700.HK, AAPL.US",
    details: { symbols: ['600519'] },
  },
  401: { error: 'INVALID_API_KEY', message: 'the API key is not valid' },
  403: {
    error: 'MARKET_NOT_PERMITTED', message: 'your plan does not include market HK (symbols 00700.HK)',
    details: { plan: 'basic', missing_markets: ['HK'], symbols: ['00700.HK'] },
  },
  404: { error: 'SYMBOL_NOT_FOUND', message: 'symbol 999999.SH not found', details: { symbol: '999999.SH' } },
  413: { error: 'PAYLOAD_TOO_LARGE', message: 'the request body is too large' },
  415: { error: 'UNSUPPORTED_MEDIA_TYPE', message: 'the request body must be application/json' },
  429: { error: 'RATE_LIMITED', message: 'rate limit of 60 requests per 60 s exceeded; see retry_after_ms', retry_after_ms: 12000 },
  431: {
    error: 'HEADERS_TOO_LARGE', message: 'the request line and headers must not exceed 16384 bytes',
    details: { max_header_bytes: 16384 },
  },
  // Every adapter of the chain tried, in order, with the class of its failure (details.attempts);
  // the answer's reason and details.adapter are the last one's.
  502: {
    error: 'UPSTREAM_ERROR', message: 'The upstream data source answered with an error',
    details: {
      adapter: 'eastmoney', status: 500,
      attempts: [
        { adapter: 'yahoo', cause: 'http_status', status: 503, message: 'the vendor answered HTTP 503' },
        { adapter: 'eastmoney', cause: 'http_status', status: 500, message: 'the vendor answered HTTP 500' },
      ],
    },
  },
  503: {
    error: 'UPSTREAM_UNAVAILABLE', message: 'The upstream data source is rate-limiting this service',
    details: {
      adapter: 'eastmoney', status: 429,
      attempts: [{ adapter: 'eastmoney', cause: 'rate_limited', status: 429, message: 'the vendor answered HTTP 429: it is rate-limiting this service' }],
    },
  },
  504: {
    error: 'UPSTREAM_TIMEOUT', message: 'The upstream data source did not answer in time',
    details: { adapter: 'eastmoney', attempts: [{ adapter: 'eastmoney', cause: 'timeout', message: 'The upstream data source did not answer in time' }] },
  },
};

/** The WebSocket handshake's refusals that differ from the REST ones. */
function streamErrors(path: string): Record<number, ErrorExample> {
  return {
    403: { error: 'NO_QUOTES_PERMISSION', message: 'your plan does not include feature quotes', details: { plan: 'free', missing_features: ['quotes'] } },
    426: { error: 'UPGRADE_REQUIRED', message: `${path} is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket)` },
    503: { error: 'SHUTTING_DOWN', message: 'the service is shutting down; retry on another instance' },
  };
}

/** Where a route's refusal differs from the one of its status above. */
const ROUTE_ERROR_EXAMPLES: Record<string, Record<number, ErrorExample>> = {
  '/v1/meta': {
    400: { error: 'INVALID_PARAMETER', message: 'the request is not valid HTTP/1.1', details: { parser: 'HPE_INVALID_HEADER_TOKEN' } },
  },
  '/v1/ws/stream': streamErrors('/v1/ws/stream'),
  '/v1/ws/quotes': streamErrors('/v1/ws/quotes'),
};

/**
 * Statuses with more than one answer worth showing: each is shown as a named example (OpenAPI
 * `examples`), the one of ERROR_EXAMPLES first.
 */
const MORE_ERROR_EXAMPLES: Record<number, { summary: string; first: string; more: Record<string, { summary: string; example: ErrorExample }> }> = {
  401: {
    summary: 'A key that is not valid',
    first: 'INVALID_API_KEY',
    more: {
      MISSING_API_KEY: {
        summary: 'No key sent (X-API-Key, Authorization: Bearer or api_key), and no free plan covers the request',
        example: {
          error: 'MISSING_API_KEY',
          message: 'an API key is required: send it in the X-API-Key header (or Authorization: Bearer <key>, or the api_key query parameter)',
        },
      },
    },
  },
};

function errorBodyOf(code: number, example: ErrorExample): Record<string, unknown> {
  const { error, message, details, retry_after_ms } = example;
  return {
    code, message, error, request_id: REQUEST_ID,
    ...(details === undefined ? {} : { details }),
    ...(retry_after_ms === undefined ? {} : { retry_after_ms }),
  };
}

/** The error body `path` answers with `code`; undefined when none is written down (the document test names it). */
export function errorExample(path: string, code: number): Record<string, unknown> | undefined {
  const example = ROUTE_ERROR_EXAMPLES[path]?.[code] ?? ERROR_EXAMPLES[code];
  return example === undefined ? undefined : errorBodyOf(code, example);
}

/** Named error bodies (OpenAPI `examples`) where `code` has several answers worth showing; else undefined. */
export function errorExamples(path: string, code: number): Record<string, { summary: string; value: Record<string, unknown> }> | undefined {
  const more = MORE_ERROR_EXAMPLES[code];
  const first = errorExample(path, code);
  if (more === undefined || first === undefined || ROUTE_ERROR_EXAMPLES[path]?.[code] !== undefined) return undefined;
  const out: Record<string, { summary: string; value: Record<string, unknown> }> = { [more.first]: { summary: more.summary, value: first } };
  for (const [name, { summary, example }] of Object.entries(more.more)) out[name] = { summary, value: errorBodyOf(code, example) };
  return out;
}
