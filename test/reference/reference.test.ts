// GET /v1/exchanges, /v1/exchanges/{exchange}/instruments, /v1/calendar and /v1/market-status:
// exact values from the sim's bundled lists and the shipped holiday tables on known dates
// (CN National Day, an HK half day, the US switch to daylight saving time).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';

const clock = { t: Date.UTC(2025, 9, 1, 4, 0) };
let app: FastifyInstance;
beforeAll(async () => { ({ app } = await buildTestApp({ now: () => clock.t })); });
afterAll(async () => { await app.close(); });

async function get(url: string, key: string = KEYS.demo) {
  const res = await app.inject({ url, headers: { 'x-api-key': key } });
  return { status: res.statusCode, body: res.json() };
}

describe('GET /v1/exchanges', () => {
  it('lists every exchange with its region and instrument count (the sim bundle)', async () => {
    expect(await get('/v1/exchanges')).toEqual({
      status: 200,
      body: { data: [
        { exchange: 'SH', region: 'CN', count: 71 },
        { exchange: 'SZ', region: 'CN', count: 43 },
        { exchange: 'BJ', region: 'CN', count: 7 },
        { exchange: 'HK', region: 'HK', count: 62 },
        { exchange: 'US', region: 'US', count: 57 },
        // The sim's futures contracts live on 2025-10-01 (docs/futures.md).
        { exchange: 'SHF', region: 'CN', count: 30 },
        { exchange: 'DCE', region: 'CN', count: 32 },
        { exchange: 'ZCE', region: 'CN', count: 18 },
        { exchange: 'CFX', region: 'CN', count: 7 },
        { exchange: 'INE', region: 'CN', count: 11 },
        { exchange: 'GFE', region: 'CN', count: 12 },
      ] },
    });
  });

  it("lists only the plan's markets", async () => {
    const { body } = await get('/v1/exchanges', KEYS.cnDaily);
    expect(body.data.map((e: { exchange: string }) => e.exchange)).toEqual(['SH', 'SZ', 'BJ']);
  });

  it('needs a key (401) and the instruments feature (403)', async () => {
    expect((await app.inject({ url: '/v1/exchanges' })).statusCode).toBe(401);
    const { status, body } = await get('/v1/exchanges', KEYS.tiny);
    expect(status).toBe(403);
    expect(body.error).toBe('NO_INSTRUMENTS_PERMISSION');
  });
});

describe('GET /v1/exchanges/{exchange}/instruments', () => {
  it("TickFlow's shape: {exchange, count, data: Instrument[]}, the same objects as /v1/instruments", async () => {
    const { status, body } = await get('/v1/exchanges/BJ/instruments');
    expect(status).toBe(200);
    expect(body.exchange).toBe('BJ');
    expect(body.count).toBe(7);
    expect(body.data).toHaveLength(7);
    const symbols = body.data.map((i: { symbol: string }) => i.symbol);
    expect(symbols.every((s: string) => s.endsWith('.BJ'))).toBe(true);
    const rest = await get(`/v1/instruments?symbols=${symbols.join(',')}`);
    expect(body.data).toEqual(rest.body.data);
  });

  it('type filters, and the exchange code is case-insensitive', async () => {
    const { body } = await get('/v1/exchanges/sh/instruments?type=etf');
    expect(body.exchange).toBe('SH');
    expect(body.count).toBe(19);
    expect(body.data.every((i: { type: string; exchange: string }) => i.type === 'etf' && i.exchange === 'SH')).toBe(true);
    expect((await get('/v1/exchanges/HK/instruments?type=etf')).body.count).toBe(2);
    expect((await get('/v1/exchanges/HK/instruments?type=stock')).body.count).toBe(57);
    expect((await get('/v1/exchanges/US/instruments?type=futures')).body).toEqual({ exchange: 'US', count: 0, data: [] });
  });

  it('unknown exchange 404, bad type 400, a market the plan lacks 403', async () => {
    expect(await get('/v1/exchanges/SHFE/instruments')).toMatchObject({ status: 404, body: { error: 'NOT_FOUND', details: { exchange: 'SHFE' } } });
    expect(await get('/v1/exchanges/US/instruments?type=bogus')).toMatchObject({ status: 400, body: { error: 'INVALID_PARAMETER' } });
    expect(await get('/v1/exchanges/HK/instruments', KEYS.cnDaily)).toMatchObject({ status: 403, body: { error: 'MARKET_NOT_PERMITTED' } });
  });
});

