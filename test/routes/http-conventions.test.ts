// Conventions every route shares (docs/contract.md): a GET with Content-Type: application/json
// and no body works, unknown query parameters are refused (the cache buster _ and api_key are known everywhere), repeated list keys join, X-RateLimit-*
// on success, X-Request-Id echoed, the operational routes need no key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

const GET_ROUTES = [
  '/v1/quotes?symbols=600519.SH,00700.HK',
  '/v1/quotes?universes=CN_ETF',
  '/v1/klines?symbol=600519.SH&period=1d&count=5',
  '/v1/klines/batch?symbols=600519.SH,AAPL.US&count=3',
  '/v1/klines/intraday?symbol=600519.SH',
  '/v1/klines/intraday/batch?symbols=600519.SH,00700.HK&count=3',
  '/v1/klines/ex-factors?symbols=600519.SH,AAPL.US',
  '/v1/instruments?symbols=600519.SH,BRK.B.US',
  '/v1/depth?symbol=600519.SH',
  '/v1/depth/batch?symbols=600519.SH,00700.HK',
  '/v1/universes',
  '/v1/universes/CN_Equity_A',
];
const OPS_ROUTES = ['/healthz', '/readyz', '/v1/meta', '/v1/openapi.json'];

const withParam = (url: string, extra: string) => `${url}${url.includes('?') ? '&' : '?'}${extra}`;
const key = { 'x-api-key': KEYS.demo };

