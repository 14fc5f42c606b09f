// fast-check generators of hostile input: parameter values, query strings (well- and
// badly-encoded), headers, JSON and non-JSON bodies, and raw HTTP/1.1 request heads.
import fc from 'fast-check';

export const KNOWN_SYMBOLS = ['600519.SH', '000001.SZ', '430047.BJ', '00700.HK', '700.hk', 'AAPL.US', 'BRK.B.US', 'aapl.us', '999999.SH', 'ZZZZ.US'];
const ODD_STRINGS = [
  '', ' ', ',', ',,,', '.', '..', '.US', 'A.', '600519', '600519.XX', '%', '%00', '%zz', '%E0%A4%A', '\u0000', '\uFFFF', '\uD800',
  '<script>alert(1)</script>', "'; DROP TABLE x; --", '../../etc/passwd', '__proto__', 'constructor', 'toString', 'null', 'undefined',
  'NaN', 'Infinity', '-0', '1e309', '0x10', '0b101', '1e3', ' 17 ', '+5', '1.0', '9007199254740993', '-1', '0', '10000', '10001',
  '贵州茅台', '😀', 'A'.repeat(300), '600519.SH,'.repeat(40),
];

/** Any string a client might put in a parameter. */
export const anyValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...KNOWN_SYMBOLS, ...ODD_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.integer({ min: -20_000, max: 20_000 }).map(String) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }).map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
);

export const symbolList: fc.Arbitrary<string> = fc.array(fc.oneof(fc.constantFrom(...KNOWN_SYMBOLS), anyValue), { maxLength: 5 }).map((xs) => xs.join(','));

const PARAM_VALUES: Record<string, fc.Arbitrary<string>> = {
  symbol: fc.oneof(fc.constantFrom(...KNOWN_SYMBOLS), anyValue),
  symbols: symbolList,
  universes: fc.oneof(fc.constantFrom('CN_Stock', 'CN_ETF', 'HK_Stock', 'US_Stock', 'CN_Equity_A', 'NOPE', 'CN_ETF,NOPE'), anyValue),
  period: fc.oneof(fc.constantFrom('1m', '5m', '10m', '15m', '30m', '60m', '1d', '1w', '1M', '1Q', '1Y', '2d', '1D'), anyValue),
  // Small counts mostly: the sim builds real bars and this suite has a time budget.
  count: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -5, max: 300 }).map(String) }, { weight: 1, arbitrary: anyValue }),
  start_time: fc.oneof(fc.integer({ min: 1_500_000_000_000, max: 1_800_000_000_000 }).map(String), anyValue),
  end_time: fc.oneof(fc.integer({ min: 1_500_000_000_000, max: 1_800_000_000_000 }).map(String), anyValue),
  adjust: fc.oneof(fc.constantFrom('none', 'forward', 'backward', 'forward_additive', 'backward_additive', 'qfq'), anyValue),
  market: fc.oneof(fc.constantFrom('CN', 'HK', 'US', 'cn', 'XX'), anyValue),
  start: fc.oneof(fc.constantFrom('2025-01-01', '2025-13-01', '2025-02-30', '1900-01-01'), anyValue),
  end: fc.oneof(fc.constantFrom('2025-12-31', '2024-02-29', '9999-12-31'), anyValue),
  type: fc.oneof(fc.constantFrom('stock', 'etf', 'index', 'nope'), anyValue),
  api_key: fc.oneof(fc.constantFrom('demo-key', 'wrong', ''), anyValue),
};
const PARAM_NAMES = Object.keys(PARAM_VALUES);
const ODD_NAMES = ['symbols[]', 'symbol[0]', '__proto__', 'constructor', '%61pi_key', 'api_k%65y', 'SYMBOL', 'count ', '', '&', '=', 'x'.repeat(200)];

const hex = (b: number) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
/** Percent-encoding of the UTF-8 bytes (lone surrogates become U+FFFD instead of throwing). */
export const pct = (s: string): string => [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : hex(b))).join('');
/** Only what cannot travel in a request target is encoded; `%`, `&`, `=`, `+` stay raw. */
export const loose = (s: string): string => [...Buffer.from(s, 'utf8')].map((b) => (b > 0x20 && b < 0x7f && b !== 0x23 ? String.fromCharCode(b) : hex(b))).join('');

