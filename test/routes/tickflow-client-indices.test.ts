// The official TickFlow Python client asking for indices, replayed in its request forms (the same
// forms as tickflow-client.test.ts: Content-Type application/json on GETs, its User-Agent, lower-case
// x-api-key; `klines.get` sends only the parameters given). The README's own index examples
// 000001.SH (上证指数) and 399006.SZ (创业板指), and 000300.SH, come back as data, never as
// `data: []` with X-Missing-Symbols.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { FEATURES, KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildTestApp } from '../helpers/app.ts';

const KEY = 'tickflow-sdk-key';
const SDK_HEADERS = { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'tickflow-python-sdk/0.1.21', 'x-api-key': KEY };
const INDICES = ['000001.SH', '399006.SZ', '000300.SH'];

let app: FastifyInstance;
beforeAll(async () => {
  const keys = new KeyStore(parseKeysFile({
    plans: { expert: { markets: ['CN', 'HK', 'US'], features: [...FEATURES], rate_limit: { max: 100000, window_ms: 60000 }, max_symbols: 1000 } },
    keys: [{ id: 'sdk', plan: 'expert', sha256: sha256Hex(KEY) }],
  }));
  ({ app } = await buildTestApp({ keys }));
});
afterAll(async () => {
  await app.close();
});

async function sdk(method: 'GET' | 'POST', url: string, body?: unknown) {
  const res = await app.inject({ method, url, headers: SDK_HEADERS, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
  expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
  expect(res.headers['x-missing-symbols']).toBeUndefined();
  return res.json().data;
}

type Candles = { timestamp: number[]; close: number[] };

describe('official client, indices', () => {
  it('quotes.get(symbols=["000001.SH", "399006.SZ", "000300.SH"])', async () => {
    const quotes = await sdk('GET', `/v1/quotes?symbols=${INDICES.join(',')}`) as Array<{ symbol: string; ext: { name: string } }>;
    expect(quotes.map((q) => [q.symbol, q.ext.name])).toEqual([['000001.SH', '上证指数'], ['399006.SZ', '创业板指'], ['000300.SH', '沪深300']]);
  });

  it('klines.get("000001.SH", period="1d", count=100) and period="1m"', async () => {
    const daily = await sdk('GET', '/v1/klines?symbol=000001.SH&period=1d&count=100') as Candles;
    expect(daily.timestamp.length).toBe(100);
    const minute = await sdk('GET', '/v1/klines?symbol=399006.SZ&period=1m&count=100&adjust=forward') as Candles;
    expect(minute.timestamp.length).toBe(100);
    // The client's default: klines.get("000300.SH") sends the symbol alone.
    expect((await sdk('GET', '/v1/klines?symbol=000300.SH') as Candles).timestamp.length).toBe(100);
  });

  it('klines.intraday("000001.SH") and with period="5m"', async () => {
    const one = await sdk('GET', '/v1/klines/intraday?symbol=000001.SH') as Candles;
    const five = await sdk('GET', '/v1/klines/intraday?symbol=000001.SH&period=5m') as Candles;
    expect(one.timestamp.length).toBeGreaterThan(0);
    expect(five.timestamp.length).toBe(Math.ceil(one.timestamp.length / 5));
  });

  it('instruments.get(symbols) and the DataFrame name lookup (POST /v1/instruments)', async () => {
    const got = await sdk('GET', `/v1/instruments?symbols=${INDICES.join(',')}`) as Array<{ symbol: string; type: string }>;
    expect(got.map((i) => [i.symbol, i.type])).toEqual(INDICES.map((s) => [s, 'index']));
    const posted = await sdk('POST', '/v1/instruments', { symbols: [...INDICES, '920662.BJ'] }) as Array<{ symbol: string; name: string }>;
    expect(posted.map((i) => i.name)).toEqual(['上证指数', '创业板指', '沪深300', '方盛股份']);
  });

  it('every symbol the client README names as an example is known (futures aside)', async () => {
    const readme = ['600000.SH', '000001.SZ', '920662.BJ', '510300.SH', '159915.SZ', '000001.SH', '399006.SZ', 'AAPL.US', '00700.HK', '600519.SH'];
    const got = await sdk('POST', '/v1/instruments', { symbols: readme }) as Array<{ symbol: string }>;
    expect(got.map((i) => i.symbol)).toEqual(readme);
  });
});
