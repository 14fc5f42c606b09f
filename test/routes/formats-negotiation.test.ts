// Issue 26: how a table route picks its format, and that each format is cached beside the others
// without ever being mixed up: `format` (strict) against Accept (lenient, by q-value), errors that
// stay JSON, an ETag and a 304 per format, Vary: Accept, the gzip variant of CSV, a CSV request
// after a JSON one of the same URL (and the reverse) through the fast path over a real socket and
// through the Redis response tier (real Redis, two app instances), the TickFlow client's requests
// answered byte for byte as before, and the encoders loaded only when a columnar format is asked for.
import { get as httpGet } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { tableFromIPC } from 'apache-arrow';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import { connectedClient, describeRedis, sharedUrl } from '../redis/support.ts';
import { loadedEncoders } from '../../src/http/formats/encode.ts';
import { formatFromAccept } from '../../src/http/formats/negotiate.ts';

const CSV = 'text/csv; charset=utf-8; header=present';
const ARROW = 'application/vnd.apache.arrow.stream';
const PARQUET = 'application/vnd.apache.parquet';
const JSON_TYPE = 'application/json; charset=utf-8';

let app: FastifyInstance;
let base: string;
beforeAll(async () => {
  ({ app } = await buildTestApp());
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => app.close());

/** `fast`: the fast path answered it (the app counts what it serves; both paths share request ids). */
interface Answer { status: number; headers: Record<string, string>; body: Buffer; fast: boolean }

const served = () => app.fastPathServed?.() ?? 0;

async function get(path: string, headers: Record<string, string> = {}, init: RequestInit = {}): Promise<Answer> {
  const before = served();
  const res = await fetch(`${base}${path}`, { ...init, headers: { 'x-api-key': KEYS.demo, 'accept-encoding': 'identity', ...headers } });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: Object.fromEntries(res.headers), body, fast: served() > before };
}

function raw(path: string, headers: Record<string, string>): Promise<Answer> {
  const before = served();
  return new Promise((resolve, reject) => {
    httpGet(`${base}${path}`, { headers: { 'x-api-key': KEYS.demo, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string>, body: Buffer.concat(chunks), fast: served() > before }));
    }).on('error', reject);
  });
}

const fast = (a: Answer) => a.fast;

describe('the encoders load lazily', () => {
  it('JSON and CSV answers never load apache-arrow; the first Parquet answer does (its footer carries the Arrow schema)', async () => {
    expect(loadedEncoders()).toEqual({ arrow: false });
    await get('/v1/klines?symbol=600519.SH&count=5');
    await get('/v1/klines?symbol=600519.SH&count=5&format=csv');
    expect(loadedEncoders()).toEqual({ arrow: false });
    const parquet = await get('/v1/klines?symbol=600519.SH&count=5&format=parquet');
    expect(parquet.status).toBe(200);
    expect(loadedEncoders()).toEqual({ arrow: true });
  });
});

