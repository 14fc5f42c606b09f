// Pure builders of TickFlow requests (docs/vendors.md#tickflow-requests). Symbols go out in the
// canonical form, which is TickFlow's own (`600519.SH`, `00700.HK`, `BRK.B.US`).

import type { UpstreamRequest } from '../types.ts';

export interface TickflowEndpoint {
  baseUrl: string;
  apiKey?: string;
}

/** The official client switches /v1/quotes to POST above 20 symbols; we do the same. */
const QUOTES_GET_MAX = 20;
/** Documented maximum of `count` on /v1/klines. */
export const KLINES_PAGE_MAX = 10_000;

// Error envelopes arrive with these statuses; errors.ts reads their `code`. (A 429 is turned into
// UPSTREAM_UNAVAILABLE by the http layer before we see it; listing it costs nothing and lets a
// layer that does pass it through hand us the "请 N ms 后重试" hint.)
const ACCEPT = [400, 401, 403, 404, 429];

function headers(ep: TickflowEndpoint, withBody: boolean): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json' };
  if (withBody) h['content-type'] = 'application/json';
  if (ep.apiKey) h['x-api-key'] = ep.apiKey;
  return h;
}

function url(ep: TickflowEndpoint, path: string, params: Record<string, string | number | undefined> = {}): string {
  const u = new URL(ep.baseUrl.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, String(v));
  return u.toString();
}

export function buildQuotesRequest(ep: TickflowEndpoint, symbols: string[]): UpstreamRequest {
  if (symbols.length > QUOTES_GET_MAX) {
    return {
      url: url(ep, '/v1/quotes'), method: 'POST', headers: headers(ep, true),
      body: JSON.stringify({ symbols }), resource: 'quotes', acceptStatus: ACCEPT,
    };
  }
  return {
    url: url(ep, '/v1/quotes', { symbols: symbols.join(',') }), method: 'GET',
    headers: headers(ep, false), resource: 'quotes', acceptStatus: ACCEPT,
  };
}

export function buildDepthRequest(ep: TickflowEndpoint, symbols: string[]): UpstreamRequest {
  return {
    url: url(ep, '/v1/depth/batch', { symbols: symbols.join(',') }), method: 'GET',
    headers: headers(ep, false), resource: 'depth', acceptStatus: ACCEPT,
  };
}

export interface KlinesParams {
  symbol: string;
  period: '1d' | '1m';
  count: number;
  startTime?: number;
  endTime?: number;
}

/** Always `adjust=none`: the service adjusts with its own engine (docs/contract.md#ex-factors-and-adjustment). */
export function buildKlinesRequest(ep: TickflowEndpoint, p: KlinesParams): UpstreamRequest {
  return {
    url: url(ep, '/v1/klines', {
      symbol: p.symbol, period: p.period, count: p.count,
      start_time: p.startTime, end_time: p.endTime, adjust: 'none',
    }),
    method: 'GET', headers: headers(ep, false), resource: 'candles', acceptStatus: ACCEPT,
  };
}

export function buildIntradayRequest(ep: TickflowEndpoint, symbol: string): UpstreamRequest {
  return {
    url: url(ep, '/v1/klines/intraday', { symbol, period: '1m' }), method: 'GET',
    headers: headers(ep, false), resource: 'intraday', acceptStatus: ACCEPT,
  };
}

export function buildExFactorsRequest(ep: TickflowEndpoint, symbols: string[]): UpstreamRequest {
  return {
    url: url(ep, '/v1/klines/ex-factors', { symbols: symbols.join(',') }), method: 'GET',
    headers: headers(ep, false), resource: 'exFactors', acceptStatus: ACCEPT,
  };
}

export function buildInstrumentsRequest(ep: TickflowEndpoint, symbols: string[]): UpstreamRequest {
  return {
    url: url(ep, '/v1/instruments'), method: 'POST', headers: headers(ep, true),
    body: JSON.stringify({ symbols }), resource: 'instruments', acceptStatus: ACCEPT,
  };
}

export function buildUniverseRequest(ep: TickflowEndpoint, universeId: string): UpstreamRequest {
  return {
    url: url(ep, `/v1/universes/${encodeURIComponent(universeId)}`), method: 'GET',
    headers: headers(ep, false), resource: 'pools', acceptStatus: ACCEPT,
  };
}
