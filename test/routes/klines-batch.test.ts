// GET /v1/klines/batch: {symbol: Candles}, each equal to the single-symbol answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { expectCandles, utc8, type CandlesBody } from '../helpers/candles.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

const headers = { 'x-api-key': KEYS.demo };
const single = async (q: string): Promise<CandlesBody> => (await app.inject({ url: `/v1/klines?${q}`, headers })).json().data;

describe('GET /v1/klines/batch', () => {
  it('README example: weekly bars of a CN and a US symbol, count 3', async () => {
    const res = await app.inject({ url: '/v1/klines/batch?symbols=600519.SH,AAPL.US&period=1w&count=3', headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('sim');
    expect(res.headers['x-missing-symbols']).toBeUndefined();
    const data = res.json().data as Record<string, CandlesBody>;
    expect(Object.keys(data)).toEqual(['600519.SH', 'AAPL.US']);
    for (const c of Object.values(data)) {
      expectCandles(c);
      expect(c.timestamp.length).toBe(3);
    }
    expect(data['600519.SH']).toEqual(await single('symbol=600519.SH&period=1w&count=3'));
    expect(data['AAPL.US']).toEqual(await single('symbol=AAPL.US&period=1w&count=3'));
  });

  it('normalises and de-duplicates symbols; unknown ones are omitted and listed', async () => {
    const res = await app.inject({ url: '/v1/klines/batch?symbols=700.hk,ZZZZ.US,00700.HK,600519.sh,999999.SH&count=2&adjust=none', headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-missing-symbols']).toBe('ZZZZ.US,999999.SH');
    const data = res.json().data as Record<string, CandlesBody>;
    expect(Object.keys(data)).toEqual(['00700.HK', '600519.SH']);
    expect(data['00700.HK']).toEqual(await single('symbol=00700.HK&count=2&adjust=none'));
  });

  it('passes period, count, window and adjust through to every symbol', async () => {
    const q = `period=1d&count=4&adjust=backward&start_time=${utc8('2025-05-01')}&end_time=${utc8('2025-05-31')}`;
    const res = await app.inject({ url: `/v1/klines/batch?symbols=600519.SH,000001.SZ&${q}`, headers });
    expect(res.statusCode).toBe(200);
    const data = res.json().data as Record<string, CandlesBody>;
    expect(data['600519.SH']).toEqual(await single(`symbol=600519.SH&${q}`));
    expect(data['000001.SZ']).toEqual(await single(`symbol=000001.SZ&${q}`));
    expect(data['600519.SH'].timestamp.at(-1)).toBe(utc8('2025-05-30'));
  });

  it('minute periods in a batch', async () => {
    const res = await app.inject({ url: '/v1/klines/batch?symbols=600519.SH,00700.HK&period=15m&count=5', headers });
    expect(res.statusCode).toBe(200);
    const data = res.json().data as Record<string, CandlesBody>;
    expect(data['00700.HK']).toEqual(await single('symbol=00700.HK&period=15m&count=5'));
  });

  it('only unknown symbols: 200 with an empty map, every symbol listed', async () => {
    const res = await app.inject({ url: '/v1/klines/batch?symbols=ZZZZ.US,999999.SH', headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: {} });
    expect(res.headers['x-missing-symbols']).toBe('ZZZZ.US,999999.SH');
  });
});
