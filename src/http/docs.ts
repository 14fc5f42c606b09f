// The OpenAPI document (@fastify/swagger) and its UI at /docs. The generated document is enriched
// generically (enums for literal unions, defaults, examples, response headers) so every route
// documents itself the same way; the examples are answers the service gives (docs-examples.ts).
// /docs shows and pre-fills the demo key while it is enabled. The document passes `redocly lint`
// (redocly.yaml), which the test suite runs on it.
import type { FastifyInstance, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { KeyStore } from '../access/keys.ts';
import {
  BODY_EXAMPLES, COMPONENT_EXAMPLES, errorExample, errorExamples, NOW, PARAM_EXAMPLES, RESPONSE_EXAMPLES, TABLE_KINDS,
} from './docs-examples.ts';
import { toCsv } from './formats/encode.ts';
import { tableOf } from './formats/tables.ts';

export const API_VERSION = '1.0.0';

/** The documented demo key of the default config (docs/contract.md#running-it); shown only while it is enabled. */
export const DEMO_KEY = 'demo-key';

const DOCS_ASSET_CACHE = 'public, max-age=3600';

export interface DocsOptions {
  keys: KeyStore;
}

const DESCRIPTION = 'One stable /v1 API for China A-share, Hong Kong and US market data. Send the key in X-API-Key (or Authorization: Bearer <key>, or api_key); without one, a request the free plan (if any) does not cover is 401 MISSING_API_KEY. Errors: {code, message, error, request_id, details?}. A chart of what the API returns: [/explorer](/explorer).';

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

const TAGS = [
  { name: 'quotes', description: 'Real-time quotes and five-level depth' },
  { name: 'klines', description: 'Candles (daily and longer, minute, today\'s intraday) and the ex-rights factors that adjust them' },
  { name: 'financials', description: 'Financial statements, indicators and share capital' },
  { name: 'reference', description: 'Instruments, pools, exchanges, the trading calendar and the market clock' },
  { name: 'stream', description: 'WebSocket streams of quotes and depth' },
  { name: 'access', description: 'What the API key may call' },
  { name: 'ops', description: 'Service metadata' },
];

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
      info: {
        title: 'Market Data Query Service', version: API_VERSION, description: DESCRIPTION,
        license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
      },
      // Relative: the API is where this document is served from, whatever host a deployment uses.
      servers: [{ url: '/', description: 'The server that serves this document' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <key>, the same key as X-API-Key (which wins when both are sent)' },
        },
      },
      security: [{ apiKeyHeader: [] }, { apiKeyQuery: [] }, { bearerAuth: [] }],
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

/** The defaults the handlers apply (docs/contract.md), so the dropdowns start on them. */
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

/**
 * An example for a schema, composed from the component examples through objects, arrays and
 * records; undefined where a value has no written example (never a made-up placeholder).
 */
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
    return item === undefined ? undefined : [item];
  }
  if (schema.type === 'object' || schema.properties !== undefined || schema.additionalProperties !== undefined) {
    const out: Json = {};
    const required = new Set<string>(schema.required ?? []);
    for (const [name, prop] of Object.entries((schema.properties ?? {}) as Json)) {
      const value = exampleFor(prop as Json, components, depth + 1);
      if (value !== undefined) out[name] = value;
      else if (required.has(name)) return undefined;
    }
    // Records of the data routes are keyed by symbol.
    if (schema.additionalProperties !== null && typeof schema.additionalProperties === 'object') {
      const value = exampleFor(schema.additionalProperties as Json, components, depth + 1);
      if (value === undefined) return undefined;
      out['600519.SH'] = value;
    }
    return out;
  }
  return undefined;
}

/** The WebSocket routes' schema is built by src/stream/docs.ts; their operation ids are given here. */
const STREAM_OPERATION_IDS: Record<string, string> = {
  '/v1/ws/stream': 'openStream',
  '/v1/ws/quotes': 'openQuotesStream',
};

/** Routes whose 200 body is not composed from the components. */
const OWN_EXAMPLES: Record<string, unknown> = {
  ...RESPONSE_EXAMPLES,
  '/v1/meta': {
    data: {
      service: 'market-data-query-service', version: API_VERSION, simulated: true,
      simulated_by_market: { CN: ['sim'], HK: ['sim'], US: ['sim'], CN_FUTURES: ['sim'] },
      routing: { CN: ['sim'], HK: ['sim'], US: ['sim'] },
      adapters: [{ id: 'sim', label: 'sim', markets: ['CN', 'HK', 'US', 'CN_FUTURES'] }], server_time: NOW,
    },
  },
};

/** The CSV answer to the JSON one, written by the encoder that writes the answers (binary formats get none). */
function csvExample(path: string, json: unknown): string | undefined {
  const kind = TABLE_KINDS[path];
  return kind === undefined || json === undefined ? undefined : toCsv(tableOf(kind, json)).toString('utf8');
}

/** Operation ids, enums, defaults, parameter/body/response examples and response headers on every operation. */
function enrichOpenapi(doc: Json): Json {
  const components = (doc.components?.schemas ?? {}) as Json;
  flattenLiteralUnions(doc.paths);
  flattenLiteralUnions(components);
  for (const [path, operations] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const operation of Object.values(operations as Json) as Json[]) {
      if (operation === null || typeof operation !== 'object' || Array.isArray(operation)) continue;
      if (operation.operationId === undefined && path in STREAM_OPERATION_IDS) operation.operationId = STREAM_OPERATION_IDS[path];
      for (const param of (operation.parameters ?? []) as Json[]) {
        const fallback = paramDefault(path, param.name);
        if (fallback !== undefined && param.schema?.enum?.includes(fallback)) param.schema.default = fallback;
        if (param.example === undefined && param.name in PARAM_EXAMPLES) param.example = PARAM_EXAMPLES[param.name];
      }
      const body = operation.requestBody?.content?.['application/json'];
      if (body !== undefined && body.example === undefined && path in BODY_EXAMPLES) body.example = BODY_EXAMPLES[path];
      for (const [status, response] of Object.entries((operation.responses ?? {}) as Json) as [string, Json][]) {
        const code = Number(status);
        const headers: Json = { ...COMMON_HEADERS };
        if (code >= 200 && code < 300) Object.assign(headers, SUCCESS_HEADERS);
        if (code === 429 || code === 503) Object.assign(headers, RETRY_AFTER);
        response.headers = { ...headers, ...(response.headers ?? {}) };
        const content = (response.content ?? {}) as Json;
        const json = code < 400 ? (OWN_EXAMPLES[path] ?? exampleFor(content['application/json']?.schema, components)) : undefined;
        for (const [mediaType, media] of Object.entries(content) as [string, Json][]) {
          if (media.example !== undefined || media.examples !== undefined) continue;
          const named = code >= 400 && mediaType === 'application/json' ? errorExamples(path, code) : undefined;
          if (named !== undefined) {
            media.examples = named;
            continue;
          }
          const example = code >= 400 ? errorExample(path, code)
            : mediaType === 'application/json' ? json
              : mediaType === 'text/csv' ? csvExample(path, json) : undefined;
          if (example !== undefined) media.example = example;
        }
      }
    }
  }
  return doc;
}
