// Strict query strings on the /v1 routes (src/http/strict-query.ts): an unknown parameter is a 400
// UNKNOWN_PARAMETER naming it and the nearest known one; api_key and the cache buster _ are known
// everywhere; enumerations accept any case except period (1m is not 1M); nothing else changes.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, KEYS } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp({ now: () => Date.parse('2026-11-28T12:00:00+08:00') }));
});
afterAll(async () => app?.close());

const get = (url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });

describe('strict query strings', () => {
  it('a typo is refused, naming the parameter and the nearest known one', async () => {
    const res = await get('/v1/klines?symbol=600519.SH&cout=5');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'UNKNOWN_PARAMETER', details: { parameter: 'cout', nearest: 'count' } });
    expect(res.json().message).toContain("unknown parameter 'cout'; did you mean 'count'?");
    const far = await get('/v1/quotes?symbols=600519.SH&zzzzzz=1');
    expect(far.statusCode).toBe(400);
    expect(far.json().details).toEqual({ parameter: 'zzzzzz' });
  });

  it('a route without query parameters refuses any but api_key and _', async () => {
    expect((await get('/v1/me?verbose=1')).json().error).toBe('UNKNOWN_PARAMETER');
    expect((await app.inject({ url: `/v1/me?api_key=${KEYS.demo}&_=12345` })).statusCode).toBe(200);
  });

  it('api_key and the cache buster _ are known everywhere', async () => {
    const res = await app.inject({ url: `/v1/klines?symbol=600519.SH&count=5&api_key=${KEYS.demo}&_=1732780800000` });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.timestamp).toHaveLength(5);
  });

  it('enumerations accept any case, the answer as with the canonical value; period stays case-sensitive', async () => {
    const upper = await get('/v1/klines?symbol=600519.SH&count=5&format=CSV&adjust=FORWARD');
    const lower = await get('/v1/klines?symbol=600519.SH&count=5&format=csv&adjust=forward');
    expect(upper.statusCode).toBe(200);
    expect(upper.headers['content-type']).toContain('text/csv');
    expect(upper.body).toBe(lower.body);
    const month = await get('/v1/klines?symbol=600519.SH&count=3&period=1M');
    const minute = await get('/v1/klines?symbol=600519.SH&count=3&period=1m');
    expect(month.statusCode).toBe(200);
    expect(minute.statusCode).toBe(200);
    expect(month.json().data.timestamp).not.toEqual(minute.json().data.timestamp);
    const day = await get('/v1/klines?symbol=600519.SH&count=3&period=1D');
    expect(day.statusCode).toBe(400);
    expect(day.json().error).toBe('INVALID_PERIOD');
  });
});