/** One query-string item, encoded properly or raw (so invalid percent-escapes get through). */
const queryItem: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...PARAM_NAMES).chain((name) => PARAM_VALUES[name].map((v) => `${name}=${pct(v)}`)),
  fc.tuple(fc.constantFrom(...PARAM_NAMES), PARAM_VALUES.symbol).map(([name, v]) => `${name}=${loose(v)}`),
  fc.tuple(fc.oneof(fc.constantFrom(...ODD_NAMES), fc.string({ maxLength: 10 })), anyValue).map(([n, v]) => `${loose(n)}=${pct(v)}`),
  fc.constantFrom('%', '%zz', '%E0%A4%A', 'count=%FF', 'symbol=%C0%AF', '==', '&&', 'symbols', 'count=1&count=2', 'symbols=600519.SH&symbols=AAPL.US'),
);

export const queryString: fc.Arbitrary<string> = fc.array(queryItem, { maxLength: 7 }).map((items) => items.join('&'));

export interface RouteSpec {
  method: 'GET' | 'POST';
  path: string;
}

/** Every route of docs/contract.md (path parameters filled by `pathParam`). */
export const ROUTES: RouteSpec[] = [
  { method: 'GET', path: '/v1/quotes' }, { method: 'POST', path: '/v1/quotes' },
  { method: 'GET', path: '/v1/klines' }, { method: 'GET', path: '/v1/klines/batch' },
  { method: 'GET', path: '/v1/klines/intraday' }, { method: 'GET', path: '/v1/klines/intraday/batch' },
  { method: 'GET', path: '/v1/klines/ex-factors' },
  { method: 'GET', path: '/v1/instruments' }, { method: 'POST', path: '/v1/instruments' },
  { method: 'GET', path: '/v1/depth' }, { method: 'GET', path: '/v1/depth/batch' },
  { method: 'GET', path: '/v1/universes' }, { method: 'GET', path: '/v1/universes/:id' }, { method: 'POST', path: '/v1/universes/batch' },
  { method: 'GET', path: '/v1/exchanges' }, { method: 'GET', path: '/v1/exchanges/:exchange/instruments' },
  { method: 'GET', path: '/v1/calendar' }, { method: 'GET', path: '/v1/market-status' },
  { method: 'GET', path: '/healthz' }, { method: 'GET', path: '/readyz' }, { method: 'GET', path: '/metrics' },
  { method: 'GET', path: '/v1/openapi.json' }, { method: 'GET', path: '/docs' },
  // Without an Upgrade these are plain GETs and must still answer inside the contract.
  { method: 'GET', path: '/v1/ws/stream' }, { method: 'GET', path: '/v1/ws/quotes' },
];

const pathParam: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('CN_Stock', 'CN_ETF', 'US_Stock', 'HK_Equity', 'NOPE', 'SH', 'SZ', 'HK', 'US', 'xx'),
  anyValue.map(pct),
  fc.constantFrom('%', '%zz', '..', '%2e%2e', '%2F', 'a%00b'),
);

export const routePath = (route: RouteSpec): fc.Arbitrary<string> =>
  route.path.includes(':') ? pathParam.map((p) => route.path.replace(/:[a-z]+/, p)) : fc.constant(route.path);

