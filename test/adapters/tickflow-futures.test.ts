// China futures through the TickFlow adapter, against a fake TickFlow vendor on a local HTTP
// server that speaks TickFlow's wire format for a contract. The shapes are the official client's
// model, tickflow-org/tickflow `tickflow/generated_model.py` (commit feb91723da71462ff2b51ad3f62fda0d4edf4355):
// `CompactKlineData` (columnar `timestamp`, `open`, `high`, `low`, `close`, `volume`, `amount`, and
// the optional `open_interest` and `settlement_price` lists), `Quote` (`ext` optional; its
// `QuoteExtension` has no futures variant), `Instrument` with `ext` of `type: "cn_futures"`
// (`CnFuturesInstrumentExt`: float_shares, limit_down, limit_up, listing_date, name_en, tick_size,
// total_shares). The bar values are made up; their stamps are epoch ms bar ends, as for equities.
//
// Checked: a night session across a Friday night is labelled under Monday's trading day (bar
// instants on gold's own sessions, 21:00–02:30 then 09:00–10:15, 10:30–11:30, 13:30–15:00), daily
// bars are dated 00:00 of their trading day, both futures columns come back equal to what the
// vendor sent, quotes carry ext.open_interest / settlement_price / prev_settlement_price, and
// instruments the futures ext; an equity's answers keep their old form; and one route-level
// check through the app.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTickflowAdapter, type TickflowOptions } from '../../adapters/tickflow/index.ts';
import { localMidnight, minuteBarLabels, tradingDayOf } from '../../src/markets/calendar.ts';
import { calendarKeyOf } from '../../src/markets/symbols.ts';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { closeTestHttp, cnTime, ref, testHttp } from './helpers.ts';

// ---------------------------------------------------------------------------------------------
// The fake vendor

interface Columns {
  timestamp: number[];
  open: number[];
  high: number[];
  low: number[];
  close: number[];
  volume: number[];
  amount: number[];
  open_interest?: (number | null)[];
  settlement_price?: (number | null)[];
}

interface VendorData {
  klines1m: Record<string, Columns>;
  klines1d: Record<string, Columns>;
  intraday: Record<string, Columns>;
  quotes: Record<string, unknown>[];
  instruments: Record<string, unknown>[];
}

interface Vendor {
  base: string;
  data: VendorData;
  requests: { path: string; params: URLSearchParams; body: string }[];
  close(): Promise<void>;
}

function emptyData(): VendorData {
  return { klines1m: {}, klines1d: {}, intraday: {}, quotes: [], instruments: [] };
}

/** The rows of `c` with start_time ≤ t ≤ end_time, the newest `count`, as /v1/klines answers. */
function windowOf(c: Columns, params: URLSearchParams): Columns {
  const num = (k: string) => (params.has(k) ? Number(params.get(k)) : undefined);
  const start = num('start_time') ?? -Infinity;
  const end = num('end_time') ?? Infinity;
  let keep = c.timestamp.map((t, i) => [t, i] as const).filter(([t]) => t >= start && t <= end).map(([, i]) => i);
  const count = num('count');
  if (count !== undefined) keep = keep.slice(-count);
  const out: Record<string, unknown[]> = {};
  for (const [k, col] of Object.entries(c)) out[k] = keep.map((i) => (col as unknown[])[i]);
  return out as unknown as Columns;
}

