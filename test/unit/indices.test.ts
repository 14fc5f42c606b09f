// Which symbols are indices (src/markets/indices.ts), exact values: the suffix decides for CN codes,
// HK index codes are letters and parse in any case, and the tables that name indices elsewhere (the
// sim's instruments, the Eastmoney secids, the Yahoo tickers) agree with it.
import { describe, expect, it } from 'vitest';
import { HK_INDEX_CODES, US_INDEX_CODES, isIndexCode, isIndexSymbol } from '../../src/markets/indices.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { SIM_INSTRUMENTS } from '../../adapters/sim/instruments.ts';
import { INDEX_SECIDS } from '../../adapters/eastmoney/requests.ts';
import { YAHOO_INDEX_TICKERS } from '../../adapters/yahoo/requests.ts';

describe('parseSymbol: HK index codes', () => {
  it.each([
    ['HSI.HK', 'HSI'], ['hsi.hk', 'HSI'], ['HsCeI.Hk', 'HSCEI'], ['hstech.HK', 'HSTECH'],
  ])('%s → %s.HK, never padded', (input, code) => {
    expect(parseSymbol(input)).toEqual({ symbol: `${code}.HK`, code, exchange: 'HK', region: 'HK' });
  });

  it.each(['ABC.HK', 'HSI1.HK', 'HS I.HK', 'HSIX.HK', 'SPX.HK'])('%s is not a symbol (letters only for the known HK indices)', (input) => {
    expect(parseSymbol(input)).toBeUndefined();
  });
});

describe('isIndexCode: the suffix decides', () => {
  it.each([
    ['000001', 'SH', true], ['000300', 'SH', true], ['000688', 'SH', true], ['600000', 'SH', false], ['688981', 'SH', false],
    ['399006', 'SH', false], ['000001', 'SZ', false], ['399001', 'SZ', true], ['300750', 'SZ', false],
    ['899050', 'BJ', true], ['920662', 'BJ', false], ['HSI', 'HK', true], ['00700', 'HK', false],
    ['SPX', 'US', true], ['NDX', 'US', true], ['DJI', 'US', true], ['SPY', 'US', false], ['AAPL', 'US', false],
  ] as const)('%s.%s → %s', (code, exchange, expected) => {
    expect(isIndexCode(code, exchange)).toBe(expected);
    expect(isIndexSymbol(parseSymbol(`${code}.${exchange}`)!)).toBe(expected);
  });
});

describe('the index tables agree', () => {
  it('a sim instrument is of type index exactly when its symbol is an index', () => {
    for (const i of SIM_INSTRUMENTS) expect(i.type === 'index', i.symbol).toBe(isIndexCode(i.code, i.exchange));
  });

  it('Eastmoney and Yahoo name every HK and US index and nothing else', () => {
    const expected = [...[...HK_INDEX_CODES].map((c) => `${c}.HK`), ...[...US_INDEX_CODES].map((c) => `${c}.US`)].sort();
    expect(Object.keys(INDEX_SECIDS).sort()).toEqual(expected);
    expect(Object.keys(YAHOO_INDEX_TICKERS).sort()).toEqual(expected);
  });

  it('no US index code is a sim US ticker', () => {
    const tickers = new Set(SIM_INSTRUMENTS.filter((i) => i.exchange === 'US' && i.type !== 'index').map((i) => i.code));
    for (const code of US_INDEX_CODES) expect(tickers.has(code), code).toBe(false);
  });
});
