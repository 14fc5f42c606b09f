// Every error row of docs/contract.md#errors, through app.inject(), with exact bodies and headers.
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

const RID = 'req-test-1';

async function get(url: string, key: string | null = KEYS.demo, headers: Record<string, string> = {}) {
  const h: Record<string, string> = { 'x-request-id': RID, ...headers };
  if (key !== null) h['x-api-key'] = key;
  return app.inject({ method: 'GET', url, headers: h });
}

function expectError(res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }, status: number, error: string, message?: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(String(res.headers['content-type'])).toContain('application/json');
  const body = res.json() as Record<string, unknown>;
  expect(body.code).toBe(status);
  expect(body.error).toBe(error);
  expect(body.request_id).toBe(RID);
  expect(typeof body.message).toBe('string');
  if (message !== undefined) expect(body.message).toBe(message);
  return body;
}

describe('400 validation errors', () => {
  it('INVALID_SYMBOL for a malformed symbol on a single route', async () => {
    const body = expectError(await get('/v1/klines?symbol=600519'), 400, 'INVALID_SYMBOL',
      "'600519' is not a valid symbol; use <code>.<exchange>, e.g. 600519.SH, 00700.HK, AAPL.US");
    expect(body.details).toEqual({ symbols: ['600519'] });
  });

  it('INVALID_SYMBOL lists every bad symbol of a batch', async () => {
    const body = expectError(await get('/v1/quotes?symbols=600519.SH,FOO,12.XX'), 400, 'INVALID_SYMBOL', 'not valid symbols: FOO, 12.XX');
    expect(body.details).toEqual({ symbols: ['FOO', '12.XX'] });
  });

  it('INVALID_PERIOD', async () => {
    expectError(await get('/v1/klines?symbol=600519.SH&period=2d'), 400, 'INVALID_PERIOD',
      'period must be one of 1m, 5m, 10m, 15m, 30m, 60m, 1d, 1w, 1M, 1Q, 1Y');
  });

  it('INVALID_PERIOD for a daily period on intraday', async () => {
    expectError(await get('/v1/klines/intraday?symbol=600519.SH&period=1d'), 400, 'INVALID_PERIOD');
  });

  it('INVALID_ADJUST', async () => {
    expectError(await get('/v1/klines?symbol=600519.SH&adjust=qfq'), 400, 'INVALID_ADJUST',
      'adjust must be one of none, forward, backward, forward_additive, backward_additive, forward_exrights, backward_exrights');
  });

  it.each(['0', '10001', '-5', 'abc', '1.5'])('INVALID_COUNT for count=%s', async (count) => {
    expectError(await get(`/v1/klines?symbol=600519.SH&count=${count}`), 400, 'INVALID_COUNT', 'count must be an integer from 1 to 10000');
  });

  it('INVALID_TIME_RANGE when start_time is after end_time', async () => {
    const body = expectError(await get('/v1/klines?symbol=600519.SH&start_time=1700000000000&end_time=1600000000000'), 400,
      'INVALID_TIME_RANGE', 'start_time must not be after end_time');
    expect(body.details).toEqual({ start_time: 1700000000000, end_time: 1600000000000 });
  });

  it.each(['start_time=abc', 'end_time=1.5', 'start_time=12e'])('INVALID_PARAMETER for non-integer times (%s)', async (q) => {
    const res = await get(`/v1/klines?symbol=600519.SH&${q}`);
    const body = expectError(res, 400, 'INVALID_PARAMETER');
    expect(String(body.message)).toMatch(/must be an integer \(epoch milliseconds\)$/);
  });

  it('INVALID_PARAMETER for both or neither of symbols/universes', async () => {
    expectError(await get('/v1/quotes?symbols=600519.SH&universes=CN_ETF'), 400, 'INVALID_PARAMETER', 'give exactly one of symbols or universes');
    expectError(await get('/v1/quotes'), 400, 'INVALID_PARAMETER', 'give exactly one of symbols or universes');
  });

  it('INVALID_PARAMETER for a missing required parameter', async () => {
    expectError(await get('/v1/klines'), 400, 'INVALID_PARAMETER', "parameter 'symbol' is required");
  });

  it('TOO_MANY_SYMBOLS above the plan cap', async () => {
    const body = expectError(await get('/v1/quotes?symbols=600519.SH,600000.SH,601318.SH,000001.SZ', KEYS.cnDaily), 400, 'TOO_MANY_SYMBOLS',
      'at most 3 symbols per request on this plan; got 4');
    expect(body.details).toEqual({ max_symbols: 3, requested: 4 });
  });

  it('INVALID_UNIVERSE for an unknown pool', async () => {
    const body = expectError(await get('/v1/quotes?universes=CN_Stock,NOPE'), 400, 'INVALID_UNIVERSE');
    expect(body.details).toEqual({ universes: ['NOPE'] });
  });
});

