// Pure builders of Yahoo v8 chart requests (docs/vendors.md#yahoo-chart-request). The chart API needs no
// crumb; quotes and instrument metadata come from its `meta` block.

import type { SymbolRef } from '../../src/domain.ts';
import type { Resource, UpstreamRequest } from '../types.ts';

/**
 * HK and US indices as Yahoo's `^` tickers. CN indices need no entry: Yahoo lists them under the
 * exchange suffix like stocks (000001.SS is the SSE Composite, 000001.SZ Ping An Bank).
 * [verify] chose: ^HSTECH for Hang Seng TECH (public clients name it so; no capture of its chart found).
 */
export const YAHOO_INDEX_TICKERS: Readonly<Record<string, string>> = {
  'HSI.HK': '^HSI', 'HSCEI.HK': '^HSCE', 'HSTECH.HK': '^HSTECH',
  'SPX.US': '^GSPC', 'NDX.US': '^NDX', 'DJI.US': '^DJI',
};

/** Proxy symbol → Yahoo ticker (docs/vendors.md#symbol-mapping). */
export function yahooSymbol(ref: SymbolRef): string {
  const index = YAHOO_INDEX_TICKERS[ref.symbol];
  if (index !== undefined) return index;
  switch (ref.exchange) {
    case 'SH': return `${ref.code}.SS`;
    case 'SZ': return `${ref.code}.SZ`;
    // [verify] chose: Beijing listings as `.BJ` (no public source gives Yahoo's BJ suffix).
    case 'BJ': return `${ref.code}.BJ`;
    // Four digits, not five: `00700` → `0700.HK`, `09992` → `9992.HK` (the 5-digit form 404s).
    case 'HK': return `${String(Number(ref.code)).padStart(4, '0')}.HK`;
    // Class shares use a hyphen: BRK.B → BRK-B.
    default: return ref.code.replaceAll('.', '-');
  }
}

export interface ChartParams {
  interval: '1d' | '1m';
  /** Unix seconds, inclusive. */
  period1?: number;
  /** Unix seconds, exclusive. */
  period2?: number;
  /** Instead of period1/period2: the latest session. */
  range?: '1d';
  /** Ask for dividends and splits. */
  events?: boolean;
}

export interface YahooWire {
  baseUrl: string;
  userAgent: string;
}

// 404 carries `chart.error` "Not Found" for an unknown ticker; 400 carries the reason a request
// was refused (e.g. a 1m range too long). errors.ts reads both.
const ACCEPT = [400, 404];

export function buildChartRequest(wire: YahooWire, ticker: string, p: ChartParams, resource: Resource): UpstreamRequest {
  const u = new URL(`${wire.baseUrl.replace(/\/+$/, '')}/v8/finance/chart/${encodeURIComponent(ticker)}`);
  if (p.range !== undefined) {
    u.searchParams.set('range', p.range);
  } else {
    if (p.period1 !== undefined) u.searchParams.set('period1', String(p.period1));
    if (p.period2 !== undefined) u.searchParams.set('period2', String(p.period2));
  }
  u.searchParams.set('interval', p.interval);
  if (p.events) u.searchParams.set('events', 'div,splits');
  u.searchParams.set('includePrePost', 'false');
  return {
    url: u.toString(),
    method: 'GET',
    headers: { accept: 'application/json', 'user-agent': wire.userAgent },
    resource,
    acceptStatus: ACCEPT,
  };
}
