// Every example of the OpenAPI document is a real answer of the service (issue 43 item 9): each
// validates against the schema it illustrates (ajv, formats checked, no property the schema does
// not name), each 200 example has the shape of the app's answer to the request it shows (the sim,
// at the documented instant) and that answer validates against the same schema, each CSV example
// has the columns of the app's CSV, and each error example the shape of a refusal the app really
// sends with that status and reason: over HTTP vendors failing (msw), a closing app and a socket.
import { mkdtempSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { Adapter } from '../../adapters/types.ts';
import { buildTestApp, CN_MORNING } from '../helpers/app.ts';
import { createStandInVendor, STAND_IN_URL } from '../helpers/fake-adapter.ts';
import { answer, DOC_KEYS, docKeyStore, EXAMPLE_REQUESTS, operationsOf, servedDoc, type OpenApiDoc } from '../helpers/openapi.ts';

/* eslint-disable @typescript-eslint/no-explicit-any */
let app: FastifyInstance;
let doc: OpenApiDoc;
beforeAll(async () => {
  // With a history store, so the coverage example has a store to report on.
  const history = join(mkdtempSync(join(tmpdir(), 'mdqs-openapi-examples-')), 'history.sqlite');
  ({ app } = await buildTestApp({ keys: docKeyStore(), configure: (c) => { c.history = { ...c.history, enabled: true, sqlitePath: history }; } }));
  doc = await servedDoc(app);
});
afterAll(async () => {
  await app.close();
});

// ---- validation against the document's schemas ----------------------------------------------

/** A copy of `schema` where objects name all their properties (as redocly checks examples) and refs point into `doc`. */
function closed(schema: any): any {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: any = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] = key === '$ref' && typeof value === 'string' ? value.replace(/^#/, 'doc#') : closed(value);
  }
  if (out.properties !== undefined && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

let ajv: Ajv | undefined;
function validator(schema: any): ValidateFunction {
  if (ajv === undefined) {
    ajv = new Ajv({ strict: false, allErrors: true });
    ajvFormats.default(ajv); // a CommonJS module: its default export is the plugin
    ajv.addSchema({ $id: 'doc', components: closed(doc.components) });
  }
  return ajv.compile(closed(schema));
}

function problems(schema: any, value: unknown): string[] {
  const validate = validator(schema);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}

/** Every example of the document with the schema it illustrates. */
function examples(): { where: string; schema: any; example: unknown }[] {
  const out: { where: string; schema: any; example: unknown }[] = [];
  for (const { path, method, op } of operationsOf(doc)) {
    for (const param of op.parameters ?? []) {
      if (param.example !== undefined) out.push({ where: `${method} ${path} parameter ${param.name}`, schema: param.schema, example: param.example });
    }
    for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Record<string, any>)) {
      if (media.example !== undefined) out.push({ where: `${method} ${path} body ${type}`, schema: media.schema, example: media.example });
    }
    for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
      for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, any>)) {
        if (media.example !== undefined) out.push({ where: `${method} ${path} ${status} ${type}`, schema: media.schema, example: media.example });
        for (const [name, named] of Object.entries((media.examples ?? {}) as Record<string, any>)) {
          out.push({ where: `${method} ${path} ${status} ${type} ${name}`, schema: media.schema, example: named.value });
        }
      }
    }
  }
  return out;
}

// ---- shapes ----------------------------------------------------------------------------------

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * Where `example` is not shaped like `real`: objects with the same keys, values of the same JSON
 * types, every item of an example's array shaped like some item of the answer's (an answer with
 * items is shown with items).
 */