describe('401', () => {
  it('MISSING_API_KEY', async () => {
    expectError(await get('/v1/quotes?symbols=600519.SH', null), 401, 'MISSING_API_KEY',
      'an API key is required: send it in the X-API-Key header (or Authorization: Bearer <key>, or the api_key query parameter)');
  });
  it('INVALID_API_KEY (header and query)', async () => {
    expectError(await get('/v1/quotes?symbols=600519.SH', 'wrong'), 401, 'INVALID_API_KEY', 'the API key is not valid');
    expectError(await get('/v1/quotes?symbols=600519.SH&api_key=wrong', null), 401, 'INVALID_API_KEY', 'the API key is not valid');
  });
  it('the header wins over the query parameter', async () => {
    expectError(await get(`/v1/quotes?symbols=600519.SH&api_key=${KEYS.demo}`, 'wrong'), 401, 'INVALID_API_KEY');
    const res = await get('/v1/quotes?symbols=600519.SH&api_key=wrong', KEYS.demo);
    expect(res.statusCode).toBe(200);
  });
});

describe('403', () => {
  it('MARKET_NOT_PERMITTED names the market and symbols', async () => {
    const body = expectError(await get('/v1/quotes?symbols=600519.SH,00700.HK', KEYS.cnDaily), 403, 'MARKET_NOT_PERMITTED',
      'your plan does not include market HK (symbols 00700.HK)');
    expect(body.details).toEqual({ plan: 'cn_daily', missing_markets: ['HK'], symbols: ['00700.HK'] });
  });
  it('NO_KLINES_MINUTE_PERMISSION for a minute period', async () => {
    const body = expectError(await get('/v1/klines?symbol=600519.SH&period=5m', KEYS.cnDaily), 403, 'NO_KLINES_MINUTE_PERMISSION',
      'your plan does not include feature klines_minute');
    expect(body.details).toEqual({ plan: 'cn_daily', missing_features: ['klines_minute'] });
  });
  it('NO_DEPTH_PERMISSION', async () => {
    expectError(await get('/v1/depth?symbol=600519.SH', KEYS.cnDaily), 403, 'NO_DEPTH_PERMISSION');
  });
  it('NO_BATCH_PERMISSION on /batch routes', async () => {
    expectError(await get('/v1/klines/batch?symbols=600519.SH', KEYS.noBatch), 403, 'NO_BATCH_PERMISSION');
  });
  it('NO_POOLS_PERMISSION for quotes by pool, naming pool markets', async () => {
    const body = expectError(await get('/v1/quotes?universes=HK_Stock', KEYS.cnDaily), 403, 'NO_POOLS_PERMISSION');
    expect(body.details).toEqual({ plan: 'cn_daily', missing_features: ['pools'], missing_markets: ['HK'] });
  });
});

describe('404', () => {
  it('SYMBOL_NOT_FOUND on single-symbol routes', async () => {
    for (const url of ['/v1/klines?symbol=999999.SH', '/v1/klines/intraday?symbol=999999.SH', '/v1/depth?symbol=ZZZZ.US']) {
      const body = expectError(await get(url), 404, 'SYMBOL_NOT_FOUND');
      expect(Object.keys(body.details as object)).toEqual(['symbol']);
    }
  });
  it('NOT_FOUND for an unknown route, with or without a key', async () => {
    expectError(await get('/v1/nope'), 404, 'NOT_FOUND', 'no route GET /v1/nope');
    expectError(await get('/v1/nope', null), 404, 'NOT_FOUND');
  });
  it('NOT_FOUND for a trailing slash (never a redirect)', async () => {
    expectError(await get('/v1/quotes/?symbols=600519.SH'), 404, 'NOT_FOUND');
  });
  it('NOT_FOUND for an unknown universe id', async () => {
    expectError(await get('/v1/universes/NOPE'), 404, 'NOT_FOUND', "unknown universe 'NOPE'");
  });
});

