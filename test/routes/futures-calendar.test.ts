// GET /v1/calendar?market=CN_FUTURES[&product=], /v1/market-status for CN_FUTURES, and the plan
// market CN_FUTURES: a key without it gets 403 for a contract, with it the request passes access.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';

const sh = (date: string, hhmm: string) => Date.parse(`${date}T${hhmm}:00+08:00`);
const clock = { t: sh('2025-06-13', '22:00') };
let app: FastifyInstance;
beforeAll(async () => { ({ app } = await buildTestApp({ now: () => clock.t })); });
afterAll(async () => { await app.close(); });

async function get(url: string, key: string = KEYS.demo) {
  const res = await app.inject({ url, headers: { 'x-api-key': key } });
  return { status: res.statusCode, body: res.json() };
}

describe('GET /v1/calendar?market=CN_FUTURES', () => {
  it("a product's sessions: Friday's night under Monday, none after the National Day eve", async () => {
    const { status, body } = await get('/v1/calendar?market=CN_FUTURES&product=AU&start=2025-06-13&end=2025-06-16');
    expect(status).toBe(200);
    expect(body).toMatchObject({ market: 'CN_FUTURES', product: 'au', timezone: 'Asia/Shanghai', coverage: { first: '2020-07-20', last: '2026-12-31' }, holidays: [], unknown: [] });
    expect(body.data.map((d: { date: string }) => d.date)).toEqual(['2025-06-13', '2025-06-16']);
    const monday = body.data[1];
    expect(monday).toMatchObject({ date: '2025-06-16', open: '21:00', close: '15:00', half_day: false });
    expect(monday.sessions).toEqual([
      { open: '21:00', close: '02:30', open_time: sh('2025-06-13', '21:00'), close_time: sh('2025-06-14', '02:30'), night: true },
      { open: '09:00', close: '10:15', open_time: sh('2025-06-16', '09:00'), close_time: sh('2025-06-16', '10:15'), night: false },
      { open: '10:30', close: '11:30', open_time: sh('2025-06-16', '10:30'), close_time: sh('2025-06-16', '11:30'), night: false },
      { open: '13:30', close: '15:00', open_time: sh('2025-06-16', '13:30'), close_time: sh('2025-06-16', '15:00'), night: false },
    ]);

    const holiday = (await get('/v1/calendar?market=CN_FUTURES&product=i&start=2025-09-30&end=2025-10-09')).body;
    expect(holiday.data.map((d: { date: string; sessions: { night: boolean }[] }) => [d.date, d.sessions.filter((w) => w.night).length])).toEqual([
      ['2025-09-30', 1], ['2025-10-09', 0],
    ]);
    expect(holiday.data[0].sessions[0]).toMatchObject({ open: '21:00', close: '23:00', open_time: sh('2025-09-29', '21:00') });
    expect(holiday.holidays.map((h: { date: string }) => h.date)).toEqual(['2025-10-01', '2025-10-02', '2025-10-03', '2025-10-06', '2025-10-07', '2025-10-08']);
  });

  it('without a product: every product together; CFFEX products have no night', async () => {
    const all = (await get('/v1/calendar?market=CN_FUTURES&start=2025-06-16&end=2025-06-16')).body;
    expect(all.product).toBeUndefined();
    expect(all.data[0].sessions.map((w: { open: string; close: string }) => `${w.open}-${w.close}`)).toEqual(['21:00-02:30', '09:00-11:30', '13:00-15:15']);
    const treasury = (await get('/v1/calendar?market=CN_FUTURES&product=T&start=2025-06-16&end=2025-06-16')).body;
    expect(treasury.data[0].sessions.map((w: { open: string; close: string }) => `${w.open}-${w.close}`)).toEqual(['09:30-11:30', '13:00-15:15']);
  });

  it('before coverage: unknown; an unknown product or a product on another market: 400', async () => {
    expect((await get('/v1/calendar?market=CN_FUTURES&start=2020-07-16&end=2020-07-20')).body.unknown).toEqual(['2020-07-16', '2020-07-17', '2020-07-18', '2020-07-19']);
    const unknown = await get('/v1/calendar?market=CN_FUTURES&product=zz');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: 'INVALID_PARAMETER', details: { parameter: 'product' } });
    expect((await get('/v1/calendar?market=CN&product=au')).status).toBe(400);
  });
});

