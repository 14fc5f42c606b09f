// /docs: the demo key shown and pre-filled while it is enabled, period/adjust as dropdowns,
// response headers and examples on every route, and its assets outside the per-IP limit.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADJUST_TYPES } from '../../src/domain.ts';
import { DEMO_KEY, exampleFor, flattenLiteralUnions } from '../../src/http/docs.ts';
import { browserKeyStore } from '../browser/server.ts';
import { buildTestApp } from '../helpers/app.ts';

/* eslint-disable @typescript-eslint/no-explicit-any */
let app: FastifyInstance;
let doc: any;
beforeAll(async () => {
  ({ app } = await buildTestApp({ keys: browserKeyStore() }));
  doc = (await app.inject({ url: '/v1/openapi.json' })).json();
});
afterAll(async () => {
  await app.close();
});

const PERIODS = ['1m', '5m', '10m', '15m', '30m', '60m', '1d', '1w', '1M', '1Q', '1Y'];
const MINUTE_PERIODS = ['1m', '5m', '10m', '15m', '30m', '60m'];
const ADJUSTS = [...ADJUST_TYPES];
const SUCCESS_HEADERS = ['X-Cache', 'X-Cache-Tier', 'X-Upstream', 'X-Simulated', 'X-Missing-Symbols', 'X-Failed-Symbols',
  'X-Forming-Bar', 'X-Forming-Bar-Stale', 'X-Forming-Bar-Absent', 'ETag', 'Age',
  'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id'];

/** Routes answering in several formats (issue 26) say so with Vary; candle routes carry their page cursors. */
const NEGOTIATED = ['get /v1/quotes', 'post /v1/quotes', 'get /v1/klines/ex-factors', 'get /v1/instruments', 'post /v1/instruments',
  ...['income', 'balance-sheet', 'cash-flow', 'metrics', 'shares'].map((s) => `get /v1/financials/${s}`)];
const CURSORED = ['get /v1/klines', 'get /v1/klines/intraday'];
const TRUNCATED = ['get /v1/klines/batch', 'get /v1/klines/intraday/batch'];
/** The candle routes name a limit that shortened the answer (X-Limited-By). */
const LIMITED = ['get /v1/klines', 'get /v1/klines/batch'];

function successHeaders(operation: string): string[] {
  if (LIMITED.includes(operation)) return [...baseHeaders(operation), 'X-Limited-By'];
  return baseHeaders(operation);
}

function baseHeaders(operation: string): string[] {
  // The whole-market day pages by a Link cursor of its own.
  if (operation === 'get /v1/klines/market') return [...SUCCESS_HEADERS, 'Vary', 'Link'];
  if (CURSORED.includes(operation)) return [...SUCCESS_HEADERS, 'Vary', 'X-Next-End-Time', 'Link'];
  if (TRUNCATED.includes(operation)) return [...SUCCESS_HEADERS, 'Vary', 'X-Truncated-Symbols'];
  if (NEGOTIATED.includes(operation)) return [...SUCCESS_HEADERS, 'Vary'];
  return SUCCESS_HEADERS;
}

const param = (path: string, name: string) => doc.paths[path].get.parameters.find((p: any) => p.name === name);
const operations = () => Object.entries(doc.paths as Record<string, Record<string, any>>)
  .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));