/** Request headers: the key right (mostly), wrong or absent; odd content types, ETags, encodings. */
export const headers: fc.Arbitrary<Record<string, string>> = fc.tuple(
  fc.oneof(
    { weight: 7, arbitrary: fc.constant<string | undefined>('demo-key') },
    { weight: 1, arbitrary: fc.constant<string | undefined>(undefined) },
    { weight: 2, arbitrary: fc.oneof(fc.constantFrom('wrong', '', ' demo-key', 'DEMO-KEY'), anyValue.filter((v) => /^[\t\x20-\x7e]*$/.test(v))) },
  ),
  fc.record({
    'content-type': fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', '*/*', ''),
    'if-none-match': fc.constantFrom('"abc"', '*', 'W/"x"', ''),
    'accept-encoding': fc.constantFrom('gzip', 'br', 'identity;q=0', '*', 'gzip;q=abc'),
    'x-request-id': fc.oneof(fc.constantFrom('fuzz-1', '', 'x'.repeat(300)), fc.stringMatching(/^[A-Za-z0-9._-]{0,40}$/)),
  }, { requiredKeys: [] }),
).map(([key, rest]) => (key === undefined ? rest : { 'x-api-key': key, ...rest }));

/** POST bodies: the right shapes with hostile items, any JSON, or not JSON at all. */
export const body: fc.Arbitrary<string> = fc.oneof(
  fc.record({ symbols: fc.array(anyValue, { maxLength: 6 }) }).map((b) => JSON.stringify(b)),
  fc.record({ universes: fc.array(PARAM_VALUES.universes, { maxLength: 3 }) }).map((b) => JSON.stringify(b)),
  fc.record({ ids: fc.array(pathParam, { maxLength: 4 }) }).map((b) => JSON.stringify(b)),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.constantFrom('', '{', '{"symbols": [', 'null', '[]', '{"symbols": "600519.SH"}', '{"symbols": [1, {}]}', '{"__proto__": {"x": 1}}', '{"symbols":["600519.SH"],"symbols":["AAPL.US"]}'),
  fc.string({ maxLength: 60 }),
);

// ---- raw request heads for the socket fuzz --------------------------------------------------

const token = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('GET', 'GET', 'GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH') },
  { weight: 2, arbitrary: fc.constantFrom('TRACE', 'CONNECT', 'PRI', 'get', 'G ET', 'GET\0', '', 'X'.repeat(40), 'M-SEARCH', 'PROPFIND') },
);
const target = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom(...ROUTES.map((r) => r.path.replace(/:[a-z]+/, 'CN_Stock'))), queryString).map(([p, q]) => (q ? `${p}?${q}` : p)) },
  { weight: 2, arbitrary: fc.constantFrom('*', '/', 'http://example.com/healthz', '//healthz', '/healthz#frag', '/%', '/v1/quotes?symbols=A B', '/v1/\u0000', '/\u00e9', '/v1/quotes?symbols=\r') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }).map((s) => `/${s}`) },
);
const version = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('HTTP/1.1', 'HTTP/1.0') },
  { weight: 2, arbitrary: fc.constantFrom('HTTP/2.0', 'HTTP/0.9', 'HTTP/1.1 ', 'http/1.1', 'HTTP/1', 'HTTP/1.10', '') },
);
const headerLine = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('X-API-Key: demo-key', 'X-API-Key: demo-key', 'X-API-Key: wrong', 'Accept: application/json', 'Accept-Encoding: gzip', 'If-None-Match: "x"', 'Content-Type: application/json', 'X-Request-Id: fuzz-raw', 'Content-Length: 0') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'Content-Length: 5', 'Content-Length: -1', 'Content-Length: abc', 'Content-Length: 99999999999999999999', 'Content-Length: 1, 2',
      'Transfer-Encoding: chunked', 'Transfer-Encoding: gzip, chunked', 'Transfer-Encoding: identity', 'Expect: 999-nope',
      'Connection: keep-alive', 'Connection: upgrade', 'Upgrade: websocket', 'Host: a', 'Host: a\r\nHost: b', ' folded: line',
      'Bad Header: x', ': empty', 'X-A:\u0000', 'X-B: \u00ff', 'X-C: ' + 'c'.repeat(5_000),
    ),
  },
  { weight: 1, arbitrary: fc.tuple(fc.stringMatching(/^[A-Za-z-]{1,12}$/), fc.string({ maxLength: 30 })).map(([n, v]) => `${n}: ${v.replace(/[\r\n]/g, '')}`) },
);

/**
 * A whole request as bytes: line, headers (Host usually present), blank line, maybe a body, with
 * a matching Content-Length most of the time (without one, body bytes after a `Connection: close`
 * request are a second, broken request: a fine case, but not one to spend most runs on).
 */
export const rawRequestBytes: fc.Arbitrary<string> = fc.tuple(
  token, target, version, fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  fc.array(headerLine, { maxLength: 5 }), fc.oneof(fc.constant(''), body), fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
).map(([m, t, v, host, hs, b, framed]) => {
  const length = b !== '' && framed ? [`Content-Length: ${Buffer.byteLength(b)}`] : [];
  const lines = [`${m} ${t} ${v}`.trimEnd(), ...(host ? ['Host: fuzz'] : []), ...hs, ...length, 'Connection: close'];
  return `${lines.join('\r\n')}\r\n\r\n${b}`;
});
