// The response cache's finished bytes (docs/architecture.md#caching): a stable ETag, If-None-Match → 304 with no
// body, and a gzip variant for bodies over 1 KB that unzips to exactly the identity bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { gunzipSync } from 'node:zlib';
import { buildCountingApp, getWithKey, simSymbols } from '../helpers/cache-app.ts';
import type { FakeAdapter } from '../helpers/fake-adapter.ts';

let app: FastifyInstance;
let adapter: FakeAdapter;
beforeAll(async () => {
  ({ app, adapter } = await buildCountingApp());
});
afterAll(async () => {
  await app.close();
});

const get = (url: string, headers: Record<string, string> = {}) => getWithKey(app, url, headers);
const LARGE = `/v1/quotes?symbols=${simSymbols('CN').slice(0, 10).join(',')}`;

describe('ETag and 304', () => {
  it('the same request twice carries the same strong ETag', async () => {
    const first = await get('/v1/quotes?symbols=600036.SH');
    const second = await get('/v1/quotes?symbols=600036.SH');
    expect(first.statusCode).toBe(200);
    expect(second.headers['x-cache']).toBe('HIT');
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(second.body).toBe(first.body);
  });

  it('If-None-Match with that ETag → 304, no body, the ETag and X-Cache still sent', async () => {
    const first = await get('/v1/quotes?symbols=601398.SH');
    const etag = String(first.headers.etag);
    const calls = adapter.calls.getQuotes;
    const res = await get('/v1/quotes?symbols=601398.SH', { 'if-none-match': etag });
    expect(res.statusCode).toBe(304);
    expect(res.rawPayload.length).toBe(0);
    expect(res.headers.etag).toBe(etag);
    expect(res.headers['x-cache']).toBe('HIT');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(adapter.calls.getQuotes).toBe(calls);
  });

  it('If-None-Match listing several tags, one of them current → 304; only stale tags → 200 with the body', async () => {
    const first = await get('/v1/quotes?symbols=601288.SH');
    const etag = String(first.headers.etag);
    expect((await get('/v1/quotes?symbols=601288.SH', { 'if-none-match': `"old1", ${etag}` })).statusCode).toBe(304);
    const other = await get('/v1/quotes?symbols=601288.SH', { 'if-none-match': '"old1", "old2"' });
    expect(other.statusCode).toBe(200);
    expect(other.body).toBe(first.body);
  });

  it('If-None-Match uses the weak comparison of RFC 9110 13.1.2: W/"tag" matches "tag"', async () => {
    const first = await get('/v1/quotes?symbols=601857.SH');
    const res = await get('/v1/quotes?symbols=601857.SH', { 'if-none-match': `W/${String(first.headers.etag)}` });
    expect(res.statusCode).toBe(304);
    expect(res.rawPayload.length).toBe(0);
  });

  it('another instance (cold cache, same data) honours the ETag: it is derived from the bytes alone', async () => {
    const reference = await get('/v1/quotes?symbols=601988.SH');
    const other = await buildCountingApp();
    try {
      const res = await getWithKey(other.app, '/v1/quotes?symbols=601988.SH', { 'if-none-match': String(reference.headers.etag) });
      expect(res.headers['x-cache']).toBe('MISS');
      expect(res.statusCode).toBe(304);
      expect(res.rawPayload.length).toBe(0);
      expect(other.adapter.calls.getQuotes).toBe(1);
    } finally {
      await other.app.close();
    }
  });
});

describe('gzip', () => {
  it('a body over 1 KB with Accept-Encoding: gzip is gzipped and unzips to the identity bytes', async () => {
    const identity = await get(LARGE);
    expect(identity.statusCode).toBe(200);
    expect(identity.rawPayload.length).toBeGreaterThan(1024);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toBe('accept, accept-encoding');

    const zipped = await get(LARGE, { 'accept-encoding': 'gzip, deflate, br' });
    expect(zipped.statusCode).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('accept, accept-encoding');
    expect(String(zipped.headers['content-type'])).toBe('application/json; charset=utf-8');
    expect(zipped.rawPayload.length).toBeLessThan(identity.rawPayload.length);
    expect(gunzipSync(zipped.rawPayload).equals(identity.rawPayload)).toBe(true);
    expect(Number(zipped.headers['content-length'])).toBe(zipped.rawPayload.length);
  });

  it('the first (MISS) response is gzipped too, not only cache hits', async () => {
    const url = `/v1/quotes?symbols=${simSymbols('CN').slice(20, 30).join(',')}`;
    const zipped = await get(url, { 'accept-encoding': 'gzip' });
    expect(zipped.headers['x-cache']).toBe('MISS');
    expect(zipped.headers['content-encoding']).toBe('gzip');
    const identity = await get(url);
    expect(gunzipSync(zipped.rawPayload).equals(identity.rawPayload)).toBe(true);
  });

  it('gzip;q=0 refuses gzip', async () => {
    const res = await get(LARGE, { 'accept-encoding': 'gzip;q=0, identity' });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.json().data).toHaveLength(10);
  });

  it('small bodies are never gzipped', async () => {
    const res = await get('/v1/quotes?symbols=600900.SH', { 'accept-encoding': 'gzip' });
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.length).toBeLessThanOrEqual(1024);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.json().data.map((q: { symbol: string }) => q.symbol)).toEqual(['600900.SH']);
  });
});
