// GET /v1/calendar over the historical tables: 2020-01-01 is a CN holiday (it was listed as a trading
// day when the tables started in 2023), and days outside coverage are listed in `unknown` only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => { ({ app } = await buildTestApp({ now: () => Date.UTC(2026, 10, 25, 4) })); });
afterAll(async () => { await app.close(); });

async function get(url: string) {
  const res = await app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
  return { status: res.statusCode, body: res.json() };
}

describe('GET /v1/calendar, historical', () => {
  it('CN 2020-01-01..10: New Year is a holiday, not a trading day', async () => {
    const { status, body } = await get('/v1/calendar?market=CN&start=2020-01-01&end=2020-01-10');
    expect(status).toBe(200);
    expect(body.data.map((d: { date: string }) => d.date)).toEqual([
      '2020-01-02', '2020-01-03', '2020-01-06', '2020-01-07', '2020-01-08', '2020-01-09', '2020-01-10',
    ]);
    expect(body.holidays).toEqual([{ date: '2020-01-01', name: "New Year's Day" }]);
    expect(body.unknown).toEqual([]);
    expect(body.coverage).toEqual({ first: '1990-12-19', last: '2026-12-31' });
  });

  it('flags every day outside coverage as unknown and gives it no session', async () => {
    const before = (await get('/v1/calendar?market=CN&start=1990-12-15&end=1990-12-21')).body;
    expect(before.unknown).toEqual(['1990-12-15', '1990-12-16', '1990-12-17', '1990-12-18']);
    expect(before.data.map((d: { date: string }) => d.date)).toEqual(['1990-12-19', '1990-12-20', '1990-12-21']);
    expect(before.holidays).toEqual([]);

    const after = (await get('/v1/calendar?market=CN&start=2026-12-30&end=2027-01-05')).body;
    expect(after.data.map((d: { date: string }) => d.date)).toEqual(['2026-12-30', '2026-12-31']);
    expect(after.unknown).toEqual(['2027-01-01', '2027-01-02', '2027-01-03', '2027-01-04', '2027-01-05']);
    expect(after.holidays).toEqual([]);

    const outside = (await get('/v1/calendar?market=US&start=1985-01-01&end=1985-01-31')).body;
    expect(outside.data).toEqual([]);
    expect(outside.unknown).toHaveLength(31);
  });

  it('historical session times and shortened days', async () => {
    const hk = (await get('/v1/calendar?market=HK&start=2008-12-23&end=2008-12-24')).body;
    expect(hk.data.map((d: { date: string; open: string; close: string; half_day: boolean }) => [d.date, d.open, d.close, d.half_day])).toEqual([
      ['2008-12-23', '10:00', '16:00', false], ['2008-12-24', '10:00', '12:30', true],
    ]);
    expect(hk.data[0].sessions.map((s: { open: string; close: string }) => [s.open, s.close])).toEqual([['10:00', '12:30'], ['14:30', '16:00']]);
    const us = (await get('/v1/calendar?market=US&start=2001-09-10&end=2001-09-17')).body;
    expect(us.data.map((d: { date: string }) => d.date)).toEqual(['2001-09-10', '2001-09-17']);
    expect(us.data[1]).toMatchObject({ open: '09:33', half_day: false, note: 'Late open: moment of silence after September 11' });
    expect(us.holidays.map((h: { name: string }) => h.name)).toEqual(Array(4).fill('September 11 attacks'));
  });
});