describe('GET /v1/calendar', () => {
  it('CN around National Day 2025: the holiday week is closed and named', async () => {
    const { status, body } = await get('/v1/calendar?market=CN&start=2025-09-29&end=2025-10-10');
    expect(status).toBe(200);
    expect(body.market).toBe('CN');
    expect(body.timezone).toBe('Asia/Shanghai');
    expect(body.data.map((d: { date: string }) => d.date)).toEqual(['2025-09-29', '2025-09-30', '2025-10-09', '2025-10-10']);
    expect(body.holidays).toEqual([
      { date: '2025-10-01', name: 'National Day' },
      { date: '2025-10-02', name: 'National Day' },
      { date: '2025-10-03', name: 'National Day' },
      { date: '2025-10-06', name: 'Mid-Autumn Festival' },
      { date: '2025-10-07', name: 'National Day' },
      { date: '2025-10-08', name: 'National Day' },
    ]);
    expect(body.data[2]).toEqual({
      date: '2025-10-09', open: '09:30', close: '15:00', half_day: false,
      sessions: [
        { open: '09:30', close: '11:30', open_time: Date.UTC(2025, 9, 9, 1, 30), close_time: Date.UTC(2025, 9, 9, 3, 30) },
        { open: '13:00', close: '15:00', open_time: Date.UTC(2025, 9, 9, 5, 0), close_time: Date.UTC(2025, 9, 9, 7, 0) },
      ],
    });
    expect(body.coverage).toEqual({ first: '1990-12-19', last: '2026-12-31' });
    expect(body.unknown).toEqual([]);
  });

  it('HK Christmas Eve 2025 is a half day: the morning session only', async () => {
    const { body } = await get('/v1/calendar?market=HK&start=2025-12-24&end=2025-12-29');
    expect(body.data).toEqual([
      {
        date: '2025-12-24', open: '09:30', close: '12:00', half_day: true, note: 'Christmas Eve',
        sessions: [{ open: '09:30', close: '12:00', open_time: Date.UTC(2025, 11, 24, 1, 30), close_time: Date.UTC(2025, 11, 24, 4, 0) }],
      },
      {
        date: '2025-12-29', open: '09:30', close: '16:00', half_day: false,
        sessions: [
          { open: '09:30', close: '12:00', open_time: Date.UTC(2025, 11, 29, 1, 30), close_time: Date.UTC(2025, 11, 29, 4, 0) },
          { open: '13:00', close: '16:00', open_time: Date.UTC(2025, 11, 29, 5, 0), close_time: Date.UTC(2025, 11, 29, 8, 0) },
        ],
      },
    ]);
    expect(body.holidays.map((h: { date: string }) => h.date)).toEqual(['2025-12-25', '2025-12-26']);
  });

  it('US across the 2025-03-09 DST switch: the same 09:30 local, an hour earlier in UTC', async () => {
    const { body } = await get('/v1/calendar?market=US&start=2025-03-07&end=2025-03-10');
    expect(body.data.map((d: { date: string; sessions: Array<{ open_time: number; close_time: number }> }) => [d.date, d.sessions[0].open_time, d.sessions[0].close_time])).toEqual([
      ['2025-03-07', Date.UTC(2025, 2, 7, 14, 30), Date.UTC(2025, 2, 7, 21, 0)],
      ['2025-03-10', Date.UTC(2025, 2, 10, 13, 30), Date.UTC(2025, 2, 10, 20, 0)],
    ]);
    expect(body.data.every((d: { open: string; close: string }) => d.open === '09:30' && d.close === '16:00')).toBe(true);
  });

  it('defaults to today and the next 30 days; a US 13:00 early close', async () => {
    clock.t = Date.UTC(2025, 10, 27, 15, 0); // Thanksgiving 2025, New York morning
    const { body } = await get('/v1/calendar?market=US');
    expect(body.start).toBe('2025-11-27');
    expect(body.end).toBe('2025-12-27');
    expect(body.holidays).toEqual([{ date: '2025-11-27', name: 'Thanksgiving Day' }, { date: '2025-12-25', name: 'Christmas Day' }]);
    expect(body.data[0]).toMatchObject({ date: '2025-11-28', close: '13:00', half_day: true, note: 'Day after Thanksgiving' });
  });

  it('bad input: 400 with the reason', async () => {
    expect(await get('/v1/calendar?start=2025-01-01')).toMatchObject({ status: 400, body: { error: 'INVALID_PARAMETER', details: { parameter: 'market' } } });
    expect(await get('/v1/calendar?market=JP')).toMatchObject({ status: 400, body: { error: 'INVALID_PARAMETER' } });
    expect(await get('/v1/calendar?market=CN&start=2025-02-30')).toMatchObject({ status: 400, body: { error: 'INVALID_PARAMETER', details: { parameter: 'start' } } });
    expect(await get('/v1/calendar?market=CN&start=2025-13-01')).toMatchObject({ status: 400 });
    expect(await get('/v1/calendar?market=CN&start=2025-03-02&end=2025-03-01')).toMatchObject({ status: 400, body: { error: 'INVALID_TIME_RANGE' } });
    expect(await get('/v1/calendar?market=CN&start=2024-01-01&end=2026-01-01')).toMatchObject({ status: 400, body: { error: 'INVALID_TIME_RANGE' } });
  });
});

