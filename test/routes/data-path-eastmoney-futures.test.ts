// China futures through the real app with Eastmoney as the CN chain (CN_FUTURES routes through it,
// its capabilities listing the market): a contract's quote, 1d and 1m K-lines with open_interest and
// settlement_price, intraday, and no depth. The vendor is msw over push2his with the au2604 answers
// of mocks/fixtures/eastmoney (sources: mocks/fixtures/README.md, "China futures").
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { EASTMONEY_TEST_HOSTS as HOSTS } from '../../mocks/handlers/eastmoney.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { tradingDayOf } from '../../src/markets/calendar.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';

const sh = (date: string, hhmm = '00:00') => Date.parse(`${date}T${hhmm}:00+08:00`);
// Saturday 2026-01-31 01:00 Shanghai: au's Friday night session trades for Monday 2026-02-02.
const NOW = sh('2026-01-31', '01:00');

type Body = { rc: number; data: { klines: string[] } & Record<string, unknown> };
const asked: string[] = [];
const server = setupServer(
  ...HOSTS.history.map((h) => http.get(`${h}/api/qt/stock/kline/get`, ({ request }) => {
    const q = new URL(request.url).searchParams;
    const secid = q.get('secid') ?? '';
    const klt = q.get('klt') ?? '';
    asked.push(`${secid} klt=${klt}`);
    if (secid !== '113.au2604') return HttpResponse.json(fixture('eastmoney', 'replay-kline-unknown-rc100'));
    const body = fixture<Body>('eastmoney', klt === '1' ? 'futures-kline-1m-au2604' : 'futures-kline-daily-au2604');
    if (klt === '101') {
      const e = q.get('end') ?? '20500101';
      const end = `${e.slice(0, 4)}-${e.slice(4, 6)}-${e.slice(6, 8)}`;
      const rows = body.data.klines.filter((row) => row.slice(0, 10) <= end);
      body.data.klines = rows.slice(Math.max(0, rows.length - Number(q.get('lmt') ?? rows.length)));
    }
    return HttpResponse.json(body);
  })),
  ...HOSTS.quote.map((h) => http.get(`${h}/*`, () => HttpResponse.json(fixture('eastmoney', 'rc-error')))),
);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

let app: FastifyInstance;
afterEach(async () => {
  server.resetHandlers();
  asked.length = 0;
  await app?.close();
});

async function setup() {
  const routing = { markets: { CN: ['eastmoney'], HK: ['eastmoney'], US: ['eastmoney'] }, overrides: {}, allowSimFallback: false, strict: false };
  const adapters = {
    eastmoney: {
      quoteHosts: HOSTS.quote, historyHosts: HOSTS.history, datacenterHosts: HOSTS.datacenter,
      http: { retry: { maxRetries: 0 }, breaker: { failureThreshold: 5, openMs: 30_000 } },
    },
  };
  const now = () => NOW;
  const deps = productionDeps(now);
  const built = createAdapters(routing, adapters, deps);
  ({ app } = await buildTestApp({ now, adapters: built, upstreamClients: deps.clients, configure: (c) => Object.assign(c, { routing, adapters }) }));
  return async (url: string) => {
    const res = await app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
    return { status: res.statusCode, body: res.json() };
  };
}

const COLUMNS = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prev_close', 'open_interest', 'settlement_price'];

describe('China futures on Eastmoney through the app', () => {
  it("au2604.SHF: the quote (the Friday night so far), Monday's settlement not known yet", async () => {
    const get = await setup();
    const { status, body } = await get('/v1/quotes?symbols=au2604.SHF');
    expect(status).toBe(200);
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toMatchObject({ symbol: 'au2604.SHF', region: 'CN', last_price: 999.92, prev_close: 1000.38, session: 'regular' });
    expect(body.data[0].ext).toMatchObject({ type: 'cn_futures', open_interest: 167968, settlement_price: null, prev_settlement_price: 997.64, change_amount: 2.28 });
    expect(asked).toEqual(['113.au2604 klt=101']);
  });

  it('1d K-lines: every column, the newest bar dated Monday (its trading day), open_interest and settlement_price', async () => {
    const get = await setup();
    const { status, body } = await get('/v1/klines?symbol=au2604.SHF&period=1d&count=3&adjust=none');
    expect(status).toBe(200);
    expect(Object.keys(body.data).sort()).toEqual([...COLUMNS].sort());
    expect(body.data.timestamp).toEqual([sh('2026-01-29'), sh('2026-01-30'), sh('2026-02-02')]);
    expect(body.data.open_interest).toEqual([163835, 165511, 167968]);
    expect(body.data.settlement_price).toEqual([996.24, 997.64, 1000.44]);
  });

  it("1m K-lines: the night across midnight labelled at its instants, Monday's trading day, with both columns", async () => {
    const get = await setup();
    const { status, body } = await get(`/v1/klines?symbol=au2604.SHF&period=1m&adjust=none&start_time=${sh('2026-01-30', '23:58')}&end_time=${sh('2026-01-31', '00:02')}`);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(Object.keys(body.data).sort()).toEqual([...COLUMNS].sort());
    expect(body.data.timestamp).toEqual(['23:58', '23:59'].map((t) => sh('2026-01-30', t)).concat(['00:00', '00:01', '00:02'].map((t) => sh('2026-01-31', t))));
    expect(body.data.timestamp.map((t: number) => tradingDayOf('CN_FUTURES:au', t))).toEqual(Array(5).fill('2026-02-02'));
    expect(body.data.open_interest).toHaveLength(5);
    expect(body.data.settlement_price).toHaveLength(5);
  });

  it("intraday: Monday's bars so far; depth of a contract: 404 SYMBOL_NOT_FOUND without a vendor call", async () => {
    const get = await setup();
    const intraday = await get('/v1/klines/intraday?symbol=au2604.SHF');
    expect(intraday.status).toBe(200);
    expect(intraday.body.data.timestamp[0]).toBe(sh('2026-01-30', '21:01'));
    expect(intraday.body.data.open_interest.at(-1)).toBe(167968);
    asked.length = 0;
    const depth = await get('/v1/depth?symbol=au2604.SHF');
    expect(depth.status).toBe(404);
    expect(depth.body.error).toBe('SYMBOL_NOT_FOUND');
    expect(asked).toEqual([]);
  });

  it('instruments: type futures, ext.type cn_futures with the contract terms', async () => {
    const get = await setup();
    const { status, body } = await get('/v1/instruments?symbols=au2604.SHF');
    expect(status).toBe(200);
    expect(body.data[0]).toMatchObject({ symbol: 'au2604.SHF', type: 'futures', name: '沪金2604' });
    expect(body.data[0].ext).toMatchObject({ type: 'cn_futures', tick_size: 0.02, multiplier: 1000, last_trade_date: '2026-04-15', limit_up: 1057.5 });
  });

  it('an unknown contract: 200 with X-Missing-Symbols on quotes, 404 on K-lines', async () => {
    const get = await setup();
    const res = await app.inject({ url: '/v1/quotes?symbols=au2604.SHF,ag2606.SHF', headers: { 'x-api-key': KEYS.demo } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-missing-symbols']).toBe('ag2606.SHF');
    expect((await get('/v1/klines?symbol=ag2606.SHF&period=1d&count=2')).status).toBe(404);
  });
});