describe('GET /v1/market-status for CN_FUTURES', () => {
  it('Friday 22:00: gold in its night session (closing Saturday 02:30), rebar closed after 23:00, CN equities closed', async () => {
    clock.t = sh('2025-06-13', '22:00');
    const all = (await get('/v1/market-status')).body.data;
    expect(all.map((m: { market: string }) => m.market)).toEqual(['CN', 'HK', 'US', 'CN_FUTURES']);
    expect(all[3]).toEqual({
      market: 'CN_FUTURES', timezone: 'Asia/Shanghai', session: 'regular', is_open: true, local_time: '2025-06-13T22:00:00+08:00',
      next_open: sh('2025-06-16', '09:00'), next_open_local: '2025-06-16T09:00:00+08:00',
      next_close: sh('2025-06-14', '02:30'), next_close_local: '2025-06-14T02:30:00+08:00',
    });
    clock.t = sh('2025-06-13', '23:30');
    expect((await get('/v1/market-status?market=CN_FUTURES&product=rb')).body.data).toEqual([{
      market: 'CN_FUTURES', product: 'rb', timezone: 'Asia/Shanghai', session: 'closed', is_open: false, local_time: '2025-06-13T23:30:00+08:00',
      next_open: sh('2025-06-16', '09:00'), next_open_local: '2025-06-16T09:00:00+08:00',
      next_close: sh('2025-06-16', '10:15'), next_close_local: '2025-06-16T10:15:00+08:00',
    }]);
    expect((await get('/v1/market-status?market=CN_FUTURES&product=IF')).body.data[0]).toMatchObject({ product: 'IF', session: 'closed', next_open_local: '2025-06-16T09:30:00+08:00' });
  });

  it('the eve of a holiday: no night session; the next open is after the holiday', async () => {
    clock.t = sh('2025-09-30', '21:30');
    expect((await get('/v1/market-status?market=CN_FUTURES&product=au')).body.data[0]).toMatchObject({
      session: 'closed', is_open: false, next_open_local: '2025-10-09T09:00:00+08:00',
    });
    clock.t = sh('2025-10-09', '20:58');
    expect((await get('/v1/market-status?market=CN_FUTURES&product=au')).body.data[0]).toMatchObject({
      session: 'pre_market', next_open_local: '2025-10-09T21:00:00+08:00', next_close_local: '2025-10-10T02:30:00+08:00',
    });
  });

  it('product without CN_FUTURES: 400', async () => {
    expect((await get('/v1/market-status?market=CN&product=au')).status).toBe(400);
    expect((await get('/v1/market-status?product=au')).status).toBe(400);
  });
});

describe('plan market CN_FUTURES', () => {
  it('a key whose plan lacks it gets 403 MARKET_NOT_PERMITTED naming CN_FUTURES and the contract', async () => {
    const { status, body } = await get('/v1/quotes?symbols=600000.SH,au2604.SHF', KEYS.cnDaily);
    expect(status).toBe(403);
    expect(body).toMatchObject({ error: 'MARKET_NOT_PERMITTED', details: { missing_markets: ['CN_FUTURES'], symbols: ['au2604.SHF'] } });
    expect(body.message).toContain('market CN_FUTURES');
    const kline = await get('/v1/klines?symbol=SR605.ZCE&period=1d', KEYS.cnDaily);
    expect(kline.status).toBe(403);
    expect(kline.body.details.missing_markets).toEqual(['CN_FUTURES']);
  });

  it('/v1/me lists it for a plan that grants it', async () => {
    expect((await get('/v1/me')).body.data.markets).toEqual(['CN', 'HK', 'US', 'CN_FUTURES']);
    expect((await get('/v1/me', KEYS.cnDaily)).body.data.markets).toEqual(['CN']);
  });
});