function shapeMismatches(example: unknown, real: unknown, at = ''): string[] {
  if (kind(example) !== kind(real)) return [`${at || '/'}: example ${kind(example)}, answer ${kind(real)}`];
  if (Array.isArray(example) && Array.isArray(real)) {
    if (example.length === 0 && real.length > 0) return [`${at}: the example shows no items, the answer has ${real.length}`];
    if (example.length > 0 && real.length === 0) return [`${at}: the answer has no items to compare the example's with`];
    return example.flatMap((item, i) => {
      const tries = real.map((r) => shapeMismatches(item, r, `${at}/${i}`));
      return tries.some((t) => t.length === 0) ? [] : tries.reduce((a, b) => (b.length < a.length ? b : a));
    });
  }
  if (kind(example) === 'object') {
    const e = example as Record<string, unknown>;
    const r = real as Record<string, unknown>;
    const out: string[] = [];
    for (const key of Object.keys(e)) if (!(key in r)) out.push(`${at}/${key}: in the example, not in the answer`);
    for (const key of Object.keys(r)) if (!(key in e)) out.push(`${at}/${key}: in the answer, not in the example`);
    for (const key of Object.keys(e)) if (key in r) out.push(...shapeMismatches(e[key], r[key], `${at}/${key}`));
    return out;
  }
  return [];
}

describe('the shape check', () => {
  it('tells a placeholder, a missing field and an empty example from a real answer', () => {
    expect(shapeMismatches({ a: [{ b: 1 }] }, { a: [{ b: 2 }, { b: 3 }] })).toEqual([]);
    expect(shapeMismatches({ date: 0 }, { date: '2025-06-18' })).toHaveLength(1);
    expect(shapeMismatches({ a: 1 }, { a: 1, b: null })).toEqual(['/b: in the answer, not in the example']);
    expect(shapeMismatches({ a: [] }, { a: [1] })).toHaveLength(1);
    expect(shapeMismatches({ a: [{ x: 1 }, { y: 1 }] }, { a: [{ x: 2 }, { y: 'z' }] })).toHaveLength(1);
  });
});

// ---- the tests -------------------------------------------------------------------------------

describe('every example validates against the schema it illustrates', () => {
  it('parameters, bodies and every response of every operation', () => {
    const all = examples();
    // 27 operations with examples on parameters, bodies, 200s and errors.
    expect(all.length).toBeGreaterThan(200);
    const failed = all.flatMap(({ where, schema, example }) => problems(schema, example).map((p) => `${where}: ${p}`));
    expect(failed).toEqual([]);
  });

  it('the validation bites: a placeholder date, a field the schema does not name, a missing one', () => {
    const calendar = doc.paths['/v1/calendar'].get.responses['200'].content['application/json'];
    expect(problems(calendar.schema, { ...calendar.example, start: 'string' }).join()).toMatch(/format/);
    const quotes = doc.paths['/v1/quotes'].get.responses['200'].content['application/json'];
    expect(problems(quotes.schema, { data: [{ ...quotes.example.data[0], bid: 1 }] }).join()).toMatch(/additional/);
    const { symbol: _symbol, ...noSymbol } = quotes.example.data[0];
    expect(problems(quotes.schema, { data: [noSymbol] }).join()).toMatch(/required/);
  });
});

describe('every 200 example is shaped like the app\'s answer to the request it shows', () => {
  it('each operation with a JSON 200 example has its request here', () => {
    const documented = operationsOf(doc).filter(({ op }) => op.responses['200']?.content?.['application/json']?.example !== undefined).map(({ op }) => op.operationId);
    expect(documented.sort()).toEqual(Object.keys(EXAMPLE_REQUESTS).sort());
  });

  it.each(Object.keys(EXAMPLE_REQUESTS))('%s', async (operationId) => {
    const { op } = operationsOf(doc).find(({ op }) => op.operationId === operationId)!;
    const media = op.responses['200'].content['application/json'];
    const real = JSON.parse((await answer(app, EXAMPLE_REQUESTS[operationId])).body);
    expect(problems(media.schema, real), 'the answer against the documented schema').toEqual([]);
    expect(shapeMismatches(media.example, real)).toEqual([]);
  });

  it('each CSV example has the columns of the CSV answer', async () => {
    const tables = operationsOf(doc).filter(({ op }) => op.responses['200']?.content?.['text/csv'] !== undefined);
    expect(tables).toHaveLength(15);
    for (const { op } of tables) {
      const example = op.responses['200'].content['text/csv'].example as string;
      const real = await answer(app, EXAMPLE_REQUESTS[op.operationId], { accept: 'text/csv' });
      expect(real.contentType, op.operationId).toMatch(/^text\/csv/);
      const [header, ...rows] = example.trimEnd().split('\n');
      expect(header, op.operationId).toBe(real.body.split('\n')[0]);
      expect(rows.length, op.operationId).toBeGreaterThan(0);
      for (const row of rows) expect(row.split(',').length, `${op.operationId}: ${row}`).toBe(header.split(',').length);
    }
  });

  it('binary answers (Arrow, Parquet) carry no made-up example', () => {
    for (const { op } of operationsOf(doc)) {
      for (const [type, media] of Object.entries((op.responses['200']?.content ?? {}) as Record<string, any>)) {
        if (media.schema?.format === 'binary') expect(media.example, `${op.operationId} ${type}`).toBeUndefined();
      }
    }
  });
});

