// The official TickFlow Python client's request forms (docs/vendors.md#the-official-python-client):
// every request carries Content-Type: application/json (GETs too), Accept, its User-Agent and a
// lower-case x-api-key; long lists switch to POST; batch GETs are chunked at 100 symbols; the
// DataFrame name lookup POSTs /v1/instruments in chunks of 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { FEATURES, KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildTestApp } from '../helpers/app.ts';

const KEY = 'tickflow-sdk-key';
const SDK_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json',
  'user-agent': 'tickflow-python-sdk/0.1.21',
  'x-api-key': KEY,
};

function sdkKeys(): KeyStore {
  return new KeyStore(parseKeysFile({
    plans: {
      expert: {
        markets: ['CN', 'HK', 'US'],
        features: [...FEATURES],
        rate_limit: { max: 100000, window_ms: 60000 },
        max_symbols: 1000,
      },
    },
    keys: [{ id: 'sdk', plan: 'expert', sha256: sha256Hex(KEY) }],
  }));
}

let app: FastifyInstance;
let all: string[];
beforeAll(async () => {
  ({ app } = await buildTestApp({ keys: sdkKeys() }));
  const res = await sdk({ method: 'POST', url: '/v1/universes/batch', payload: JSON.stringify({ ids: ['CN_Stock', 'CN_ETF', 'HK_Stock', 'US_Stock'] }) });
  all = Object.values(res.json().data as Record<string, { symbols: string[] }>).flatMap((d) => d.symbols);
});
afterAll(async () => {
  await app.close();
});

/** A request as the SDK sends it (httpx: JSON bodies serialised by the client). */
async function sdk(options: InjectOptions) {
  const res = await app.inject({ ...options, headers: { ...SDK_HEADERS, ...(options.headers ?? {}) } });
  // Whatever the status, the body is a JSON object (the SDK reads response.json()["data"]).
  const body = res.json();
  expect(typeof body).toBe('object');
  expect(Array.isArray(body)).toBe(false);
  if (res.statusCode === 200) expect(body).toHaveProperty('data');
  return res;
}

describe('GET with Content-Type: application/json and no body', () => {
  it.each([
    '/v1/quotes?symbols=600000.SH,000001.SZ',
    '/v1/quotes?universes=CN_Equity_A,CN_ETF',
    '/v1/klines?symbol=600000.SH&period=1d&count=100&adjust=forward',
    '/v1/klines/intraday?symbol=600000.SH&period=1m',
    '/v1/klines/ex-factors?symbols=600000.SH',
    '/v1/instruments?symbols=600000.SH',
    '/v1/depth?symbol=600000.SH',
    '/v1/universes',
    '/v1/universes/CN_Equity_A',
  ])('%s → 200 {data}', async (url) => {
    const res = await sdk({ method: 'GET', url });
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  });
});

describe('POST /v1/quotes above 20 symbols', () => {
  it('{"symbols": [...21+]} answers every symbol in order', async () => {
    const symbols = all.slice(0, 60);
    const res = await sdk({ method: 'POST', url: '/v1/quotes', payload: JSON.stringify({ symbols }) });
    expect(res.statusCode).toBe(200);
    expect((res.json().data as { symbol: string }[]).map((q) => q.symbol)).toEqual(symbols);
  });

  it('{"universes": [...]} with more than five ids (aliases and canonical ids mixed) quotes each member once', async () => {
    const ids = ['CN_Equity_A', 'CN_ETF', 'HK_Equity', 'US_Equity', 'CN_Stock', 'HK_Stock', 'US_Stock'];
    const res = await sdk({ method: 'POST', url: '/v1/quotes', payload: JSON.stringify({ universes: ids }) });
    expect(res.statusCode).toBe(200);
    const got = (res.json().data as { symbol: string }[]).map((q) => q.symbol);
    expect(got.length).toBe(225);
    expect(new Set(got)).toEqual(new Set(all));
  });
});

describe('POST /v1/instruments in chunks of 500 (the DataFrame name cache)', () => {
  it('500 symbols, real and unknown: known ones in order, the rest in X-Missing-Symbols', async () => {
    const unknown = Array.from({ length: 500 - all.length }, (_, i) => `ZZ${String(i).padStart(4, '0')}.US`);
    const symbols: string[] = [];
    // Interleave so request order is really tested.
    for (let i = 0; i < 500; i++) symbols.push(i % 2 === 0 && all[i / 2] !== undefined ? all[i / 2] : unknown.shift() ?? all[Math.floor(i / 2)]);
    expect(new Set(symbols).size).toBe(500);
    const known = symbols.filter((s) => all.includes(s));
    const missing = symbols.filter((s) => !all.includes(s));
    const res = await sdk({ method: 'POST', url: '/v1/instruments', payload: JSON.stringify({ symbols }) });
    expect(res.statusCode).toBe(200);
    expect((res.json().data as { symbol: string }[]).map((i) => i.symbol)).toEqual(known);
    expect(res.headers['x-missing-symbols']).toBe(missing.join(','));
  });
});

describe('GET /v1/klines/batch with 100 comma-joined symbols (the SDK chunk size)', () => {
  it('keys data by symbol so chunks merge with dict.update', async () => {
    const symbols = all.slice(0, 100);
    const res = await sdk({ method: 'GET', url: `/v1/klines/batch?symbols=${symbols.join(',')}&period=1d&count=5&adjust=forward` });
    expect(res.statusCode).toBe(200);
    const data = res.json().data as Record<string, { timestamp: number[] }>;
    expect(Object.keys(data)).toEqual(symbols);
    for (const c of Object.values(data)) expect(c.timestamp.length).toBe(5);
  });

  it('the same for intraday/batch and ex-factors', async () => {
    const symbols = all.slice(100, 200);
    const intraday = await sdk({ method: 'GET', url: `/v1/klines/intraday/batch?symbols=${symbols.join(',')}&period=1m&count=3` });
    expect(intraday.statusCode).toBe(200);
    expect(Object.keys(intraday.json().data)).toEqual(symbols);
    const ex = await sdk({ method: 'GET', url: `/v1/klines/ex-factors?symbols=${symbols.join(',')}` });
    expect(ex.statusCode).toBe(200);
    expect(Object.keys(ex.json().data)).toEqual(symbols);
  });
});

describe('error bodies the SDK can parse', () => {
  it('a wrong lower-case x-api-key: 401 JSON object with code/message', async () => {
    const res = await sdk({ method: 'GET', url: '/v1/quotes?symbols=600000.SH', headers: { 'x-api-key': 'nope' } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 401, error: 'INVALID_API_KEY' });
  });

  it('a trailing slash is a JSON 404, never a redirect', async () => {
    const res = await sdk({ method: 'GET', url: '/v1/universes/' });
    expect(res.statusCode).toBe(404);
    expect(res.headers.location).toBeUndefined();
  });
});
