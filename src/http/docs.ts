// The OpenAPI document (@fastify/swagger) and its UI at /docs. The generated document is enriched
// generically (enums for literal unions, defaults, examples, response headers) so every route
// documents itself the same way; /docs shows and pre-fills the demo key while it is enabled.
import type { FastifyInstance, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { KeyStore } from '../access/keys.ts';

export const API_VERSION = '1.0.0';

/** The documented demo key of the default config (DESIGN.md 4.7); shown only while it is enabled. */
export const DEMO_KEY = 'demo-key';

const DOCS_ASSET_CACHE = 'public, max-age=3600';

export interface DocsOptions {
  keys: KeyStore;
}

const DESCRIPTION = 'One stable /v1 API for China A-share, Hong Kong and US market data. Send the key in X-API-Key (or api_key). Errors: {code, message, error, request_id, details?}. A chart of what the API returns: [/explorer](/explorer).';

/** The demo key is enabled when the documented value authenticates as a key flagged `demo`. */
function demoKeyEnabled(keys: KeyStore): boolean {
  return keys.lookup(DEMO_KEY)?.demo === true;
}

// Runs inside swagger-ui's initializer (serialised as source text), where `ui` is the SwaggerUI
// instance; the key comes from the served document so a SIGHUP that disables it takes effect.
const PREAUTHORIZE_DEMO_KEY = new Function(`
  try {
    var spec = ui.specSelectors.specJson().toJS();
    var key = spec['x-demo-key'];
    if (typeof key === 'string' && key !== '') ui.preauthorizeApiKey('apiKeyHeader', key);
  } catch (error) {
    console.warn('demo key not pre-filled', error);
  }
`);

export async function registerDocs(app: FastifyInstance, options: DocsOptions): Promise<void> {
  // A page load fetches a dozen assets: they are keyless and must not use up a per-IP limit.
  // Marked like the ops routes so the access hook (src/access/plugin.ts) leaves them alone.
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.url.startsWith('/docs')) return;
    route.config = { ...(route.config ?? {}), public: true, rateLimit: false } as RouteOptions['config'];
    // The UI's files only change with a deploy; the page and /docs/json (demo key) stay fresh.
    const cacheControl = route.url.startsWith('/docs/static/') ? DOCS_ASSET_CACHE : 'no-cache';
    const onSend = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...onSend, async (_request, reply, payload) => {
      if (reply.statusCode < 300) reply.header('cache-control', cacheControl);
      return payload;
    }];
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Market Data Query Service', version: API_VERSION, description: DESCRIPTION },
      components: {
        securitySchemes: {
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
        },
      },
      security: [{ apiKeyHeader: [] }, { apiKeyQuery: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? json.title ?? `def-${i}`) },
    transformObject: (input) => ('openapiObject' in input ? enrichOpenapi(input.openapiObject as Json) : input.swaggerObject),
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', onComplete: PREAUTHORIZE_DEMO_KEY as () => void },
    theme: { title: 'Market Data Query Service: API docs' },
    transformSpecification: (spec) => withDemoKey(spec as Json, options.keys),
  });
}

/** /docs/json per request: the demo key named in the description and handed to the UI. */
function withDemoKey(spec: Json, keys: KeyStore): Json {
  if (!demoKeyEnabled(keys)) return spec;
  spec['x-demo-key'] = DEMO_KEY;
  spec.info = {
    ...spec.info,
    description: `${spec.info?.description ?? ''}\n\n**Demo key (local use only): \`${DEMO_KEY}\`**, already filled in under Authorize, so "Try it out" works right away.`,
  };
  return spec;
}

// ---- enrichment of the generated document --------------------------------------------------

/* The document is plain JSON here; a loose type keeps the walk readable. */
type Json = Record<string, any>;

const NOW = 1750212930000; // 2025-06-18 10:15:30 Asia/Shanghai
const DAY0 = 1750176000000; // 2025-06-18 00:00 Asia/Shanghai
const REQUEST_ID = '6f1c2a9e-5b7d-4c1e-9a3f-2d8e4b6c0a71';

/** One example value per component schema, by its $id (src/schemas.ts). */
const COMPONENT_EXAMPLES: Record<string, unknown> = {
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
  ExFactor: { timestamp: 1750608000000, ex_factor: 1.0247 },
  UniverseSummary: { id: 'CN_Stock', name: 'A股', region: 'CN', category: 'equity', symbol_count: 86 },
  UniverseDetail: { id: 'CN_ETF', name: '沪深ETF', region: 'CN', category: 'etf', symbol_count: 2, symbols: ['510300.SH', '159915.SZ'] },
};