// ---- error examples against real refusals ---------------------------------------------------

const vendor = setupServer();

/** The answer to a CN quote when its one HTTP vendor (msw) answers `respond`: a fresh app, no breaker or pause left over. */
async function vendorFailure(respond: () => Response | Promise<Response>): Promise<unknown> {
  vendor.use(http.get(STAND_IN_URL, respond));
  const now = () => CN_MORNING;
  const standIn = createStandInVendor({ now, retry: { maxRetries: 0, baseDelayMs: 5 } });
  const adapters = new Map<string, Adapter>([['stand-in', standIn.adapter], ['sim', createSimAdapter({}, { now })]]);
  const { app: failing } = await buildTestApp({ now, adapters, keys: docKeyStore(), configure: (c) => { c.routing.markets.CN = ['stand-in']; } });
  try {
    return (await failing.inject({ url: '/v1/quotes?symbols=600519.SH', headers: { 'x-api-key': DOC_KEYS.demo } })).json();
  } finally {
    vendor.resetHandlers();
    await failing.close();
    await standIn.client.close();
  }
}

/** What a socket gets back for raw bytes sent to the listening app. */
async function rawAnswer(listening: FastifyInstance, bytes: string): Promise<unknown> {
  const { port } = listening.server.address() as AddressInfo;
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    let data = '';
    socket.on('data', (chunk) => { data += chunk; });
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
}

const inject = async (options: InjectOptions, key: string | undefined = DOC_KEYS.demo) =>
  (await app.inject({ ...options, headers: { ...(key === undefined ? {} : { 'x-api-key': key }), ...(options.headers ?? {}) } })).json();

/** Per reason, a request the app refuses with it (`path`: the documented route whose example it is). */
const REFUSALS: Record<string, (path: string) => Promise<unknown>> = {
  INVALID_SYMBOL: () => inject({ url: '/v1/klines?symbol=600519' }),
  INVALID_API_KEY: (path) => inject({ url: path.startsWith('/v1/ws/') ? path : '/v1/quotes?symbols=600519.SH' }, 'not-a-key'),
  // No key at all, and the keys file names no free plan.
  MISSING_API_KEY: async (path) => (await app.inject({ url: path.startsWith('/v1/ws/') ? path : '/v1/quotes?symbols=600519.SH' })).json(),
  MARKET_NOT_PERMITTED: () => inject({ url: '/v1/quotes?symbols=00700.HK' }, DOC_KEYS.basic),
  NO_QUOTES_PERMISSION: (path) => inject({ url: path }, DOC_KEYS.free),
  SYMBOL_NOT_FOUND: () => inject({ url: '/v1/klines?symbol=999999.SH' }),
  PAYLOAD_TOO_LARGE: () => inject({ method: 'POST', url: '/v1/quotes', payload: { symbols: new Array(300_000).fill('600519.SH') } }),
  UNSUPPORTED_MEDIA_TYPE: () => inject({ method: 'POST', url: '/v1/quotes', headers: { 'content-type': 'application/xml' }, payload: '<symbols/>' }),
  UPGRADE_REQUIRED: (path) => inject({ url: path }),
  RATE_LIMITED: async () => {
    await inject({ url: '/v1/quotes?symbols=600519.SH' }, DOC_KEYS.tiny);
    return inject({ url: '/v1/quotes?symbols=600519.SH' }, DOC_KEYS.tiny);
  },
  SHUTTING_DOWN: async (path) => {
    const { app: closing } = await buildTestApp({ keys: docKeyStore() });
    try {
      (closing as FastifyInstance & { markClosing(): void }).markClosing();
      return (await closing.inject({ url: path, headers: { 'x-api-key': DOC_KEYS.demo } })).json();
    } finally {
      await closing.close();
    }
  },
  UPSTREAM_ERROR: () => vendorFailure(() => new HttpResponse('down', { status: 500 })),
  UPSTREAM_UNAVAILABLE: () => vendorFailure(() => new HttpResponse('slow down', { status: 429, headers: { 'retry-after': '7' } })),
  UPSTREAM_TIMEOUT: () => vendorFailure(async () => {
    await delay('infinite');
    return new HttpResponse(null);
  }),
  // Refused by node's HTTP parser before routing: on a real socket.
  INVALID_PARAMETER: async (path) => {
    const { app: listening } = await buildTestApp({ keys: docKeyStore() });
    try {
      await listening.listen({ port: 0, host: '127.0.0.1' });
      return await rawAnswer(listening, `GET ${path} HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n`);
    } finally {
      await listening.close();
    }
  },
  HEADERS_TOO_LARGE: async (path) => {
    const { app: listening } = await buildTestApp({ keys: docKeyStore() });
    try {
      await listening.listen({ port: 0, host: '127.0.0.1' });
      return await rawAnswer(listening, `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Long: ${'a'.repeat(20_000)}\r\n\r\n`);
    } finally {
      await listening.close();
    }
  },
};