describe('negotiation', () => {
  const URL = '/v1/klines?symbol=600519.SH&count=8';

  it.each([
    [undefined, JSON_TYPE],
    ['application/json', JSON_TYPE],
    ['*/*', JSON_TYPE],
    ['text/plain', JSON_TYPE],
    ['application/xml, text/html', JSON_TYPE],
    ['text/*', JSON_TYPE],
    ['text/csv', CSV],
    ['TEXT/CSV; charset=utf-8', CSV],
    [ARROW, ARROW],
    [PARQUET, PARQUET],
    ['text/csv;q=0.5, application/vnd.apache.arrow.stream;q=0.9', ARROW],
    ['application/json;q=0.1, text/csv', CSV],
    ['application/json, text/csv', JSON_TYPE],
    ['text/csv;q=0', JSON_TYPE],
    ['application/vnd.apache.parquet;q=0.2, */*;q=0.9', PARQUET],
  ])('Accept %s → %s', async (accept, type) => {
    const res = await get(URL, accept === undefined ? {} : { accept });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers.vary).toBe('accept, accept-encoding');
  });

  it('the parameter wins over Accept, whatever Accept says', async () => {
    expect((await get(`${URL}&format=csv`, { accept: ARROW })).headers['content-type']).toBe(CSV);
    expect((await get(`${URL}&format=json`, { accept: 'text/csv' })).headers['content-type']).toBe(JSON_TYPE);
    const arrow = await get(`${URL}&format=arrow`, { accept: 'application/json' });
    expect(arrow.headers['content-type']).toBe(ARROW);
    expect(tableFromIPC(arrow.body).numRows).toBe(8);
  });

  it('POST /v1/quotes and /v1/instruments negotiate too (format in the query, or Accept)', async () => {
    const post = (path: string, headers: Record<string, string>) => get(path, { 'content-type': 'application/json', ...headers }, { method: 'POST', body: JSON.stringify({ symbols: ['600519.SH', 'AAPL.US'] }) });
    const quotes = await post('/v1/quotes?format=csv', {});
    expect(quotes.headers['content-type']).toBe(CSV);
    expect(quotes.body.toString().split('\n')[0]).toMatch(/^symbol,region,last_price,/);
    const instruments = await post('/v1/instruments', { accept: PARQUET });
    expect(instruments.headers['content-type']).toBe(PARQUET);
    expect(instruments.body.subarray(0, 4).toString()).toBe('PAR1');
  });

  it.each([
    ['format=xml', "'xml'"],
    ['format=xlsx', "'xlsx'"],
    ['format=', "''"],
  ])('an unknown format (%s) is 400 INVALID_PARAMETER naming the four, as JSON', async (query) => {
    for (const path of [`${URL}&${query}`, `/v1/klines/batch?symbols=600519.SH&${query}`, `/v1/quotes?symbols=600519.SH&${query}`]) {
      const res = await get(path, { accept: 'text/csv' });
      expect(res.status, path).toBe(400);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
      const body = JSON.parse(res.body.toString());
      expect(body.error).toBe('INVALID_PARAMETER');
      expect(body.message).toContain('json, csv, arrow, parquet');
      expect(body.details).toMatchObject({ parameter: 'format' });
    }
    const post = await get(`/v1/quotes?${query}`, { 'content-type': 'application/json' }, { method: 'POST', body: JSON.stringify({ symbols: ['600519.SH'] }) });
    expect(post.status).toBe(400);
    expect(JSON.parse(post.body.toString()).error).toBe('INVALID_PARAMETER');
  });

  it('a repeated format keeps its first value, as every other repeated parameter does', async () => {
    // A URL of its own: the fast path learns a URL when its answer is stored.
    const first = await get('/v1/klines?symbol=600519.SH&count=9&format=csv&format=json');
    const again = await get('/v1/klines?symbol=600519.SH&count=9&format=csv&format=json');
    for (const res of [first, again]) expect(res.headers['content-type']).toBe(CSV);
    expect(fast(again)).toBe(true);
  });

  it('errors are always JSON, whatever format was asked for', async () => {
    for (const [path, headers, status, error] of [
      ['/v1/klines?symbol=999999.SH&format=csv', {}, 404, 'SYMBOL_NOT_FOUND'],
      ['/v1/klines?symbol=600519&format=parquet', {}, 400, 'INVALID_SYMBOL'],
      ['/v1/klines?symbol=600519.SH&period=2d', { accept: ARROW }, 400, 'INVALID_PERIOD'],
      ['/v1/klines?symbol=600519.SH&format=arrow', { 'x-api-key': 'wrong' }, 401, 'INVALID_API_KEY'],
      ['/v1/klines/batch?symbols=600519.SH&format=csv', { 'x-api-key': KEYS.noBatch }, 403, 'NO_BATCH_PERMISSION'],
    ] as const) {
      const res = await get(path, headers);
      expect(res.status, path).toBe(status);
      expect(res.headers['content-type'], path).toBe(JSON_TYPE);
      expect(JSON.parse(res.body.toString()).error).toBe(error);
    }
  });

  it('a format in any case is that format (format=CSV is csv)', async () => {
    const upper = await get(`${URL}&format=CSV`);
    expect(upper.status).toBe(200);
    expect(upper.headers['content-type']).toContain('text/csv');
  });

  it('routes without a table answer JSON whatever Accept says, and refuse a format parameter they do not take', async () => {
    const depth = await get('/v1/depth?symbol=600519.SH', { accept: 'text/csv' });
    expect(depth.status).toBe(200);
    expect(depth.headers['content-type']).toBe(JSON_TYPE);
    expect(depth.headers.vary).toBe('accept-encoding');
    const asked = await get('/v1/depth?symbol=600519.SH&format=csv', { accept: 'text/csv' });
    expect(asked.status).toBe(400);
    expect(JSON.parse(asked.body.toString())).toMatchObject({ error: 'UNKNOWN_PARAMETER', details: { parameter: 'format' } });
  });

  it('the OpenAPI document gives each table route one response media type per format, Vary and its paging headers', async () => {
    const doc = JSON.parse((await get('/v1/openapi.json')).body.toString());
    const routes: Record<string, string[]> = {
      '/v1/klines': ['X-Next-End-Time', 'Link'], '/v1/klines/intraday': ['X-Next-End-Time', 'Link'],
      '/v1/klines/batch': ['X-Truncated-Symbols'], '/v1/klines/intraday/batch': ['X-Truncated-Symbols'],
      '/v1/klines/ex-factors': [], '/v1/quotes': [], '/v1/instruments': [], '/v1/financials/income': [],
    };
    for (const [path, paging] of Object.entries(routes)) {
      const ok = doc.paths[path].get.responses['200'];
      expect(Object.keys(ok.content), path).toEqual(['application/json', 'text/csv', ARROW, PARQUET]);
      for (const header of ['Vary', ...paging]) expect(ok.headers[header], `${path} ${header}`).toBeDefined();
      expect(ok.content['text/csv'].schema.description).toContain('Columns: ');
      expect(doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'format').schema.enum).toEqual(['json', 'csv', 'arrow', 'parquet']);
    }
    expect(doc.paths['/v1/depth'].get.responses['200'].content['text/csv']).toBeUndefined();
  });

  it('the Accept parser: q-values, case, junk', () => {
    expect(formatFromAccept('text/csv;q=abc, application/json;q=0.5')).toBe('json');
    expect(formatFromAccept('text/csv ; q=0.7 , application/vnd.apache.arrow.stream ; q=0.7')).toBe('csv');
    expect(formatFromAccept(',,;;')).toBe('json');
    expect(formatFromAccept('application/json;q=0.4, text/csv;q=0.5')).toBe('csv');
  });
});