/** Parameter examples by name: what "Try it out" pre-fills. */
const PARAM_EXAMPLES: Record<string, unknown> = {
  symbol: '600519.SH',
  symbols: '600519.SH,00700.HK,AAPL.US',
  count: 5,
  id: 'CN_Stock',
  market: 'CN',
  exchange: 'SH',
};

/** The defaults the handlers apply (DESIGN.md 4), so the dropdowns start on them. */
function paramDefault(path: string, name: string): string | undefined {
  if (name === 'adjust') return 'forward';
  if (name === 'period') return path.startsWith('/v1/klines/intraday') ? '1m' : '1d';
  return undefined;
}

const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });

const SUCCESS_HEADERS: Json = {
  'X-Cache': header('HIT (from a cache layer), MISS (fetched from the vendor now) or STALE (served past its TTL while the vendor is refreshed or failing)', { type: 'string', enum: ['HIT', 'MISS', 'STALE'] }),
  'X-Cache-Tier': header('The cache tiers that answered a hit, in first-use order (memory, redis, store)'),
  'X-Upstream': header('The adapter(s) the data came from, comma-separated (e.g. sim, tickflow)'),
  'X-Simulated': header('"true" when any of the data comes from the simulated adapter: not real market data', { type: 'string', enum: ['true'] }),
  'X-Missing-Symbols': header('Batch routes: unknown symbols left out of data, comma-separated'),
  'X-Failed-Symbols': header('Batch routes: symbols whose upstream failed, left out of data (such a response is never cached)'),
  'X-Forming-Bar': header('Single-symbol candle routes, while every vendor of the chain fails in session: the window is answered from stored closed bars with the forming bar the gateway last had (stale) or without it (absent); such an answer says X-Cache: STALE and is never cached', { type: 'string', enum: ['stale', 'absent'] }),
  'X-Forming-Bar-Stale': header('Batch candle routes: symbols answered from stored closed bars with the last known forming bar (vendors failing), comma-separated'),
  'X-Forming-Bar-Absent': header('Batch candle routes: symbols answered from stored closed bars without their forming bar (vendors failing, none known), comma-separated'),
  ETag: header('Entity tag of the body; send it back in If-None-Match to get a 304'),
  Age: header('Seconds since the oldest data in the body was fetched from the vendor', { type: 'integer' }),
};

const COMMON_HEADERS: Json = {
  'X-RateLimit-Limit': header("Requests allowed per window on the key's plan", { type: 'integer' }),
  'X-RateLimit-Remaining': header('Requests left in the current window', { type: 'integer' }),
  'X-RateLimit-Reset': header('Seconds until the window resets', { type: 'integer' }),
  'X-Request-Id': header('The request id, also in error bodies and logs'),
};

const RETRY_AFTER: Json = { 'Retry-After': header('Seconds to wait before retrying (rounded up)', { type: 'integer' }) };

/** `anyOf: [{enum:[a]}, {enum:[b]}…]` (TypeBox unions of literals) → one `enum`, drawn as a dropdown. */
export function flattenLiteralUnions(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) flattenLiteralUnions(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Json;
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union) && union.length > 0 && union.every(isStringLiteral)) {
    const values = union.flatMap((s: Json) => (s.const !== undefined ? [s.const] : s.enum));
    delete schema.anyOf;
    delete schema.oneOf;
    schema.type = 'string';
    schema.enum = values;
  }
  for (const value of Object.values(schema)) flattenLiteralUnions(value);
}

function isStringLiteral(s: unknown): boolean {
  if (s === null || typeof s !== 'object') return false;
  const schema = s as Json;
  if (typeof schema.const === 'string') return true;
  return Array.isArray(schema.enum) && schema.enum.every((v: unknown) => typeof v === 'string') && (schema.type === undefined || schema.type === 'string');
}

/** An example for a schema, composed from the component examples through objects, arrays and records. */
export function exampleFor(schema: Json | undefined, components: Json, depth = 0): unknown {
  if (schema === undefined || depth > 8) return undefined;
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').pop() as string;
    if (name in COMPONENT_EXAMPLES) return COMPONENT_EXAMPLES[name];
    return exampleFor(components[name], components, depth + 1);
  }
  if (schema.example !== undefined) return schema.example;
  if (schema.type === 'array') {
    const item = exampleFor(schema.items, components, depth + 1);
    return item === undefined ? [] : [item];
  }
  if (schema.type === 'object' || schema.properties !== undefined || schema.additionalProperties !== undefined) {
    const out: Json = {};
    for (const [name, prop] of Object.entries((schema.properties ?? {}) as Json)) {
      const value = exampleFor(prop as Json, components, depth + 1);
      if (value !== undefined) out[name] = value;
    }
    if (schema.additionalProperties !== null && typeof schema.additionalProperties === 'object') {
      const value = exampleFor(schema.additionalProperties as Json, components, depth + 1);
      if (value !== undefined) out['600519.SH'] = value;
    }
    return out;
  }
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.type === 'string') return 'string';
  if (schema.type === 'integer' || schema.type === 'number') return 0;
  if (schema.type === 'boolean') return true;
  return undefined;
}