describe('a GET carrying Content-Type: application/json and no body', () => {
  it.each(GET_ROUTES)('%s answers 200 with the same body as without the header', async (url) => {
    const plain = await app.inject({ url, headers: key });
    const res = await app.inject({ url, headers: { ...key, 'content-type': 'application/json' } });
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    expect(plain.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['data']);
    expect(body).toEqual(plain.json());
  });

  it.each(OPS_ROUTES)('%s (no key) answers 200', async (url) => {
    const res = await app.inject({ url, headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(200);
    expect(() => res.json()).not.toThrow();
  });

  it('also with an explicit Content-Length: 0', async () => {
    const res = await app.inject({ url: GET_ROUTES[0], headers: { ...key, 'content-type': 'application/json', 'content-length': '0' } });
    expect(res.statusCode).toBe(200);
  });
});

describe('unknown query parameters are refused, naming the parameter; the cache buster _ is known everywhere', () => {
  it.each(GET_ROUTES)('%s', async (url) => {
    const plain = await app.inject({ url, headers: key });
    const busted = await app.inject({ url: withParam(url, '_=1718000000000'), headers: key });
    expect(busted.statusCode, busted.body.slice(0, 200)).toBe(200);
    expect(busted.json()).toEqual(plain.json());
    const res = await app.inject({ url: withParam(url, 'foo=bar&_=1718000000000'), headers: key });
    expect(res.statusCode, res.body.slice(0, 200)).toBe(400);
    expect(res.json()).toMatchObject({ error: 'UNKNOWN_PARAMETER', details: { parameter: 'foo' } });
  });
});

describe('repeated list keys mean one comma-separated list', () => {
  it.each([
    ['/v1/quotes?symbols=600519.SH&symbols=00700.HK,AAPL.US', '/v1/quotes?symbols=600519.SH,00700.HK,AAPL.US'],
    ['/v1/quotes?universes=CN_ETF&universes=HK_Stock', '/v1/quotes?universes=CN_ETF,HK_Stock'],
    ['/v1/klines/batch?symbols=600519.SH&symbols=AAPL.US&count=2', '/v1/klines/batch?symbols=600519.SH,AAPL.US&count=2'],
    ['/v1/klines/intraday/batch?symbols=600519.SH&symbols=00700.HK&count=2', '/v1/klines/intraday/batch?symbols=600519.SH,00700.HK&count=2'],
    ['/v1/klines/ex-factors?symbols=600519.SH&symbols=AAPL.US', '/v1/klines/ex-factors?symbols=600519.SH,AAPL.US'],
    ['/v1/instruments?symbols=600519.SH&symbols=BRK.B.US', '/v1/instruments?symbols=600519.SH,BRK.B.US'],
    ['/v1/depth/batch?symbols=600519.SH&symbols=00700.HK', '/v1/depth/batch?symbols=600519.SH,00700.HK'],
  ])('%s', async (repeated, joined) => {
    const a = await app.inject({ url: repeated, headers: key });
    const b = await app.inject({ url: joined, headers: key });
    expect(a.statusCode, a.body.slice(0, 200)).toBe(200);
    expect(a.json()).toEqual(b.json());
    const data = a.json().data;
    expect(Array.isArray(data) ? data.length : Object.keys(data).length).toBeGreaterThanOrEqual(2);
  });
});

describe('X-RateLimit-* on success responses', () => {
  it('every data route, GET and POST, counts down one bucket per key', async () => {
    const { app: fresh } = await buildTestApp();
    try {
      const requests = [
        ...GET_ROUTES.map((url) => ({ method: 'GET' as const, url })),
        { method: 'POST' as const, url: '/v1/quotes', payload: { symbols: ['600519.SH'] } },
        { method: 'POST' as const, url: '/v1/instruments', payload: { symbols: ['600519.SH'] } },
        { method: 'POST' as const, url: '/v1/universes/batch', payload: { ids: ['CN_ETF'] } },
      ];
      let expected = 100_000;
      for (const r of requests) {
        const res = await fresh.inject({ ...r, headers: key });
        expect(res.statusCode, r.url).toBe(200);
        expected -= 1;
        expect(res.headers['x-ratelimit-limit'], r.url).toBe('100000');
        expect(res.headers['x-ratelimit-remaining'], r.url).toBe(String(expected));
        const reset = Number(res.headers['x-ratelimit-reset']);
        expect(Number.isInteger(reset), r.url).toBe(true);
        expect(reset).toBeGreaterThan(0);
        expect(reset).toBeLessThanOrEqual(60);
      }
    } finally {
      await fresh.close();
    }
  });
});

describe('X-Request-Id', () => {
  it.each(GET_ROUTES)('echoed on %s', async (url) => {
    const res = await app.inject({ url, headers: { ...key, 'x-request-id': 'client-req.42:a_b' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe('client-req.42:a_b');
  });

  it('echoed on POST routes, error responses and operational routes', async () => {
    const post = await app.inject({ method: 'POST', url: '/v1/quotes', headers: { ...key, 'x-request-id': 'r-post' }, payload: { symbols: ['600519.SH'] } });
    expect(post.headers['x-request-id']).toBe('r-post');
    const denied = await app.inject({ url: '/v1/quotes?symbols=600519.SH', headers: { 'x-request-id': 'r-401' } });
    expect(denied.statusCode).toBe(401);
    expect(denied.headers['x-request-id']).toBe('r-401');
    expect(denied.json().request_id).toBe('r-401');
    const health = await app.inject({ url: '/healthz', headers: { 'x-request-id': 'r-health' } });
    expect(health.headers['x-request-id']).toBe('r-health');
  });

  it('generated when absent: a fresh id per request, also in error bodies', async () => {
    const a = await app.inject({ url: '/v1/universes', headers: key });
    const b = await app.inject({ url: '/v1/universes', headers: key });
    expect(String(a.headers['x-request-id']).length).toBeGreaterThan(8);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    const err = await app.inject({ url: '/v1/nope', headers: key });
    expect(err.json().request_id).toBe(err.headers['x-request-id']);
  });
});

describe('POST bodies', () => {
  it('accept application/json with a charset parameter', async () => {
    const res = await app.inject({
      method: 'POST', url: '/v1/quotes', headers: { ...key, 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ symbols: ['600519.SH'] }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data[0].symbol).toBe('600519.SH');
  });

  it('ignore unknown body fields', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/instruments', headers: key, payload: { symbols: ['600519.SH'], lang: 'en' } });
    expect(res.statusCode).toBe(200);
  });
});

describe('operational routes need no key', () => {
  it('/healthz, /readyz and /v1/meta', async () => {
    expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ready', adapters: { sim: { ready: true } } });
    const meta = (await app.inject({ url: '/v1/meta' })).json().data;
    expect(meta).toMatchObject({ version: '1.0.0', simulated: true, routing: { CN: ['sim'], HK: ['sim'], US: ['sim'] } });
  });
});
