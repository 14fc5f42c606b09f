// Indices on Eastmoney, replayed from real captures (sources: mocks/fixtures/README.md): HK and US
// indices under their index markets (100.HSI, 100.HSCEI, 124.HSTECH, 100.SPX, 100.NDX, 100.DJIA)
// without the US market probe stocks need; CN indices by suffix (1.000001 is the SSE Composite,
// 0.000001 Ping An Bank); index instruments carry type index, no shares and no limits.
import { describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { createEastmoneyAdapter } from '../../adapters/eastmoney/index.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { cnTime, ref, testHttp, vendorServer } from './helpers.ts';

const QUOTE = 'https://push2.index.test';
const HISTORY = 'https://push2his.index.test';
let ulist: string | undefined;
let ulistAsked: string[] = [];
let stockAsked: string[] = [];
let trendsAsked: string[] = [];
let klineAsked: string[] = [];
let stock: Record<string, string> = {};
let klines: Record<string, string> = {};

vendorServer([
  http.get(`${QUOTE}/api/qt/ulist.np/get`, ({ request }) => {
    ulistAsked.push(new URL(request.url).searchParams.get('secids') ?? '');
    return HttpResponse.json(fixture('eastmoney', ulist ?? 'replay-ulist-unknown-rc102'));
  }),
  http.get(`${QUOTE}/api/qt/stock/get`, ({ request }) => {
    const secid = new URL(request.url).searchParams.get('secid') ?? '';
    stockAsked.push(secid);
    return HttpResponse.json(fixture('eastmoney', stock[secid] ?? 'stock-empty'));
  }),
  http.get(`${QUOTE}/api/qt/stock/trends2/get`, ({ request }) => {
    trendsAsked.push(new URL(request.url).searchParams.get('secid') ?? '');
    return HttpResponse.json(fixture('eastmoney', 'stock-empty'));
  }),
  http.get(`${HISTORY}/api/qt/stock/kline/get`, ({ request }) => {
    const secid = new URL(request.url).searchParams.get('secid') ?? '';
    klineAsked.push(secid);
    return HttpResponse.json(fixture('eastmoney', klines[secid] ?? 'stock-empty'));
  }),
], () => {
  ulist = undefined;
  ulistAsked = [];
  stockAsked = [];
  trendsAsked = [];
  klineAsked = [];
  stock = {};
  klines = {};
});

const NOW = cnTime('2026-02-10', '12:00');
const adapter = () => createEastmoneyAdapter({ quoteHosts: [QUOTE], historyHosts: [HISTORY] }, { now: () => NOW, http: testHttp('eastmoney') });

describe('eastmoney: HK and US indices', () => {
  it('SPX.US, NDX.US, DJI.US: one ulist call for 100.SPX, 100.NDX, 100.DJIA (no 105/106/107 probe); each field from its row', async () => {
    ulist = 'replay-ulist-us-indices';
    const quotes = await adapter().getQuotes(['SPX.US', 'NDX.US', 'DJI.US'].map(ref));
    expect(ulistAsked).toEqual(['100.SPX,100.NDX,100.DJIA']);
    expect(quotes.get('SPX.US')).toMatchObject({
      symbol: 'SPX.US', region: 'US', last_price: 6964.82, open: 6917.26, high: 6980.1, low: 6905.87, prev_close: 6932.3,
      timestamp: 1770670783000, ext: { name: '标普500', change_amount: 32.52, change_pct: 0.0047, amplitude: 0.0107 },
    });
    expect(quotes.get('NDX.US')).toMatchObject({ last_price: 23238.67, prev_close: 23031.21, ext: { name: '纳斯达克', change_amount: 207.46 } });
    expect(quotes.get('DJI.US')).toMatchObject({ last_price: 50135.87, prev_close: 50115.67, ext: { name: '道琼斯', change_amount: 20.2 } });
    // f124 is the 16:00 New York close of 2026-02-09.
    expect(new Date(quotes.get('NDX.US')!.timestamp).toISOString()).toBe('2026-02-09T21:00:00.000Z');
  });

  it('HSI.HK is 100.HSI; a row without f18 gets prev_close = f2 − f4 (26865.64 − 297.15)', async () => {
    ulist = 'replay-ulist-indices-20201214';
    const quotes = await adapter().getQuotes([ref('HSI.HK')]);
    expect(ulistAsked).toEqual(['100.HSI']);
    expect(quotes.get('HSI.HK')).toMatchObject({ symbol: 'HSI.HK', region: 'HK', last_price: 26865.64, prev_close: 26568.49, ext: { name: '恒生指数', change_pct: 0.0112 } });
  });

  it('HSCEI.HK and HSTECH.HK are asked as 100.HSCEI and 124.HSTECH, never 116.<letters>', async () => {
    ulist = 'replay-ulist-indices-20201214';
    await adapter().getQuotes([ref('hscei.hk'), ref('HSTECH.HK')]);
    expect(ulistAsked).toEqual(['100.HSCEI,124.HSTECH']);
  });

  it('daily K-lines of an index go to push2his with the index secid', async () => {
    await adapter().getCandles({ symbol: ref('DJI.US'), period: '1d', count: 5 });
    await adapter().getCandles({ symbol: ref('HSTECH.HK'), period: '1d', count: 5 });
    expect(klineAsked).toEqual(['100.DJIA', '124.HSTECH']);
  });

  it('intraday of an index asks trends2 with the index secid', async () => {
    await adapter().getIntraday!(ref('HSI.HK'));
    await adapter().getIntraday!(ref('000001.SH'));
    expect(trendsAsked).toEqual(['100.HSI', '1.000001']);
  });
});

describe('eastmoney: CN indices, the suffix decides', () => {
  it('000001.SH, 399001.SZ, 399006.SZ in one ulist answer with stocks absent: each from its own secid', async () => {
    ulist = 'replay-ulist-indices-20201214';
    const quotes = await adapter().getQuotes(['000001.SH', '000001.SZ', '399001.SZ', '399006.SZ'].map(ref));
    expect(ulistAsked[0].split(',').sort()).toEqual(['0.000001', '0.399001', '0.399006', '1.000001']);
    expect(quotes.get('000001.SH')).toMatchObject({ last_price: 3400.8, prev_close: 3379.04, ext: { name: '上证指数' } });
    // 0.000001 (平安银行) is not in this answer: the index row never stands in for it.
    expect(quotes.has('000001.SZ')).toBe(false);
    expect(quotes.get('399006.SZ')).toMatchObject({ last_price: 2884.5, ext: { name: '创业板指' } });
  });

  it('the 899050.BJ index is 0.899050', async () => {
    await adapter().getQuotes([ref('899050.BJ')]);
    expect(ulistAsked).toEqual(['0.899050']);
  });

  it('instrument of 000001.SH (stock/get 1.000001): type index, no shares, no limits, tick 0.01; 000001.SZ asks 0.000001', async () => {
    stock = { '1.000001': 'replay-stock-get-index-000001', '0.000001': 'stock-instrument-600519' };
    const found = await adapter().getInstruments([ref('000001.SH'), ref('000001.SZ')]);
    expect(stockAsked.sort()).toEqual(['0.000001', '1.000001']);
    expect(found.get('000001.SH')).toEqual({
      code: '000001', exchange: 'SH', name: '上证指数', region: 'CN', symbol: '000001.SH', type: 'index',
      ext: { type: 'cn_equity', float_shares: null, limit_down: null, limit_up: null, listing_date: null, tick_size: 0.01, total_shares: null },
    });
    expect(found.get('000001.SZ')?.type).toBe('stock');
  });

  it('HSI.HK instrument via stock/get 100.HSI is an index (the body served is the SSE capture: only the secid asked and the type are checked)', async () => {
    stock = { '100.HSI': 'replay-stock-get-index-000001' };
    const found = await adapter().getInstruments([ref('HSI.HK')]);
    expect(stockAsked).toEqual(['100.HSI']);
    expect(found.get('HSI.HK')).toMatchObject({ symbol: 'HSI.HK', type: 'index', ext: { total_shares: null, tick_size: 0.01 } });
  });
});