describe('429', () => {
  it('RATE_LIMITED with retry_after_ms, Retry-After and X-RateLimit-* headers; header and query share one bucket', async () => {
    const { app: limited } = await buildTestApp();
    try {
      const url = '/v1/quotes?symbols=600519.SH';
      const first = await limited.inject({ url, headers: { 'x-api-key': KEYS.tiny } });
      expect(first.statusCode).toBe(200);
      expect(first.headers['x-ratelimit-limit']).toBe('3');
      expect(first.headers['x-ratelimit-remaining']).toBe('2');
      expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
      const second = await limited.inject({ url: `${url}&api_key=${KEYS.tiny}` });
      expect(second.headers['x-ratelimit-remaining']).toBe('1');
      await limited.inject({ url, headers: { 'x-api-key': KEYS.tiny } });
      const res = await limited.inject({ url: `${url}&api_key=${KEYS.tiny}`, headers: { 'x-request-id': RID } });
      const body = expectError(res, 429, 'RATE_LIMITED');
      expect(res.headers['retry-after']).toBe(String(Math.ceil(Number(body.retry_after_ms) / 1000)));
      expect(Number(body.retry_after_ms)).toBeGreaterThan(50_000);
      expect(Number(body.retry_after_ms)).toBeLessThanOrEqual(60_000);
      expect(res.headers['x-ratelimit-remaining']).toBe('0');
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      // Another key is not affected.
      const other = await limited.inject({ url, headers: { 'x-api-key': KEYS.demo } });
      expect(other.statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('malformed requests never give a 500 or a non-JSON body', () => {
  it('POST with invalid JSON', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/quotes', headers: { 'x-api-key': KEYS.demo, 'content-type': 'application/json', 'x-request-id': RID }, payload: '{"symbols": [' });
    expectError(res, 400, 'INVALID_PARAMETER', 'the request body is not valid JSON');
  });
  it('POST with a JSON array body', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/quotes', headers: { 'x-api-key': KEYS.demo, 'content-type': 'application/json', 'x-request-id': RID }, payload: '[1,2]' });
    expectError(res, 400, 'INVALID_PARAMETER');
  });
  it('POST with non-string symbols', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/instruments', headers: { 'x-api-key': KEYS.demo, 'x-request-id': RID }, payload: { symbols: [1, { a: 2 }] } });
    expect(res.statusCode).toBe(400);
  });
  it('POST with an empty body', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/quotes', headers: { 'x-api-key': KEYS.demo, 'content-type': 'application/json', 'x-request-id': RID }, payload: '' });
    expectError(res, 400, 'INVALID_PARAMETER');
  });
  it('POST with an unsupported content type', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/quotes', headers: { 'x-api-key': KEYS.demo, 'content-type': 'text/xml', 'x-request-id': RID }, payload: '<a/>' });
    expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
  it('a body over the limit', async () => {
    const big = JSON.stringify({ symbols: Array.from({ length: 200_000 }, () => '600519.SH') });
    const res = await app.inject({ method: 'POST', url: '/v1/quotes', headers: { 'x-api-key': KEYS.demo, 'content-type': 'application/json', 'x-request-id': RID }, payload: big });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });
  it('garbage query strings', async () => {
    for (const url of ['/v1/klines?symbol=%E0%A4%A', '/v1/klines?symbol=' + 'A'.repeat(5000) + '.US', '/v1/klines?symbol[]=x', '/v1/quotes?symbols=,,,', '/v1/klines?symbol=600519.SH&count=']) {
      const res = await get(url);
      expect(res.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, url).toBeLessThan(500);
      expect(() => res.json(), url).not.toThrow();
    }
  });
});