describe('every error example is a refusal the app sends', () => {
  beforeAll(() => vendor.listen({ onUnhandledRequest: 'error' }));
  afterAll(() => vendor.close());

  /** Each distinct error example, with the first route that documents it. */
  function errorExamples(): { path: string; status: string; example: any }[] {
    const seen = new Map<string, { path: string; status: string; example: any }>();
    for (const { path, op } of operationsOf(doc)) {
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        const media = response.content?.['application/json'];
        const all = [media?.example, ...Object.values((media?.examples ?? {}) as Record<string, any>).map((named) => named.value)];
        for (const example of all) {
          if (Number(status) < 400 || example === undefined) continue;
          const key = `${status} ${JSON.stringify(example)}`;
          if (!seen.has(key)) seen.set(key, { path, status, example });
        }
      }
    }
    return [...seen.values()];
  }

  it('covers every status the document refuses with', () => {
    const statuses = new Set(errorExamples().map((e) => e.status));
    expect([...statuses].sort()).toEqual(['400', '401', '403', '404', '413', '415', '426', '429', '431', '502', '503', '504']);
  });

  it('a 401 shows both a key that is not valid and no key at all', () => {
    const media = doc.paths['/v1/quotes'].get.responses['401'].content['application/json'];
    expect(Object.values(media.examples as Record<string, any>).map((named) => named.value.error)).toEqual(['INVALID_API_KEY', 'MISSING_API_KEY']);
  });

  it('a failure after vendors were tried shows every adapter with its cause (details.attempts)', () => {
    for (const status of ['502', '503', '504']) {
      const example = doc.paths['/v1/quotes'].get.responses[status].content['application/json'].example;
      expect(example.details.attempts.length, status).toBeGreaterThan(0);
      expect(example.details.attempts.at(-1).adapter, status).toBe(example.details.adapter);
    }
  });

  it('each one, against a real refusal with the same status and reason', { timeout: 60_000 }, async () => {
    const failed: string[] = [];
    for (const { path, status, example } of errorExamples()) {
      const refuse = REFUSALS[example.error];
      if (refuse === undefined) {
        failed.push(`${path} ${status} ${example.error}: no request here makes the app refuse with it`);
        continue;
      }
      const real = (await refuse(path)) as Record<string, unknown>;
      const label = `${path} ${status} ${example.error}`;
      if (real.code !== Number(status) || real.error !== example.error || example.code !== Number(status)) {
        failed.push(`${label}: the app answered ${String(real.code)} ${String(real.error)}`);
        continue;
      }
      failed.push(...shapeMismatches(example, real).map((m) => `${label}: ${m}`));
    }
    expect(failed).toEqual([]);
  });
});
