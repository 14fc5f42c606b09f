// Indices on TickFlow pass through: the gateway's index symbols (000001.SH, 399006.SZ, HSI.HK,
// SPX.US) parse, reach the vendor unchanged on every by-symbol route, and 000001.SH is never sent
// as 000001.SZ or the reverse. The universe CN_Index is TickFlow's own id; HK_Index and US_Index
// have no TickFlow universe and are not asked.
import { describe, expect, it } from 'vitest';
import { createTickflowAdapter } from '../../adapters/tickflow/index.ts';
import { TICKFLOW_TEST_BASE as BASE, tickflowHandlers } from '../../mocks/handlers/tickflow.ts';
import type { CapturedRequest } from '../../mocks/handlers/support.ts';
import { cnTime, ref, testHttp, vendorServer } from './helpers.ts';

const log: CapturedRequest[] = [];
vendorServer(tickflowHandlers(log), () => {
  log.length = 0;
});
const adapter = () => createTickflowAdapter({ baseUrl: BASE, apiKey: 'test-key' }, { now: () => cnTime('2026-11-27', '16:00'), http: testHttp('tickflow') });
const INDICES = ['000001.SH', '399006.SZ', '000300.SH', 'HSI.HK', 'SPX.US'];

describe('tickflow: index symbols pass through', () => {
  it('quotes: the symbols parameter carries the index symbols as given, beside 000001.SZ', async () => {
    await adapter().getQuotes([...INDICES, '000001.SZ'].map(ref));
    expect(log.map((r) => r.url.searchParams.get('symbols'))).toEqual(['000001.SH,399006.SZ,000300.SH,HSI.HK,SPX.US,000001.SZ']);
  });

  it('klines (1d and 1m) and intraday: symbol=000001.SH, never 000001.SZ', async () => {
    const a = adapter();
    await a.getCandles({ symbol: ref('000001.SH'), period: '1d', count: 5 });
    await a.getCandles({ symbol: ref('000001.SH'), period: '1m', count: 5 });
    await a.getIntraday!(ref('000001.SH'));
    await a.getCandles({ symbol: ref('000001.SZ'), period: '1d', count: 5 });
    expect(log.map((r) => `${r.url.pathname}?${r.url.searchParams.get('symbol')}`)).toEqual([
      '/v1/klines?000001.SH', '/v1/klines?000001.SH', '/v1/klines/intraday?000001.SH', '/v1/klines?000001.SZ',
    ]);
    expect(log.map((r) => r.url.searchParams.get('period'))).toEqual(['1d', '1m', '1m', '1d']);
  });

  it('instruments: POST {symbols} with the index symbols unchanged', async () => {
    await adapter().getInstruments(INDICES.map(ref));
    expect(log).toHaveLength(1);
    expect(JSON.parse(log[0].body)).toEqual({ symbols: INDICES });
  });

  it('universes: CN_Index asked as CN_Index; HK_Index and US_Index not asked', async () => {
    const a = adapter();
    expect(await a.listPool!('CN_Index')).toBeUndefined();
    expect(await a.listPool!('HK_Index')).toBeUndefined();
    expect(await a.listPool!('US_Index')).toBeUndefined();
    expect(log.map((r) => r.url.pathname)).toEqual(['/v1/universes/CN_Index']);
  });
});