describe('cached per format, never mixed up', () => {
  it('each format has its own ETag; If-None-Match gets a 304 only for the same format', async () => {
    const url = '/v1/klines/batch?symbols=600519.SH,00700.HK&count=30';
    const etags = new Map<string, string>();
    for (const format of ['json', 'csv', 'arrow', 'parquet']) {
      const res = await get(`${url}&format=${format}`);
      expect(res.status).toBe(200);
      etags.set(format, res.headers.etag);
    }
    expect(new Set(etags.values()).size).toBe(4);
    for (const [format, etag] of etags) {
      // Twice: the second is the fast path's 304.
      for (let i = 0; i < 2; i++) {
        const same = await get(`${url}&format=${format}`, { 'if-none-match': etag });
        expect(same.status, format).toBe(304);
        expect(same.headers.vary).toBe('accept, accept-encoding');
        expect(same.headers.etag).toBe(etag);
      }
      // The same validator sent with another format gets that format's bytes.
      const other = format === 'csv' ? 'json' : 'csv';
      const res = await get(`${url}&format=${other}`, { 'if-none-match': etag });
      expect(res.status).toBe(200);
      expect(res.headers.etag).toBe(etags.get(other));
    }
  });

  it('CSV is gzipped for clients that accept it; Parquet (compressed inside) never is', async () => {
    const url = '/v1/klines/batch?symbols=600519.SH,00700.HK,AAPL.US&count=200';
    const plain = await get(`${url}&format=csv`);
    for (let i = 0; i < 2; i++) {
      // node:http, which leaves the body as sent (fetch would unzip it); the second is the fast path's.
      const zipped = await raw(`${url}&format=csv`, { 'accept-encoding': 'gzip' });
      expect(fast(zipped)).toBe(i === 1);
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(zipped.headers['content-type']).toBe(CSV);
      expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
      expect(zipped.body.length).toBeLessThan(plain.body.length / 2);
      expect(zipped.headers.etag).toBe(`${plain.headers.etag.slice(0, -1)}-gz"`);
    }
    const parquet = await raw(`${url}&format=parquet`, { 'accept-encoding': 'gzip' });
    expect(parquet.headers['content-encoding']).toBeUndefined();
    expect(parquet.body.subarray(0, 4).toString()).toBe('PAR1');
  });

  it('through the fast path: a CSV request after a JSON one of the same URL gets CSV, and the reverse', async () => {
    const first = '/v1/klines?symbol=00700.HK&count=12&adjust=backward';
    const json1 = await get(first);
    const json2 = await get(first);
    expect(fast(json2)).toBe(true);
    expect(json2.body.equals(json1.body)).toBe(true);
    const csv1 = await get(first, { accept: 'text/csv' });
    expect(csv1.headers['content-type']).toBe(CSV);
    expect(fast(csv1)).toBe(false);
    expect(csv1.headers['x-cache']).toBe('HIT');
    const csv2 = await get(first, { accept: 'text/csv' });
    expect(fast(csv2)).toBe(true);
    expect(csv2.headers['content-type']).toBe(CSV);
    expect(csv2.body.equals(csv1.body)).toBe(true);
    expect(csv2.headers.vary).toBe('accept, accept-encoding');
    expect(csv2.headers['x-next-end-time']).toBe(csv1.headers['x-next-end-time']);
    expect(csv2.headers.link).toBe(csv1.headers.link);
    const json3 = await get(first, { accept: 'application/json' });
    expect(fast(json3)).toBe(true);
    expect(json3.headers['content-type']).toBe(JSON_TYPE);
    expect(json3.body.equals(json1.body)).toBe(true);

    // The reverse: CSV first (by Accept), then JSON.
    const second = '/v1/klines?symbol=AAPL.US&count=12&adjust=none';
    const c1 = await get(second, { accept: 'text/csv' });
    const c2 = await get(second, { accept: 'text/csv' });
    expect(fast(c2)).toBe(true);
    expect(c2.body.equals(c1.body)).toBe(true);
    const j1 = await get(second);
    expect(fast(j1)).toBe(false);
    expect(j1.headers['content-type']).toBe(JSON_TYPE);
    expect(JSON.parse(j1.body.toString()).data.timestamp).toHaveLength(12);
    const j2 = await get(second);
    expect(fast(j2)).toBe(true);
    expect(j2.body.equals(j1.body)).toBe(true);
    // format= in the URL is its own index entry, and wins over Accept on the fast path too.
    const p1 = await get(`${second}&format=arrow`, { accept: 'text/csv' });
    const p2 = await get(`${second}&format=arrow`, { accept: 'text/csv' });
    expect(fast(p2)).toBe(true);
    expect(p2.headers['content-type']).toBe(ARROW);
    expect(p2.body.equals(p1.body)).toBe(true);
    // An unknown format never takes the fast path: the normal path's 400.
    expect((await get(`${second}&format=xml`)).status).toBe(400);
  });

  it("the TickFlow client's requests are answered exactly as before: JSON, the same bytes", async () => {
    const sdk = { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'tickflow-python-sdk/0.1.21' };
    for (const path of ['/v1/klines?symbol=600519.SH&period=1d&count=100&adjust=forward', '/v1/klines/batch?symbols=600519.SH,AAPL.US&period=1w&count=10',
      '/v1/klines/intraday?symbol=600519.SH', '/v1/quotes?symbols=600519.SH,AAPL.US', '/v1/klines/ex-factors?symbols=600519.SH', '/v1/instruments?symbols=600519.SH']) {
      const plain = await get(path);
      const client = await get(path, sdk);
      expect(client.status, path).toBe(200);
      expect(client.headers['content-type']).toBe(JSON_TYPE);
      const body = JSON.parse(client.body.toString());
      expect(Object.keys(body)).toEqual(['data']);
      expect(client.body.equals(plain.body), path).toBe(true);
    }
  });
});

