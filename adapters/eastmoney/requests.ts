// Pure builders of Eastmoney requests (docs/vendors.md#eastmoney). Hosts are passed in: the adapter
// rotates across numbered mirrors when one throttles (hosts.ts).

import type { SymbolRef } from '../../src/domain.ts';
import type { Resource, UpstreamRequest } from '../types.ts';
import { futuresSecid } from './futures.ts';

/** A public web token many clients send; optional in practice. */
export const DEFAULT_UT = 'fa5fd1943c7b386f172d6893dbfba10b';

export type UsMarket = 105 | 106 | 107;
export const US_MARKETS: readonly UsMarket[] = [105, 106, 107];

/** ulist.np/get field codes (a different code space from stock/get, docs/vendors.md#eastmoney-quotes-depth-and-instruments). */
export const ULIST_QUOTE_FIELDS = 'f2,f3,f4,f5,f6,f7,f8,f12,f13,f14,f15,f16,f17,f18,f124';
export const ULIST_MARKET_FIELDS = 'f12,f13';
/** stock/get: five bid levels f19/f20 … f11/f12, five ask levels f39/f40 … f31/f32, time f86. */
export const DEPTH_FIELDS = 'f11,f12,f13,f14,f15,f16,f17,f18,f19,f20,f31,f32,f33,f34,f35,f36,f37,f38,f39,f40,f57,f86';
export const INSTRUMENT_FIELDS = 'f43,f51,f52,f57,f58,f59,f84,f85,f189';
const KLINE_FIELDS1 = 'f1,f2,f3,f4,f5,f6';
const KLINE_FIELDS2 = 'f51,f52,f53,f54,f55,f56,f57,f58,f59,f60,f61';
const TRENDS_FIELDS1 = 'f1,f2,f3,f4,f5,f6,f7,f8,f9,f10,f11,f12,f13';
const TRENDS_FIELDS2 = 'f51,f52,f53,f54,f55,f56,f57,f58';

export interface EastmoneyWire {
  ut: string;
  userAgent: string;
}

// [verify] chose: Eastmoney writes US class shares with an underscore (BRK.B → BRK_B).
export function usTicker(ref: SymbolRef): string {
  return ref.code.replace(/[.-]/g, '_');
}

/**
 * HK and US indices under Eastmoney's index markets: 100 (global indices, DJI as DJIA) and 124
 * (Hang Seng TECH), as public clients request them (mocks/fixtures/README.md). CN indices need no
 * entry: 1.000300 and 0.399006 follow from the suffix like stocks.
 */
export const INDEX_SECIDS: Readonly<Record<string, string>> = {
  'HSI.HK': '100.HSI', 'HSCEI.HK': '100.HSCEI', 'HSTECH.HK': '124.HSTECH',
  'SPX.US': '100.SPX', 'NDX.US': '100.NDX', 'DJI.US': '100.DJIA',
};

/** secid `<market>.<code>`: the suffix decides the market, never the first digit (docs/vendors.md#eastmoney-market-numbers); futures by exchange (futures.ts). */
export function secidOf(ref: SymbolRef, usMarket?: UsMarket): string | undefined {
  const index = INDEX_SECIDS[ref.symbol];
  if (index !== undefined) return index;
  const futures = futuresSecid(ref);
  if (futures !== undefined) return futures;
  switch (ref.exchange) {
    case 'SH': return `1.${ref.code}`;
    case 'SZ':
    case 'BJ': return `0.${ref.code}`;
    case 'HK': return `116.${ref.code}`;
    default: return usMarket === undefined ? undefined : `${usMarket}.${usTicker(ref)}`;
  }
}

