// Symbol parsing and list parsing (docs/contract.md#symbols-regions-pools), exact values.
import { describe, expect, it } from 'vitest';
import { parseList, parseSymbol, parseSymbolList, regionOf } from '../../src/markets/symbols.ts';

describe('parseSymbol', () => {
  it.each([
    ['600519.SH', { symbol: '600519.SH', code: '600519', exchange: 'SH', region: 'CN' }],
    ['000001.SZ', { symbol: '000001.SZ', code: '000001', exchange: 'SZ', region: 'CN' }],
    ['430047.BJ', { symbol: '430047.BJ', code: '430047', exchange: 'BJ', region: 'CN' }],
    ['920662.bj', { symbol: '920662.BJ', code: '920662', exchange: 'BJ', region: 'CN' }],
    ['00700.HK', { symbol: '00700.HK', code: '00700', exchange: 'HK', region: 'HK' }],
    ['700.HK', { symbol: '00700.HK', code: '00700', exchange: 'HK', region: 'HK' }],
    ['700.hk', { symbol: '00700.HK', code: '00700', exchange: 'HK', region: 'HK' }],
    ['1.HK', { symbol: '00001.HK', code: '00001', exchange: 'HK', region: 'HK' }],
    ['09988.Hk', { symbol: '09988.HK', code: '09988', exchange: 'HK', region: 'HK' }],
    ['AAPL.US', { symbol: 'AAPL.US', code: 'AAPL', exchange: 'US', region: 'US' }],
    ['aapl.us', { symbol: 'AAPL.US', code: 'AAPL', exchange: 'US', region: 'US' }],
    ['BRK.B.US', { symbol: 'BRK.B.US', code: 'BRK.B', exchange: 'US', region: 'US' }],
    ['brk.b.us', { symbol: 'BRK.B.US', code: 'BRK.B', exchange: 'US', region: 'US' }],
    ['BF-B.US', { symbol: 'BF-B.US', code: 'BF-B', exchange: 'US', region: 'US' }],
    ['600519.sh', { symbol: '600519.SH', code: '600519', exchange: 'SH', region: 'CN' }],
    ['000001.Sz', { symbol: '000001.SZ', code: '000001', exchange: 'SZ', region: 'CN' }],
    ['  600519.SH  ', { symbol: '600519.SH', code: '600519', exchange: 'SH', region: 'CN' }],
    ['\t00700.HK\n', { symbol: '00700.HK', code: '00700', exchange: 'HK', region: 'HK' }],
  ])('%j → %j', (input, expected) => {
    expect(parseSymbol(input)).toEqual(expected);
  });

  it.each([
    '', '   ', '600519', 'AAPL', '600519.', '.SH', '.', '600519.XX', '600519.SHA', '12.XX', 'FOO',
    '60051.SH', '6005190.SH', 'ABCDEF.SH', '60051A.SZ', '430047.bj.', '600519.SH.SH', '-600519.SH',
    '123456.HK', '.HK', 'ABC.HK', '7 00.HK', '-1.HK', '00700.HKG',
    '1ABC.US', 'BRK..B.US', 'BRK.B..US', '.AAPL.US', 'A B.US', 'ABCDEFGHIJKLM.US', `${'A'.repeat(30)}.US`,
    '600 519.SH', '６００５１９.SH', '600519 .SH',
  ])('%j is not a symbol', (input) => {
    expect(parseSymbol(input)).toBeUndefined();
  });
});

describe('regionOf', () => {
  it('maps every exchange to its region', () => {
    expect(['SH', 'SZ', 'BJ', 'HK', 'US'].map((e) => regionOf(e as never))).toEqual(['CN', 'CN', 'CN', 'HK', 'US']);
  });
});

describe('parseList', () => {
  it('trims items, ignores empty ones, keeps the first occurrence in place', () => {
    expect(parseList(' b , a,,b , c,a ,  ')).toEqual(['b', 'a', 'c']);
  });
  it('empty inputs give []', () => {
    expect(parseList(undefined)).toEqual([]);
    expect(parseList('')).toEqual([]);
    expect(parseList(',,, ,')).toEqual([]);
    expect(parseList([])).toEqual([]);
    expect(parseList(['', ' '])).toEqual([]);
  });
  it('a single item', () => {
    expect(parseList('600519.SH')).toEqual(['600519.SH']);
  });
  it('arrays (POST bodies) are flattened the same way, commas inside items split', () => {
    expect(parseList(['a,b', ' c ', 'a', 'b,d'])).toEqual(['a', 'b', 'c', 'd']);
  });
  it('does not normalise: duplicates are exact-text duplicates', () => {
    expect(parseList('700.HK,00700.HK,700.HK')).toEqual(['700.HK', '00700.HK']);
  });
});

describe('parseSymbolList', () => {
  it('normalises, then drops duplicates: 700.hk and 00700.HK are one symbol', () => {
    const { refs, invalid } = parseSymbolList(['700.hk', '600519.sh', '00700.HK', '600519.SH', 'aapl.us', 'AAPL.US']);
    expect(refs.map((r) => r.symbol)).toEqual(['00700.HK', '600519.SH', 'AAPL.US']);
    expect(invalid).toEqual([]);
  });

  it('collects every invalid item in order and keeps the valid ones', () => {
    const { refs, invalid } = parseSymbolList(['FOO', '600519.SH', '12.XX', 'FOO', '00700.HK']);
    expect(refs).toEqual([
      { symbol: '600519.SH', code: '600519', exchange: 'SH', region: 'CN' },
      { symbol: '00700.HK', code: '00700', exchange: 'HK', region: 'HK' },
    ]);
    expect(invalid).toEqual(['FOO', '12.XX', 'FOO']);
  });

  it('an empty list', () => {
    expect(parseSymbolList([])).toEqual({ refs: [], invalid: [] });
  });

  it('composes with parseList for a query string', () => {
    expect(parseSymbolList(parseList(' 700.hk ,,00700.HK, brk.b.us')).refs.map((r) => r.symbol)).toEqual(['00700.HK', 'BRK.B.US']);
  });
});