async function startVendor(): Promise<Vendor> {
  let server: Server;
  const vendor: Vendor = {
    base: '', data: emptyData(), requests: [],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://vendor.test');
      vendor.requests.push({ path: url.pathname, params: url.searchParams, body });
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      const notFound = () => send(404, { code: 'SYMBOL_NOT_FOUND', message: 'symbol not found' });
      const symbol = url.searchParams.get('symbol') ?? '';
      const d = vendor.data;
      if (url.pathname === '/v1/klines') {
        const series = url.searchParams.get('period') === '1m' ? d.klines1m[symbol] : d.klines1d[symbol];
        return series === undefined ? notFound() : send(200, { data: windowOf(series, url.searchParams) });
      }
      if (url.pathname === '/v1/klines/intraday') {
        const series = d.intraday[symbol];
        return series === undefined ? notFound() : send(200, { data: series });
      }
      if (url.pathname === '/v1/quotes') {
        const wanted = new Set((url.searchParams.get('symbols') ?? '').split(','));
        return send(200, { data: d.quotes.filter((q) => wanted.has(q.symbol as string)) });
      }
      if (url.pathname === '/v1/instruments' && req.method === 'POST') {
        const wanted = new Set((JSON.parse(body) as { symbols: string[] }).symbols);
        return send(200, { data: d.instruments.filter((i) => wanted.has(i.symbol as string)) });
      }
      return notFound();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  vendor.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return vendor;
}

// ---------------------------------------------------------------------------------------------
// A gold contract across Friday 2025-12-12's night session (to Saturday 02:30) and Monday 2025-12-15

const AU = ref('au2604.SHF');
const AU_KEY = calendarKeyOf(AU);
const FRIDAY = '2025-12-12';
const SATURDAY = '2025-12-13';
const MONDAY = '2025-12-15';

/** [date, end time, close, open interest, settlement]; prices on gold's 0.02 tick, 1000 g a contract. */
type Row = [string, string, number, number, number | null];

function columnsOf(rows: Row[], stamp: (date: string, hhmm: string) => number = cnTime): Columns {
  const c: Columns = { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [], open_interest: [], settlement_price: [] };
  rows.forEach(([date, hhmm, close, oi, settlement], i) => {
    const open = Number((close - 0.2).toFixed(2));
    const volume = 10 + i;
    c.timestamp.push(stamp(date, hhmm));
    c.open.push(open);
    c.high.push(Number((close + 0.4).toFixed(2)));
    c.low.push(Number((open - 0.4).toFixed(2)));
    c.close.push(close);
    c.volume.push(volume);
    c.amount.push(Math.round(close * volume * 1000));
    c.open_interest!.push(oi);
    c.settlement_price!.push(settlement);
  });
  return c;
}

const MINUTE_ROWS: Row[] = [
  [FRIDAY, '14:59', 958.02, 201_000, 957.5],
  [FRIDAY, '15:00', 958.1, 201_020, 957.52],
  // Friday's night session: Monday's trading day.
  [FRIDAY, '21:01', 959.0, 201_100, 959.0],
  [FRIDAY, '21:02', 959.2, 201_130, 959.1],
  [FRIDAY, '23:59', 960.04, 201_400, 959.46],
  [SATURDAY, '00:00', 960.1, 201_410, 959.48],
  [SATURDAY, '00:01', 960.3, 201_420, 959.5],
  [SATURDAY, '02:30', 961.0, 201_600, 959.8],
  [MONDAY, '09:01', 961.4, 201_650, 959.9],
  [MONDAY, '10:15', 961.6, 201_700, 960.0],
  [MONDAY, '10:31', 961.8, 201_720, 960.04],
  [MONDAY, '11:30', 962.0, 201_800, 960.2],
  [MONDAY, '13:31', 962.2, 201_810, 960.3],
  [MONDAY, '15:00', 962.4, 201_900, 960.5],
];

const DAILY_ROWS: Row[] = [
  ['2025-12-11', '00:00', 955.0, 200_500, 954.36],
  [FRIDAY, '00:00', 958.1, 201_020, 957.52],
  [MONDAY, '00:00', 962.4, 201_900, 960.5],
];

const AU_INSTRUMENT = {
  symbol: 'au2604.SHF', code: 'au2604', exchange: 'SHF', region: 'CN', name: '沪金2604', type: 'futures',
  ext: { type: 'cn_futures', tick_size: 0.02, limit_up: 1015.0, limit_down: 900.08, listing_date: '2025-04-16', float_shares: null, total_shares: null, name_en: null },
};

function auQuote(timestamp: number, ext: Record<string, unknown>): Record<string, unknown> {
  return {
    symbol: 'au2604.SHF', region: 'CN', last_price: 962.4, open: 958.8, high: 963.0, low: 958.4, prev_close: 958.1,
    volume: 1_234, amount: 1_187_000_000, timestamp, session: 'closed', ext,
  };
}

const MT = ref('600519.SH');
/** An equity's minute rows, with a stray open_interest column an equity must not answer. */
const MT_ROWS: Columns = {
  timestamp: [cnTime(MONDAY, '09:31'), cnTime(MONDAY, '09:32')], open: [1500, 1501], high: [1502, 1503], low: [1499, 1500],
  close: [1501, 1502], volume: [100, 200], amount: [15_010_000, 30_040_000], open_interest: [1, 2],
};

let vendor: Vendor;
let clock = cnTime(MONDAY, '16:00');
beforeAll(async () => {
  vendor = await startVendor();
});
afterAll(() => vendor.close());
afterEach(async () => {
  vendor.data = emptyData();
  vendor.requests.length = 0;
  clock = cnTime(MONDAY, '16:00');
  await closeTestHttp();
});

function adapter(options: Partial<TickflowOptions> = {}): ReturnType<typeof createTickflowAdapter> {
  return createTickflowAdapter({ baseUrl: vendor.base, apiKey: 'k', ...options }, { now: () => clock, http: testHttp('tickflow') });
}

const dayOf = (t: number) => tradingDayOf(AU_KEY, t);

// ---------------------------------------------------------------------------------------------

describe('tickflow futures: K-lines on the product calendar', () => {
  it('1m: a Friday night is Monday\'s; every bar on its trading day\'s labels; both columns as the vendor sent them', async () => {
    vendor.data.klines1m[AU.symbol] = columnsOf(MINUTE_ROWS);
    const c = await adapter().getCandles({ symbol: AU, period: '1m', count: 100 });
    expect(c).toBeDefined();
    const sent = vendor.data.klines1m[AU.symbol];
    expect(c!.timestamp).toEqual(sent.timestamp);
    expect(c!.timestamp.map(dayOf)).toEqual([FRIDAY, FRIDAY, ...Array(12).fill(MONDAY)]);
    for (const t of c!.timestamp) expect(minuteBarLabels(AU_KEY, dayOf(t), 1)).toContain(t);
    expect(c!.open_interest).toEqual(sent.open_interest);
    expect(c!.settlement_price).toEqual(sent.settlement_price);
    // Volume in contracts, as sent (not the ×100 of CN equities' lots).
    expect(c!.volume).toEqual(sent.volume);
    expect(vendor.requests[0].params.get('symbol')).toBe('au2604.SHF');
  });

  it('1m with start-stamped bars (minuteLabels: start): the night\'s first bar is 21:01, still Monday\'s', async () => {
    vendor.data.klines1m[AU.symbol] = columnsOf(MINUTE_ROWS.slice(2, 5), (date, hhmm) => cnTime(date, hhmm) - 60_000);
    const c = await adapter({ minuteLabels: 'start' }).getCandles({ symbol: AU, period: '1m', count: 10 });
    expect(c!.timestamp).toEqual([cnTime(FRIDAY, '21:01'), cnTime(FRIDAY, '21:02'), cnTime(FRIDAY, '23:59')]);
    expect(c!.timestamp.map(dayOf)).toEqual([MONDAY, MONDAY, MONDAY]);
    expect(c!.open_interest).toEqual([201_100, 201_130, 201_400]);
  });

  it('a call-auction print at 20:59 folds into the night\'s first bar, which keeps the later row\'s open interest and settlement', async () => {
    vendor.data.klines1m[AU.symbol] = columnsOf([[FRIDAY, '20:59', 958.6, 201_050, 958.6], [FRIDAY, '21:01', 959.0, 201_100, 959.0]]);
    const c = await adapter().getCandles({ symbol: AU, period: '1m', count: 10 });
    expect(c!.timestamp).toEqual([cnTime(FRIDAY, '21:01')]);
    expect(c!.open).toEqual([958.4]);
    expect(c!.volume).toEqual([10 + 11]);
    expect(c!.open_interest).toEqual([201_100]);
    expect(c!.settlement_price).toEqual([959.0]);
  });

  it('1d: dated 00:00 of the trading day, columns as sent; a bar stamped at its night open is still Monday\'s', async () => {
    vendor.data.klines1d[AU.symbol] = columnsOf(DAILY_ROWS);
    const c = await adapter().getCandles({ symbol: AU, period: '1d', count: 10 });
    expect(c!.timestamp).toEqual(['2025-12-11', FRIDAY, MONDAY].map((d) => localMidnight('CN', d)));
    expect(c!.open_interest).toEqual([200_500, 201_020, 201_900]);
    expect(c!.settlement_price).toEqual([954.36, 957.52, 960.5]);

    // The same bars stamped at the first session of their trading day (Monday's opens Friday 21:00).
    const opens: Record<string, string> = { '2025-12-11': '2025-12-10', [FRIDAY]: '2025-12-11', [MONDAY]: FRIDAY };
    vendor.data.klines1d[AU.symbol] = columnsOf(DAILY_ROWS, (date) => cnTime(opens[date], '21:00'));
    const again = await adapter().getCandles({ symbol: AU, period: '1d', count: 10 });
    expect(again!.timestamp).toEqual(c!.timestamp);
  });

  it('a settlement the vendor leaves empty (0 before the day settles) is the day\'s VWAP; an empty open interest carries the one before', async () => {
    const rows = columnsOf(DAILY_ROWS);
    rows.settlement_price![2] = 0;
    rows.open_interest![2] = null;
    vendor.data.klines1d[AU.symbol] = rows;
    const c = await adapter().getCandles({ symbol: AU, period: '1d', count: 10 });
    // amount / (volume × 1000) on the 0.02 tick: 962.4.
    expect(c!.settlement_price).toEqual([954.36, 957.52, 962.4]);
    expect(c!.open_interest).toEqual([200_500, 201_020, 201_020]);
  });

  it('intraday: the night and the day of one trading day, with both columns; the day before is cut whatever the vendor sends', async () => {
    vendor.data.intraday[AU.symbol] = columnsOf(MINUTE_ROWS);
    const c = await adapter().getIntraday!(AU);
    expect(c!.timestamp.map(dayOf)).toEqual(Array(12).fill(MONDAY));
    expect(c!.open_interest).toEqual(MINUTE_ROWS.slice(2).map((r) => r[3]));
    expect(c!.settlement_price).toEqual(MINUTE_ROWS.slice(2).map((r) => r[4]));
  });

  it('each product its own day: a print at 10:20 is gold\'s 10:15 bar (its break), a CFFEX index future\'s 10:20 bar', async () => {
    const IF = ref('IF2512.CFX');
    vendor.data.klines1m[AU.symbol] = columnsOf([[MONDAY, '10:14', 961.6, 201_700, 960.0], [MONDAY, '10:20', 961.8, 201_710, 960.02]]);
    vendor.data.klines1m[IF.symbol] = columnsOf([[MONDAY, '10:14', 4000, 100_000, 4000], [MONDAY, '10:20', 4001, 100_010, 4000.2]]);
    const a = adapter();
    const au = await a.getCandles({ symbol: AU, period: '1m', count: 10 });
    const index = await a.getCandles({ symbol: IF, period: '1m', count: 10 });
    expect(au!.timestamp).toEqual([cnTime(MONDAY, '10:14'), cnTime(MONDAY, '10:15')]);
    expect(au!.open_interest).toEqual([201_700, 201_710]);
    expect(index!.timestamp).toEqual([cnTime(MONDAY, '10:14'), cnTime(MONDAY, '10:20')]);
    expect(index!.open_interest).toEqual([100_000, 100_010]);
  });

  it('an equity is unchanged: CN sessions, lots to shares, no futures columns even when the vendor sends one', async () => {
    vendor.data.klines1m[MT.symbol] = MT_ROWS;
    const c = await adapter().getCandles({ symbol: MT, period: '1m', count: 10 });
    expect(c).toEqual({
      timestamp: MT_ROWS.timestamp, open: MT_ROWS.open, high: MT_ROWS.high, low: MT_ROWS.low, close: MT_ROWS.close,
      volume: [10_000, 20_000], amount: MT_ROWS.amount,
    });
  });
});

describe('tickflow futures: quotes, instruments, ex-factors', () => {
  it('a quote without futures fields is completed from the daily bars: open interest, settlement, previous settlement; change against it', async () => {
    vendor.data.quotes = [auQuote(cnTime(MONDAY, '15:00'), { type: 'cn_futures', name: '沪金2604' })];
    vendor.data.klines1d[AU.symbol] = columnsOf(DAILY_ROWS);
    const q = (await adapter().getQuotes([AU])).get(AU.symbol);
    expect(q?.ext).toEqual({
      type: 'cn_futures', name: '沪金2604', turnover_rate: null,
      open_interest: 201_900, settlement_price: 960.5, prev_settlement_price: 957.52,
      change_amount: 4.88, change_pct: Number((4.88 / 957.52).toFixed(10)), amplitude: Number(((963.0 - 958.4) / 957.52).toFixed(10)),
    });
    expect(q?.volume).toBe(1_234);
    expect(vendor.requests.map((r) => `${r.path} ${r.params.get('period') ?? ''}`)).toEqual(['/v1/quotes ', '/v1/klines 1d']);
  });

  it('during Friday\'s night session the quote is Monday\'s: no settlement yet, the previous one Friday\'s', async () => {
    clock = cnTime(FRIDAY, '21:30');
    vendor.data.quotes = [{ ...auQuote(cnTime(FRIDAY, '21:30'), { type: 'cn_futures', name: '沪金2604' }), session: 'regular' }];
    // The forming Monday bar is already in the vendor's daily answer.
    vendor.data.klines1d[AU.symbol] = columnsOf([...DAILY_ROWS.slice(0, 2), [MONDAY, '00:00', 959.2, 201_130, null]]);
    const q = (await adapter().getQuotes([AU])).get(AU.symbol);
    expect(q?.session).toBe('regular');
    expect(q?.ext.settlement_price).toBeNull();
    expect(q?.ext.prev_settlement_price).toBe(957.52);
    expect(q?.ext.open_interest).toBe(201_130);
  });

  it('futures fields the vendor\'s quote carries pass through, with no K-line call', async () => {
    vendor.data.quotes = [auQuote(cnTime(MONDAY, '15:00'), {
      type: 'cn_futures', name: '沪金2604', change_amount: 4.88, change_pct: 0.0051, amplitude: 0.0048,
      open_interest: 201_901, settlement_price: 960.52, prev_settlement_price: 957.5,
    })];
    const q = (await adapter().getQuotes([AU])).get(AU.symbol);
    expect(q?.ext).toMatchObject({ open_interest: 201_901, settlement_price: 960.52, prev_settlement_price: 957.5, change_amount: 4.88, change_pct: 0.0051 });
    expect(vendor.requests.map((r) => r.path)).toEqual(['/v1/quotes']);
  });

  it('a mixed batch: the equity\'s quote keeps its old form and asks nothing more', async () => {
    vendor.data.quotes = [
      auQuote(cnTime(MONDAY, '15:00'), { type: 'cn_futures', name: '沪金2604' }),
      {
        symbol: '600519.SH', region: 'CN', last_price: 1502, open: 1500, high: 1503, low: 1499, prev_close: 1500, volume: 300,
        amount: 45_050_000, timestamp: cnTime(MONDAY, '15:00'), ext: { type: 'cn_equity', name: '贵州茅台', change_amount: 2, change_pct: 0.001333, amplitude: 0.002667, turnover_rate: 0.0001 },
      },
    ];
    vendor.data.klines1d[AU.symbol] = columnsOf(DAILY_ROWS);
    const quotes = await adapter().getQuotes([AU, MT]);
    expect(quotes.get(MT.symbol)?.ext).toEqual({ type: 'cn_equity', name: '贵州茅台', change_amount: 2, change_pct: 0.001333, amplitude: 0.002667, turnover_rate: 0.0001 });
    expect(quotes.get(MT.symbol)?.volume).toBe(30_000);
    expect(quotes.get(AU.symbol)?.ext.open_interest).toBe(201_900);
    expect(vendor.requests.filter((r) => r.path === '/v1/klines').map((r) => r.params.get('symbol'))).toEqual(['au2604.SHF']);
  });

  it('instruments: the vendor\'s cn_futures ext, completed with the contract terms it does not carry', async () => {
    vendor.data.instruments = [AU_INSTRUMENT];
    const i = (await adapter().getInstruments([AU])).get(AU.symbol);
    expect(i).toEqual({
      code: 'au2604', exchange: 'SHF', name: '沪金2604', region: 'CN', symbol: 'au2604.SHF', type: 'futures',
      ext: {
        type: 'cn_futures', float_shares: null, total_shares: null, tick_size: 0.02, limit_up: 1015.0, limit_down: 900.08,
        listing_date: '2025-04-16', multiplier: 1000, last_trade_date: '2026-04-15', product: 'au', main_contract: false,
      },
    });
  });

  it('ex-factors: a contract has none, and the vendor is not asked', async () => {
    const got = await adapter().getExFactors!([AU]);
    expect([...got]).toEqual([[AU.symbol, []]]);
    expect(vendor.requests).toEqual([]);
  });
});

describe('tickflow futures through the app', () => {
  it('/v1/klines?symbol=au2604.SHF&period=1m answers open_interest and settlement_price as the vendor sent them; quotes and instruments their futures ext', async () => {
    vendor.data.klines1m[AU.symbol] = columnsOf(MINUTE_ROWS);
    const now = () => clock;
    const routing = { markets: { CN: ['tickflow'], HK: ['tickflow'], US: ['tickflow'] }, overrides: {}, allowSimFallback: false, strict: false };
    const adapters = { tickflow: { baseUrl: vendor.base, apiKey: 'vendor-secret', http: { retry: { maxRetries: 0 } } } };
    const deps = productionDeps(now);
    const { app } = await buildTestApp({
      now,
      adapters: createAdapters(routing, adapters, deps),
      upstreamClients: deps.clients,
      configure: (c) => Object.assign(c, { routing, adapters }),
    });
    try {
      const res = await app.inject({ url: '/v1/klines?symbol=au2604.SHF&period=1m&count=14', headers: { 'x-api-key': KEYS.demo } });
      expect(res.statusCode).toBe(200);
      const data = res.json().data;
      const sent = vendor.data.klines1m[AU.symbol];
      expect(data.timestamp).toEqual(sent.timestamp);
      expect(data.open_interest).toEqual(sent.open_interest);
      expect(data.settlement_price).toEqual(sent.settlement_price);

      vendor.data.quotes = [auQuote(cnTime(MONDAY, '15:00'), { type: 'cn_futures', name: '沪金2604' })];
      vendor.data.klines1d[AU.symbol] = columnsOf(DAILY_ROWS);
      vendor.data.instruments = [AU_INSTRUMENT];
      const quote = await app.inject({ url: '/v1/quotes?symbols=au2604.SHF', headers: { 'x-api-key': KEYS.demo } });
      expect(quote.statusCode).toBe(200);
      expect(quote.json().data[0].ext).toMatchObject({ type: 'cn_futures', open_interest: 201_900, settlement_price: 960.5, prev_settlement_price: 957.52 });
      const instrument = await app.inject({ url: '/v1/instruments?symbols=au2604.SHF', headers: { 'x-api-key': KEYS.demo } });
      expect(instrument.statusCode).toBe(200);
      expect(instrument.json().data[0]).toMatchObject({ type: 'futures', ext: { type: 'cn_futures', multiplier: 1000, limit_up: 1015.0 } });
    } finally {
      await app.close();
    }
  });
});
