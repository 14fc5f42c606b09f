// The OpenAPI document as the app serves it, and the request each operation's 200 example
// illustrates: the tests of the document's examples and of a client generated from it ask the app
// these, on the sim at the documented instant (2025-06-18 10:15:30 Asia/Shanghai).
import type { FastifyInstance, InjectOptions } from 'fastify';
import { FEATURES, KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';

/* eslint-disable @typescript-eslint/no-explicit-any */
export type OpenApiDoc = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> }; [key: string]: unknown };

export const DOC_KEYS = {
  demo: 'demo-key',
  /** The plan of the examples' 403: CN only, no depth. */
  basic: 'basic-key',
  /** A plan without quotes: the WebSocket routes refuse it. */
  free: 'free-key',
  /** One request a minute: the second is the 429. */
  tiny: 'tiny-key',
};

export function docKeyStore(): KeyStore {
  return new KeyStore(parseKeysFile({
    plans: {
      demo: { markets: ['CN', 'HK', 'US'], features: [...FEATURES], rate_limit: { max: 6000, window_ms: 60000 }, max_symbols: 100 },
      basic: { markets: ['CN'], features: ['quotes', 'klines_daily', 'instruments'], rate_limit: { max: 60, window_ms: 60000 }, max_symbols: 20 },
      free: { markets: ['CN', 'HK', 'US'], features: ['klines_daily', 'instruments', 'ex_factors', 'batch'], rate_limit: { max: 60, window_ms: 60000 }, max_symbols: 500 },
      tiny: { markets: ['CN', 'HK', 'US'], features: ['quotes'], rate_limit: { max: 1, window_ms: 60000 }, max_symbols: 10 },
    },
    keys: [
      { id: 'demo', plan: 'demo', sha256: sha256Hex(DOC_KEYS.demo), demo: true },
      { id: 'basic', plan: 'basic', sha256: sha256Hex(DOC_KEYS.basic) },
      { id: 'free', plan: 'free', sha256: sha256Hex(DOC_KEYS.free) },
      { id: 'tiny', plan: 'tiny', sha256: sha256Hex(DOC_KEYS.tiny) },
    ],
  }));
}

export async function servedDoc(app: FastifyInstance, url = '/v1/openapi.json'): Promise<OpenApiDoc> {
  const res = await app.inject({ url });
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}`);
  return res.json() as OpenApiDoc;
}

const get = (url: string): InjectOptions => ({ method: 'GET', url });
const post = (url: string, payload: object): InjectOptions => ({ method: 'POST', url, payload });

/** Per operationId, the request whose answer its 200 example shows (same symbols, pools, market and dates). */
export const EXAMPLE_REQUESTS: Record<string, InjectOptions> = {
  getQuotes: get('/v1/quotes?symbols=600519.SH'),
  postQuotes: post('/v1/quotes', { symbols: ['600519.SH'] }),
  getKlines: get('/v1/klines?symbol=600519.SH&count=2'),
  getKlinesBatch: get('/v1/klines/batch?symbols=600519.SH&count=2'),
  getKlinesMarket: get('/v1/klines/market?symbols=600519.SH&date=2025-06-17'),
  // After getKlines above filled the store (the examples' app keeps history).
  getCoverage: get('/v1/coverage?symbols=600519.SH&period=1d&start_date=2025-06-16&end_date=2025-06-17'),
  getIntraday: get('/v1/klines/intraday?symbol=600519.SH&count=2'),
  getIntradayBatch: get('/v1/klines/intraday/batch?symbols=600519.SH&count=2'),
  getExFactors: get('/v1/klines/ex-factors?symbols=600519.SH'),
  getInstruments: get('/v1/instruments?symbols=600519.SH'),
  postInstruments: post('/v1/instruments', { symbols: ['600519.SH'] }),
  getDepth: get('/v1/depth?symbol=600519.SH'),
  getDepthBatch: get('/v1/depth/batch?symbols=600519.SH'),
  getUniverses: get('/v1/universes'),
  getUniverse: get('/v1/universes/CN_ETF'),
  postUniversesBatch: post('/v1/universes/batch', { ids: ['CN_ETF'] }),
  getExchanges: get('/v1/exchanges'),
  getExchangeInstruments: get('/v1/exchanges/SH/instruments'),
  getCalendar: get('/v1/calendar?market=HK&start=2025-12-23&end=2025-12-29'),
  getMarketStatus: get('/v1/market-status'),
  getFinancialsIncome: get('/v1/financials/income?symbols=600519.SH&latest=true'),
  getFinancialsBalanceSheet: get('/v1/financials/balance-sheet?symbols=600519.SH&latest=true'),
  getFinancialsCashFlow: get('/v1/financials/cash-flow?symbols=600519.SH&latest=true'),
  getFinancialsMetrics: get('/v1/financials/metrics?symbols=600519.SH&latest=true'),
  getFinancialsShares: get('/v1/financials/shares?symbols=600519.SH&latest=true'),
  getMe: get('/v1/me'),
  getMeta: get('/v1/meta'),
};

/** The app's answer to `request` with the demo key (and `headers`); throws unless it is a 200. */
export async function answer(app: FastifyInstance, request: InjectOptions, headers: Record<string, string> = {}): Promise<{ body: string; contentType: string }> {
  const res = await app.inject({ ...request, headers: { 'x-api-key': DOC_KEYS.demo, ...headers } });
  if (res.statusCode !== 200) throw new Error(`${request.method} ${request.url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
  return { body: res.body, contentType: String(res.headers['content-type']) };
}

/** Every operation of the document: path, method and the operation object. */
export function operationsOf(doc: OpenApiDoc): { path: string; method: string; op: any }[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));
}
