// Issue 43.8: CORS (@fastify/cors) is off by default; server.cors.origins (exact origins, host
// patterns, `*`) turns it on: preflights answered before any key is asked for, the key headers
// allowed, the headers clients read exposed, on answers from the response cache too.
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../config/load.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';

const EXPOSED = ['X-Next-End-Time', 'Link', 'X-Missing-Symbols', 'X-Failed-Symbols', 'X-Truncated-Symbols', 'X-Limited-By', 'X-Cache',
  'X-Cache-Tier', 'X-Upstream', 'X-Simulated', 'X-Forming-Bar', 'X-Forming-Bar-Stale', 'X-Forming-Bar-Absent',
  'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'X-Request-Id', 'ETag', 'Age'];

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const withOrigins = (origins: string[]) => buildTestApp({ configure: (c) => { c.server.cors = { origins }; } });
const preflight = (origin: string, headers = 'x-api-key') => app!.inject({
  method: 'OPTIONS', url: '/v1/quotes?symbols=600519.SH',
  headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': headers },
});

describe('CORS', () => {
  it('is off by default: the default config has no origins, a preflight is 404, no Access-Control-* header', async () => {
    expect(loadConfig({}).config.server.cors).toEqual({ origins: [] });
    ({ app } = await buildTestApp());
    expect((await preflight('http://dash.example.com')).statusCode).toBe(404);
    const res = await app.inject({ url: '/v1/quotes?symbols=600519.SH', headers: { origin: 'http://dash.example.com', 'x-api-key': KEYS.demo } });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });

  it('answers a preflight from a listed origin without a key, allowing x-api-key and authorization', async () => {
    ({ app } = await withOrigins(['http://dash.example.com']));
    const res = await preflight('http://dash.example.com', 'x-api-key,authorization');
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('http://dash.example.com');
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['x-api-key', 'authorization']));
    expect(String(res.headers['access-control-allow-methods'])).toContain('GET');
  });

  it('exposes the headers clients read, on the first answer and the cached one, and on a refusal', async () => {
    ({ app } = await withOrigins(['http://dash.example.com']));
    const get = () => app!.inject({ url: '/v1/quotes?symbols=600519.SH', headers: { origin: 'http://dash.example.com', 'x-api-key': KEYS.demo } });
    const first = await get();
    const second = await get();
    expect(second.headers['x-cache']).toBe('HIT');
    for (const res of [first, second]) {
      expect(res.statusCode).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe('http://dash.example.com');
      expect(String(res.headers['access-control-expose-headers']).split(/,\s*/)).toEqual(EXPOSED);
    }
    const refused = await app.inject({ url: '/v1/quotes?symbols=600519.SH', headers: { origin: 'http://dash.example.com', 'x-api-key': 'not-a-key' } });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe('http://dash.example.com');
  });

  it('a pattern admits the hosts it names and no other origin', async () => {
    ({ app } = await withOrigins(['https://*.example.com', 'http://127.0.0.1:3000']));
    expect((await preflight('https://research.example.com')).headers['access-control-allow-origin']).toBe('https://research.example.com');
    expect((await preflight('http://127.0.0.1:3000')).headers['access-control-allow-origin']).toBe('http://127.0.0.1:3000');
    for (const other of ['https://example.com.evil.org', 'http://research.example.com', 'http://127.0.0.1:3001', 'https://evilexample.com']) {
      expect((await preflight(other)).headers['access-control-allow-origin'], other).toBeUndefined();
    }
  });

  it('"*" admits any origin', async () => {
    ({ app } = await withOrigins(['*']));
    expect((await preflight('http://anywhere.test')).headers['access-control-allow-origin']).toBe('http://anywhere.test');
  });

  it('the config refuses an origin with a path', () => {
    expect(() => loadConfig({ CONFIG_FILE: '', MDQS__server__cors__origins: '["http://a.test/path"]' })).toThrow(/cors/);
  });
});