function request(host: string, path: string, params: Record<string, string>, resource: Resource, wire: EastmoneyWire, referer = 'https://quote.eastmoney.com/'): UpstreamRequest {
  const u = new URL(host.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return {
    url: u.toString(),
    method: 'GET',
    headers: { accept: 'application/json, text/plain, */*', 'user-agent': wire.userAgent, referer },
    resource,
  };
}

export function buildUlistRequest(host: string, secids: string[], fields: string, resource: Resource, wire: EastmoneyWire): UpstreamRequest {
  return request(host, '/api/qt/ulist.np/get', {
    fltt: '2', invt: '2', fields, secids: secids.join(','), ut: wire.ut,
  }, resource, wire);
}

export function buildStockGetRequest(host: string, secid: string, fields: string, resource: Resource, wire: EastmoneyWire): UpstreamRequest {
  return request(host, '/api/qt/stock/get', { secid, fltt: '2', invt: '2', fields, ut: wire.ut }, resource, wire);
}

export interface KlineParams {
  klt: 1 | 101;
  /** YYYYMMDD or '0' (from the start). */
  beg: string;
  /** YYYYMMDD; '20500101' means up to now. */
  end: string;
  lmt: number;
}

/** fqt=0: raw prices; the service adjusts (docs/contract.md#ex-factors-and-adjustment). */
export function buildKlineRequest(
  host: string, secid: string, p: KlineParams, resource: Resource, wire: EastmoneyWire, fields2: string = KLINE_FIELDS2,
): UpstreamRequest {
  return request(host, '/api/qt/stock/kline/get', {
    secid, ut: wire.ut, fields1: KLINE_FIELDS1, fields2,
    klt: String(p.klt), fqt: '0', beg: p.beg, end: p.end, lmt: String(p.lmt),
  }, resource, wire);
}

/** Today's minute trend (the latest session); iscr=0 leaves out the pre-open call auction minutes. */
export function buildTrendsRequest(host: string, secid: string, wire: EastmoneyWire): UpstreamRequest {
  return request(host, '/api/qt/stock/trends2/get', {
    secid, ut: wire.ut, fields1: TRENDS_FIELDS1, fields2: TRENDS_FIELDS2, ndays: '1', iscr: '0', iscca: '0',
  }, 'intraday', wire);
}

/** Dividend / bonus-share table RPT_SHAREBONUS_DET (docs/vendors.md#eastmoney-dividends), newest first. */
export function buildDividendRequest(host: string, code: string, wire: EastmoneyWire): UpstreamRequest {
  return request(host, '/api/data/v1/get', {
    sortColumns: 'EX_DIVIDEND_DATE', sortTypes: '-1', pageSize: '500', pageNumber: '1',
    reportName: 'RPT_SHAREBONUS_DET', columns: 'ALL', source: 'WEB', client: 'WEB',
    filter: `(SECURITY_CODE="${code}")`,
  }, 'exFactors', wire, 'https://data.eastmoney.com/');
}

/** Rights-issue table RPT_IPO_ALLOTMENT (配股; akshare stock_pg_em), one code. */
export function buildRightsRequest(host: string, code: string, wire: EastmoneyWire): UpstreamRequest {
  return request(host, '/api/data/v1/get', {
    sortColumns: 'EQUITY_RECORD_DATE', sortTypes: '-1', pageSize: '500', pageNumber: '1',
    reportName: 'RPT_IPO_ALLOTMENT', columns: 'ALL', source: 'WEB', client: 'WEB',
    filter: `(SECURITY_CODE="${code}")`,
  }, 'exFactors', wire, 'https://data.eastmoney.com/');
}

/** HK dividend / split table of the F10 pages, RPT_HKF10_MAIN_DIVBASIC (akshare stock_hk_dividend_payout_em). */
export function buildHkDividendRequest(host: string, code: string, wire: EastmoneyWire): UpstreamRequest {
  return request(host, '/securities/api/data/v1/get', {
    reportName: 'RPT_HKF10_MAIN_DIVBASIC',
    columns: 'SECURITY_CODE,UPDATE_DATE,REPORT_TYPE,EX_DIVIDEND_DATE,DIVIDEND_DATE,TRANSFER_END_DATE,YEAR,PLAN_EXPLAIN,IS_BFP',
    quoteColumns: '', filter: `(SECURITY_CODE="${code}")(IS_BFP="0")`, pageNumber: '1', pageSize: '200',
    sortTypes: '-1,-1', sortColumns: 'NOTICE_DATE,EX_DIVIDEND_DATE', source: 'F10', client: 'PC',
  }, 'exFactors', wire, 'https://emweb.securities.eastmoney.com/');
}

/** 'YYYY-MM-DD' → 'YYYYMMDD'. */
export function compactDate(date: string): string {
  return date.replaceAll('-', '');
}