describe('GET /v1/market-status', () => {
  it('on CN National Day: CN closed until 2025-10-09 09:30, HK reopens the next day, US opens that morning', async () => {
    clock.t = Date.UTC(2025, 9, 1, 4, 0); // 12:00 in Shanghai and Hong Kong, 00:00 in New York
    const { status, body } = await get('/v1/market-status');
    expect(status).toBe(200);
    expect(body.data).toEqual([
      {
        market: 'CN', timezone: 'Asia/Shanghai', session: 'closed', is_open: false, local_time: '2025-10-01T12:00:00+08:00',
        next_open: Date.UTC(2025, 9, 9, 1, 30), next_open_local: '2025-10-09T09:30:00+08:00',
        next_close: Date.UTC(2025, 9, 9, 3, 30), next_close_local: '2025-10-09T11:30:00+08:00',
      },
      {
        market: 'HK', timezone: 'Asia/Hong_Kong', session: 'closed', is_open: false, local_time: '2025-10-01T12:00:00+08:00',
        next_open: Date.UTC(2025, 9, 2, 1, 30), next_open_local: '2025-10-02T09:30:00+08:00',
        next_close: Date.UTC(2025, 9, 2, 4, 0), next_close_local: '2025-10-02T12:00:00+08:00',
      },
      {
        market: 'US', timezone: 'America/New_York', session: 'closed', is_open: false, local_time: '2025-10-01T00:00:00-04:00',
        next_open: Date.UTC(2025, 9, 1, 13, 30), next_open_local: '2025-10-01T09:30:00-04:00',
        next_close: Date.UTC(2025, 9, 1, 20, 0), next_close_local: '2025-10-01T16:00:00-04:00',
      },
      {
        // Every futures product together: no night session on the 2025-09-30 eve, so 09:00 on the 9th.
        market: 'CN_FUTURES', timezone: 'Asia/Shanghai', session: 'closed', is_open: false, local_time: '2025-10-01T12:00:00+08:00',
        next_open: Date.UTC(2025, 9, 9, 1, 0), next_open_local: '2025-10-09T09:00:00+08:00',
        next_close: Date.UTC(2025, 9, 9, 3, 30), next_close_local: '2025-10-09T11:30:00+08:00',
      },
    ]);
  });

  it('HK half day: open until 12:00, then closed until after Christmas', async () => {
    clock.t = Date.UTC(2025, 11, 24, 3, 0); // 11:00 HKT
    expect((await get('/v1/market-status?market=HK')).body.data).toEqual([{
      market: 'HK', timezone: 'Asia/Hong_Kong', session: 'regular', is_open: true, local_time: '2025-12-24T11:00:00+08:00',
      next_open: Date.UTC(2025, 11, 29, 1, 30), next_open_local: '2025-12-29T09:30:00+08:00',
      next_close: Date.UTC(2025, 11, 24, 4, 0), next_close_local: '2025-12-24T12:00:00+08:00',
    }]);
    clock.t = Date.UTC(2025, 11, 24, 4, 30); // 12:30 HKT
    expect((await get('/v1/market-status?market=HK')).body.data[0]).toMatchObject({ session: 'closed', is_open: false, next_close: Date.UTC(2025, 11, 29, 4, 0) });
  });

  it('US over the DST switch: Friday after the close (EST) → Monday 09:30 EDT', async () => {
    clock.t = Date.UTC(2025, 2, 7, 22, 0); // 17:00 EST
    expect((await get('/v1/market-status?market=US')).body.data[0]).toEqual({
      market: 'US', timezone: 'America/New_York', session: 'after_hours', is_open: false, local_time: '2025-03-07T17:00:00-05:00',
      next_open: Date.UTC(2025, 2, 10, 13, 30), next_open_local: '2025-03-10T09:30:00-04:00',
      next_close: Date.UTC(2025, 2, 10, 20, 0), next_close_local: '2025-03-10T16:00:00-04:00',
    });
  });

  it('CN lunch break: next open is the afternoon session', async () => {
    clock.t = Date.UTC(2025, 5, 18, 4, 0); // 12:00 CST, Wednesday
    expect((await get('/v1/market-status?market=CN')).body.data[0]).toMatchObject({
      session: 'lunch_break', is_open: false,
      next_open_local: '2025-06-18T13:00:00+08:00', next_close_local: '2025-06-18T15:00:00+08:00',
    });
  });

  it('needs a valid key only (401 without; a quotes-only plan may read it)', async () => {
    expect((await app.inject({ url: '/v1/market-status' })).statusCode).toBe(401);
    expect((await get('/v1/market-status', KEYS.tiny)).status).toBe(200);
    expect((await get('/v1/calendar?market=CN', KEYS.tiny)).status).toBe(200);
  });
});
