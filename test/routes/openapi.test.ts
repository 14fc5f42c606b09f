// GET /v1/openapi.json: a valid OpenAPI 3 document (version 1.0.0) describing every /v1 route the
// app serves, with its parameters and responses; /docs renders it without a key or a redirect.
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Doc = { openapi: string; info: { version: string }; paths: Record<string, Record<string, any>>; components: any };

let app: FastifyInstance;
let doc: Doc;
beforeAll(async () => {
  ({ app } = await buildTestApp());
  const res = await app.inject({ url: '/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(async () => {
  await app.close();
});

/** The routes the app serves, read off Fastify's route tree: "GET /v1/universes/{id}". */
function servedRoutes(): string[] {
  const out: string[] = [];
  const stack: { depth: number; path: string }[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (.+?) \(([^)]+)\)$/.exec(line) ?? /^((?:[│ ] {3})*)[├└]── (.+)$/.exec(line);
    if (match === null) continue;
    const depth = match[1].length / 4;
    while (stack.length > 0 && stack[stack.length - 1].depth >= depth) stack.pop();
    const path = `${stack.at(-1)?.path ?? ''}${match[2]}`;
    stack.push({ depth, path });
    for (const method of (match[3] ?? '').split(', ').filter(Boolean)) {
      if (method === 'GET' || method === 'POST') out.push(`${method} ${path.replace(/:(\w+)/g, '{$1}')}`);
    }
  }
  return out;
}

/** Allowed values of a parameter schema, whether written as enum, const or a union of them. */
function allowedValues(schema: any): string[] | undefined {
  if (schema === undefined) return undefined;
  if (Array.isArray(schema.enum)) return schema.enum;
  if (schema.const !== undefined) return [schema.const];
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) return union.flatMap((s: any) => allowedValues(s) ?? []);
  return undefined;
}

const PERIODS = ['1m', '5m', '10m', '15m', '30m', '60m', '1d', '1w', '1M', '1Q', '1Y'];
const MINUTE_PERIODS = ['1m', '5m', '10m', '15m', '30m', '60m'];
const ADJUSTS = ['none', 'forward', 'backward', 'forward_additive', 'backward_additive', 'forward_exrights', 'backward_exrights'];
const ERRORS = ['400', '401', '403', '404', '429', '502', '503', '504'];

// name → required; the table of docs/contract.md.
const GET_PARAMS: Record<string, Record<string, boolean>> = {
  // Issue 26: `format` on the table routes.
  '/v1/quotes': { symbols: false, universes: false, format: false },
  '/v1/klines': { symbol: true, period: false, count: false, start_time: false, end_time: false, adjust: false, format: false },
  '/v1/klines/batch': { symbols: true, period: false, count: false, start_time: false, end_time: false, adjust: false, format: false },
  '/v1/klines/intraday': { symbol: true, period: false, count: false, format: false },
  '/v1/klines/intraday/batch': { symbols: true, period: false, count: false, format: false },
  '/v1/klines/ex-factors': { symbols: true, start_time: false, end_time: false, format: false },
  // Issue 39: what the store holds, and one day of a whole market.
  '/v1/coverage': { symbols: true, period: true, start_date: false, end_date: false },
  '/v1/klines/market': { universe: false, symbols: false, period: false, date: true, adjust: false, cursor: false, format: false },
  '/v1/instruments': { symbols: true, format: false },
  '/v1/depth': { symbol: true },
  '/v1/depth/batch': { symbols: true },
  '/v1/universes': {},
  '/v1/universes/{id}': { id: true, as_of: false },
  // Issue 25: the five financial statements.
  '/v1/financials/income': { symbols: true, start_date: false, end_date: false, latest: false, as_of: false, format: false },
  '/v1/financials/balance-sheet': { symbols: true, start_date: false, end_date: false, latest: false, as_of: false, format: false },
  '/v1/financials/cash-flow': { symbols: true, start_date: false, end_date: false, latest: false, as_of: false, format: false },
  '/v1/financials/metrics': { symbols: true, start_date: false, end_date: false, latest: false, as_of: false, format: false },
  '/v1/financials/shares': { symbols: true, start_date: false, end_date: false, latest: false, as_of: false, format: false },
};
const POST_BODIES: Record<string, Record<string, boolean>> = {
  '/v1/quotes': { symbols: false, universes: false },
  '/v1/instruments': { symbols: true },
  '/v1/universes/batch': { ids: true, as_of: false },
};