describe('without a response cache (cache: false)', () => {
  it('every format is still negotiated, encoded and marked, with the paging headers', async () => {
    const { app: bare } = await buildTestApp({ cache: false });
    try {
      const url = '/v1/klines?symbol=600519.SH&count=5';
      const csv = await bare.inject({ url, headers: { 'x-api-key': KEYS.demo, accept: 'text/csv' } });
      expect(csv.headers['content-type']).toBe(CSV);
      expect(csv.headers.vary).toBe('accept, accept-encoding');
      expect(csv.headers['x-next-end-time']).toMatch(/^\d+$/);
      expect(csv.body.trim().split('\n')).toHaveLength(6);
      const arrow = await bare.inject({ url: `${url}&format=arrow`, headers: { 'x-api-key': KEYS.demo } });
      expect(tableFromIPC(arrow.rawPayload).numRows).toBe(5);
      expect((await bare.inject({ url: `${url}&format=xls`, headers: { 'x-api-key': KEYS.demo } })).statusCode).toBe(400);
    } finally {
      await bare.close();
    }
  });
});

describeRedis('through the Redis response tier (two instances, real Redis)', () => {
  const clients: Redis[] = [];
  let a: FastifyInstance;
  let b: FastifyInstance;
  let redis: Redis;
  beforeAll(async () => {
    redis = await connectedClient(sharedUrl(8), clients);
    await redis.flushdb();
    const redisOf = async () => connectedClient(sharedUrl(8), clients);
    ({ app: a } = await buildTestApp({ now: () => CN_MORNING, redis: await redisOf(), fastPath: false }));
    ({ app: b } = await buildTestApp({ now: () => CN_MORNING, redis: await redisOf(), fastPath: false }));
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    for (const c of clients) c.disconnect();
  });

  const inject = (app: FastifyInstance, url: string, accept?: string) =>
    app.inject({ url, headers: { 'x-api-key': KEYS.demo, ...(accept === undefined ? {} : { accept }) } });

  it('a CSV request on B after A stored the JSON of the same URL gets CSV, then B serves both from Redis; and the reverse', async () => {
    const url = '/v1/klines/batch?symbols=600519.SH,00700.HK&count=25&adjust=none';
    const json = await inject(a, url);
    expect(json.headers['x-cache']).toBe('MISS');
    const keys = await redis.keys('*');
    expect(keys.some((k) => k.includes('|f=json'))).toBe(true);
    const csv = await inject(b, url, 'text/csv');
    expect(csv.headers['content-type']).toBe(CSV);
    expect(csv.body.split('\n')[0]).toBe('symbol,timestamp,open,high,low,close,volume,amount,prev_close');
    expect((await redis.keys('*')).some((k) => k.includes('|f=csv'))).toBe(true);
    const jsonOnB = await inject(b, url);
    expect(jsonOnB.headers['x-cache-tier']).toBe('redis');
    expect(jsonOnB.headers['content-type']).toBe(JSON_TYPE);
    expect(jsonOnB.rawPayload.equals(json.rawPayload)).toBe(true);
    expect(jsonOnB.headers.etag).toBe(json.headers.etag);
    expect(jsonOnB.headers['x-truncated-symbols']).toBe('600519.SH,00700.HK');
    expect(jsonOnB.headers.vary).toBe('accept, accept-encoding');

    // The reverse: A asks for Parquet first; B's JSON request is built, never the Parquet bytes.
    const other = '/v1/klines?symbol=AAPL.US&count=40&period=1w';
    const parquet = await inject(a, other, PARQUET);
    expect(parquet.headers['content-type']).toBe(PARQUET);
    const jsonB = await inject(b, other);
    expect(jsonB.headers['content-type']).toBe(JSON_TYPE);
    expect(JSON.parse(jsonB.body).data.timestamp).toHaveLength(40);
    const parquetB = await inject(b, other, PARQUET);
    expect(parquetB.headers['x-cache-tier']).toBe('redis');
    expect(parquetB.headers['content-type']).toBe(PARQUET);
    expect(parquetB.rawPayload.equals(parquet.rawPayload)).toBe(true);
    // The paging headers travel through Redis with the bytes.
    expect(parquetB.headers['x-next-end-time']).toBe(parquet.headers['x-next-end-time']);
    expect(parquetB.headers.link).toBe(parquet.headers.link);
    expect(parquetB.headers.link).toContain('format=parquet');
  });
});