const ERROR_EXAMPLES: Record<number, [string, string]> = {
  400: ['INVALID_SYMBOL', "'600519' is not a valid symbol; use <code>.<exchange>, e.g. 600519.SH, 00700.HK, AAPL.US"],
  401: ['MISSING_API_KEY', 'an API key is required: send it in the X-API-Key header or the api_key query parameter'],
  403: ['MARKET_NOT_PERMITTED', 'your plan does not include market HK (symbols 00700.HK)'],
  404: ['SYMBOL_NOT_FOUND', 'symbol 999999.SH not found'],
  413: ['PAYLOAD_TOO_LARGE', 'the request body is too large'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'the request body must be application/json'],
  429: ['RATE_LIMITED', 'rate limit of 60 requests exceeded; retry in 12 seconds'],
  502: ['UPSTREAM_ERROR', 'the upstream vendor failed'],
  503: ['UPSTREAM_UNAVAILABLE', 'the upstream vendor is unavailable; retry later'],
  504: ['UPSTREAM_TIMEOUT', 'the upstream vendor did not answer in time'],
};

function errorExample(code: number): Json {
  const [error, message] = ERROR_EXAMPLES[code] ?? ['NOT_FOUND', 'no route GET /v1/nope'];
  const body: Json = { code, message, error, request_id: REQUEST_ID };
  if (code === 403) body.details = { plan: 'basic', missing_markets: ['HK'], symbols: ['00700.HK'] };
  if (code === 429) body.retry_after_ms = 12000;
  return body;
}

/** Routes without a response schema (their body is built by hand). */
const UNTYPED_EXAMPLES: Record<string, unknown> = {
  '/v1/meta': {
    data: {
      service: 'market-data-query-service', version: API_VERSION, simulated: true,
      routing: { CN: ['sim'], HK: ['sim'], US: ['sim'] },
      adapters: [{ id: 'sim', label: 'sim', markets: ['CN', 'HK', 'US'] }], server_time: NOW,
    },
  },
};

function bodyExample(path: string): unknown {
  if (path === '/v1/universes/batch') return { ids: ['CN_ETF', 'HK_Stock'] };
  return { symbols: ['600519.SH', '00700.HK', 'AAPL.US'] };
}

/** Enums, defaults, parameter/body/response examples and response headers on every operation. */
function enrichOpenapi(doc: Json): Json {
  const components = (doc.components?.schemas ?? {}) as Json;
  flattenLiteralUnions(doc.paths);
  flattenLiteralUnions(components);
  for (const [path, operations] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const operation of Object.values(operations as Json) as Json[]) {
      if (operation === null || typeof operation !== 'object' || Array.isArray(operation)) continue;
      for (const param of (operation.parameters ?? []) as Json[]) {
        const fallback = paramDefault(path, param.name);
        if (fallback !== undefined && param.schema?.enum?.includes(fallback)) param.schema.default = fallback;
        if (param.example === undefined && param.name in PARAM_EXAMPLES) param.example = PARAM_EXAMPLES[param.name];
      }
      const body = operation.requestBody?.content?.['application/json'];
      if (body !== undefined && body.example === undefined) body.example = bodyExample(path);
      for (const [status, response] of Object.entries((operation.responses ?? {}) as Json) as [string, Json][]) {
        const code = Number(status);
        const headers: Json = { ...COMMON_HEADERS };
        if (code >= 200 && code < 300) Object.assign(headers, SUCCESS_HEADERS);
        if (code === 429 || code === 503) Object.assign(headers, RETRY_AFTER);
        response.headers = { ...headers, ...(response.headers ?? {}) };
        if (response.content === undefined && code >= 200 && code < 300) {
          response.content = { 'application/json': { schema: { type: 'object' }, example: UNTYPED_EXAMPLES[path] ?? { data: {} } } };
        }
        for (const media of Object.values((response.content ?? {}) as Json) as Json[]) {
          if (media.example !== undefined || media.examples !== undefined) continue;
          media.example = code >= 400 ? errorExample(code) : (exampleFor(media.schema, components) ?? {});
        }
      }
    }
  }
  return doc;
}