describe('the document', () => {
  it('validates as OpenAPI 3 with swagger-parser', async () => {
    expect(doc.openapi).toMatch(/^3\./);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it('info.version is 1.0.0 and the key is documented as an API key in X-API-Key', () => {
    expect(doc.info.version).toBe('1.0.0');
    const schemes = Object.values(doc.components.securitySchemes) as { type: string; in: string; name: string }[];
    expect(schemes).toContainEqual({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    // The same key in Authorization: Bearer, one of the ways any operation may be called.
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect((doc as unknown as { security: unknown[] }).security).toContainEqual({ bearerAuth: [] });
  });

  it('is served without a key, as JSON', async () => {
    const res = await app.inject({ url: '/v1/openapi.json' });
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  });
});

describe('every /v1 route the app serves is described', () => {
  it('the served /v1 routes are the docs/contract.md table (plus /v1/meta and the document itself)', () => {
    const served = servedRoutes().filter((r) => r.split(' ')[1].startsWith('/v1/')).sort();
    const expected = [
      ...Object.keys(GET_PARAMS).map((p) => `GET ${p}`),
      ...Object.keys(POST_BODIES).map((p) => `POST ${p}`),
      'GET /v1/meta',
      'GET /v1/openapi.json',
      // Issue 11: streaming, exchanges, the trading calendar and market status.
      'GET /v1/ws/stream',
      'GET /v1/ws/quotes',
      'GET /v1/exchanges',
      'GET /v1/exchanges/{exchange}/instruments',
      'GET /v1/calendar',
      'GET /v1/market-status',
      // Issue 29: what the key may call.
      'GET /v1/me',
    ].sort();
    expect(served).toEqual(expected);
  });

  it('each served GET/POST /v1 route appears in paths with that method', () => {
    const served = servedRoutes().filter((r) => r.split(' ')[1].startsWith('/v1/') && r !== 'GET /v1/openapi.json');
    for (const route of served) {
      const [method, path] = route.split(' ');
      expect(doc.paths[path]?.[method.toLowerCase()], route).toBeDefined();
    }
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual(served.sort());
  });

  it.each(Object.entries(GET_PARAMS))('GET %s documents its parameters', (path, params) => {
    const op = doc.paths[path].get;
    const got = Object.fromEntries((op.parameters ?? []).map((p: any) => [p.name, p]));
    expect(Object.keys(got).sort()).toEqual(Object.keys(params).sort());
    for (const [name, required] of Object.entries(params)) {
      expect(got[name].in, name).toBe(name === 'id' ? 'path' : 'query');
      expect(Boolean(got[name].required), `${path} ${name} required`).toBe(required);
    }
    // The store's views take the stored base periods only.
    const periods = path === '/v1/coverage' || path === '/v1/klines/market' ? ['1d', '1m'] : path.includes('intraday') ? MINUTE_PERIODS : PERIODS;
    if (got.period) expect(allowedValues(got.period.schema)?.sort()).toEqual(periods.slice().sort());
    if (got.adjust) expect(allowedValues(got.adjust.schema)?.sort()).toEqual(ADJUSTS.slice().sort());
    if (got.count) expect(got.count.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 10000 });
    for (const t of ['start_time', 'end_time']) if (got[t]) expect(got[t].schema.type).toBe('integer');
  });

  it.each(Object.entries(POST_BODIES))('POST %s documents its JSON body', (path, fields) => {
    const op = doc.paths[path].post;
    const schema = op.requestBody.content['application/json'].schema;
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(fields).sort());
    for (const [name, required] of Object.entries(fields)) {
      // Every body field is a list, but the one day a batch of universes is read as of.
      if (name === 'as_of') expect(schema.properties[name]).toMatchObject({ type: 'string' });
      else expect(schema.properties[name]).toMatchObject({ type: 'array', items: { type: 'string' } });
      expect((schema.required ?? []).includes(name), `${path} ${name}`).toBe(required);
    }
  });

  it('every data route documents 200 {data} and the error statuses of docs/contract.md#errors', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      // /v1/ws/* document the WebSocket handshake (101 and its refusals), not a JSON body.
      if (path === '/v1/meta' || path.startsWith('/v1/ws/')) continue;
      for (const [method, op] of Object.entries(ops)) {
        const statuses = Object.keys(op.responses);
        expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['200', ...ERRORS]));
        const ok = op.responses['200'].content['application/json'].schema;
        expect(ok.required, `${method} ${path}`).toContain('data');
        for (const status of ERRORS) {
          expect(op.responses[status].content['application/json'].schema.$ref, `${method} ${path} ${status}`).toBe('#/components/schemas/Error');
        }
      }
    }
  });

  it('POST routes also document what they answer to bad bodies: 413 and 415', () => {
    for (const path of Object.keys(POST_BODIES)) {
      expect(Object.keys(doc.paths[path].post.responses), path).toEqual(expect.arrayContaining(['413', '415']));
    }
  });

  it('the Error schema has the documented fields', () => {
    const error = doc.components.schemas.Error;
    expect(Object.keys(error.properties).sort()).toEqual(['code', 'details', 'error', 'message', 'request_id', 'retry_after_ms']);
    expect(error.required.sort()).toEqual(['code', 'error', 'message', 'request_id']);
  });
});

describe('/docs', () => {
  it('answers 200 HTML without a key, never a redirect', async () => {
    const res = await app.inject({ url: '/docs' });
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    expect(res.headers.location).toBeUndefined();
    expect(String(res.headers['content-type'])).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<html/i);
  });

  it('no page under /docs redirects (docs/contract.md: never redirect)', async () => {
    // A key is sent so that only the redirect is under test here.
    for (const url of ['/docs', '/docs/', '/docs/static/index.html']) {
      const res = await app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
      expect(res.headers.location, url).toBeUndefined();
      expect(res.statusCode, url).toBe(200);
    }
  });
});