describe('the OpenAPI document', () => {
  it('renders period and adjust as one enum (a dropdown) with every value and the default preselected', () => {
    for (const path of ['/v1/klines', '/v1/klines/batch']) {
      expect(param(path, 'period').schema).toEqual({ type: 'string', enum: PERIODS, default: '1d' });
      expect(param(path, 'adjust').schema).toEqual({ type: 'string', enum: ADJUSTS, default: 'forward' });
    }
    for (const path of ['/v1/klines/intraday', '/v1/klines/intraday/batch']) {
      expect(param(path, 'period').schema).toEqual({ type: 'string', enum: MINUTE_PERIODS, default: '1m' });
    }
    expect(JSON.stringify(doc)).not.toMatch(/"anyOf":\[\{"type":"string","enum":\["[^"]*"\]\}/);
  });

  it('documents the response headers on every success response, and Retry-After on 429', () => {
    const ops = operations().filter(({ path }) => path !== '/v1/ws/stream' && path !== '/v1/ws/quotes');
    expect(ops.length).toBeGreaterThanOrEqual(14);
    for (const { path, method, op } of ops) {
      const ok = op.responses['200'];
      expect(Object.keys(ok.headers).sort(), `${method} ${path}`).toEqual([...successHeaders(`${method} ${path}`)].sort());
      expect(ok.headers['X-Cache'].schema.enum).toEqual(['HIT', 'MISS', 'STALE']);
      if (op.responses['429'] !== undefined) expect(op.responses['429'].headers['Retry-After'], `${method} ${path}`).toBeDefined();
    }
  });

  it('has an example on every response of every route, and example parameters to try', () => {
    for (const { path, method, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        for (const media of Object.values((response.content ?? {}) as Record<string, any>)) {
          // An Arrow or Parquet body is bytes: no JSON example can be one (openapi-examples.test.ts).
          if (media.schema?.format === 'binary') continue;
          // One example, or several named ones (401: a wrong key and no key at all).
          expect(media.example ?? media.examples, `${method} ${path} ${status}`).toBeDefined();
        }
      }
      if (op.requestBody !== undefined) expect(op.requestBody.content['application/json'].example, `${method} ${path}`).toBeDefined();
    }
    expect(doc.paths['/v1/quotes'].get.responses['200'].content['application/json'].example.data[0]).toMatchObject({ symbol: '600519.SH', region: 'CN' });
    expect(doc.paths['/v1/klines/batch'].get.responses['200'].content['application/json'].example.data['600519.SH'].close).toEqual([1022.6, 1020]);
    expect(doc.paths['/v1/quotes'].get.responses['403'].content['application/json'].example).toMatchObject({ code: 403, error: 'MARKET_NOT_PERMITTED' });
    expect(doc.paths['/v1/quotes'].get.responses['429'].content['application/json'].example).toMatchObject({ code: 429, retry_after_ms: 12000 });
    expect(param('/v1/quotes', 'symbols').example).toBe('600519.SH,00700.HK,AAPL.US');
    expect(param('/v1/klines', 'symbol').example).toBe('600519.SH');
    expect(param('/v1/quotes', 'universes').example).toBeUndefined();
  });

  it('the static document never names the demo key (only /docs does, per request)', () => {
    expect(doc['x-demo-key']).toBeUndefined();
    expect(JSON.stringify(doc)).not.toContain(DEMO_KEY);
  });
});

describe('/docs', () => {
  it('hands the demo key to the UI while it is enabled, and pre-fills it through preauthorizeApiKey', async () => {
    const json = (await app.inject({ url: '/docs/json' })).json();
    expect(json['x-demo-key']).toBe('demo-key');
    expect(json.info.description).toContain('**Demo key (local use only): `demo-key`**');
    const init = (await app.inject({ url: '/docs/static/swagger-initializer.js' })).body;
    expect(init).toContain("ui.preauthorizeApiKey('apiKeyHeader', key)");
    expect(init).toContain("spec['x-demo-key']");
  });

  it('says nothing of a demo key when none is enabled', async () => {
    const { app: plain } = await buildTestApp({ keys: browserKeyStore({ demo: false }) });
    try {
      const json = (await plain.inject({ url: '/docs/json' })).json();
      expect(json['x-demo-key']).toBeUndefined();
      expect(JSON.stringify(json)).not.toContain(DEMO_KEY);
    } finally {
      await plain.close();
    }
  });

  it('serves its page and assets outside the per-IP limit: 120 loads, no 429, no rate-limit headers', async () => {
    const urls = ['/docs', '/docs/static/swagger-ui.css', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js', '/docs/json', '/docs/static/favicon-32x32.png'];
    for (let i = 0; i < 120; i += 1) {
      const url = urls[i % urls.length];
      const res = await app.inject({ url, remoteAddress: '10.1.2.3' });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['x-ratelimit-limit'], url).toBeUndefined();
    }
  });

  it('serves its static assets cacheable for an hour, the page and the document revalidated', async () => {
    for (const url of ['/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-ui.css', '/docs/static/swagger-initializer.js', '/docs/static/favicon-32x32.png']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('public, max-age=3600');
    }
    expect((await app.inject({ url: '/docs' })).headers['cache-control']).toBe('no-cache');
    expect((await app.inject({ url: '/docs/json' })).headers['cache-control']).toBe('no-cache');
    const bundle = await app.inject({ url: '/docs/static/swagger-ui-bundle.js' });
    const again = await app.inject({ url: '/docs/static/swagger-ui-bundle.js', headers: { 'if-none-match': String(bundle.headers.etag) } });
    expect(again.statusCode).toBe(304);
  });
});

describe('document helpers', () => {
  it('flattenLiteralUnions turns unions of string literals into one enum and leaves other unions alone', () => {
    const schema: any = {
      properties: {
        a: { anyOf: [{ type: 'string', enum: ['x'] }, { type: 'string', enum: ['y'] }] },
        b: { anyOf: [{ const: 'p' }, { const: 'q' }] },
        c: { anyOf: [{ type: 'number' }, { type: 'null' }] },
      },
    };
    flattenLiteralUnions(schema);
    expect(schema.properties).toEqual({
      a: { type: 'string', enum: ['x', 'y'] },
      b: { type: 'string', enum: ['p', 'q'] },
      c: { anyOf: [{ type: 'number' }, { type: 'null' }] },
    });
  });

  it('exampleFor composes component examples through data, arrays and records', () => {
    const schema = { type: 'object', properties: { data: { type: 'object', additionalProperties: { type: 'array', items: { $ref: '#/components/schemas/ExFactor' } } } } };
    expect(exampleFor(schema, {})).toEqual({
      data: { '600519.SH': [{ timestamp: 1718726400000, ex_factor: 1.020596, cash_dividend: 30.876, bonus_ratio: 0, rights_ratio: 0, rights_price: 0, parts_known: true }] },
    });
  });
});
