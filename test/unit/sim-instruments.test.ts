import { describe, expect, it } from 'vitest';
import { POOL_IDS, type Exchange, type Region } from '../../src/domain.ts';
import { SIM_INSTRUMENTS, SIM_POOLS, findSimInstrument, simPoolMembers } from '../../adapters/sim/instruments.ts';

const REGION: Record<Exchange, Region> = { SH: 'CN', SZ: 'CN', BJ: 'CN', HK: 'HK', US: 'US', SHF: 'CN', DCE: 'CN', ZCE: 'CN', CFX: 'CN', INE: 'CN', GFE: 'CN' };

/** The exchange an A-share or ETF code belongs to, by its prefix rules (independent of the data). */
function cnExchangeOf(code: string, type: string): Exchange | undefined {
  if (type === 'etf') {
    if (code.startsWith('5')) return 'SH';
    if (code.startsWith('15')) return 'SZ';
    return undefined;
  }
  if (code.startsWith('920') || code.startsWith('4') || code.startsWith('8')) return 'BJ';
  if (code.startsWith('6') || code.startsWith('9')) return 'SH';
  if (code.startsWith('0') || code.startsWith('2') || code.startsWith('3')) return 'SZ';
  return undefined;
}

const cn = (pool: 'CN_Stock' | 'CN_ETF') => SIM_INSTRUMENTS.filter((i) => i.pool === pool);

describe('SIM_INSTRUMENTS', () => {
  it('has at least the minimum count per pool and in total', () => {
    expect(simPoolMembers('CN_Stock').length).toBeGreaterThanOrEqual(60);
    expect(simPoolMembers('CN_ETF').length).toBeGreaterThanOrEqual(20);
    expect(simPoolMembers('HK_Stock').length).toBeGreaterThanOrEqual(40);
    expect(simPoolMembers('US_Stock').length).toBeGreaterThanOrEqual(45);
    expect(SIM_INSTRUMENTS.length).toBeGreaterThanOrEqual(170);
  });

  it('has no duplicate symbols and every symbol is code.exchange', () => {
    expect(new Set(SIM_INSTRUMENTS.map((i) => i.symbol)).size).toBe(SIM_INSTRUMENTS.length);
    for (const i of SIM_INSTRUMENTS) expect(i.symbol).toBe(`${i.code}.${i.exchange}`);
  });

  it('uses the code shape of each market', () => {
    for (const i of SIM_INSTRUMENTS) {
      if (i.exchange === 'HK') expect(i.code, i.symbol).toMatch(i.type === 'index' ? /^[A-Z]+$/ : /^\d{5}$/);
      else if (i.exchange === 'US') expect(i.code, i.symbol).toMatch(/^[A-Z]+(\.[A-Z])?$/);
      else expect(i.code, i.symbol).toMatch(/^\d{6}$/);
    }
  });

  it('puts each CN code on the exchange its prefix belongs to', () => {
    for (const i of [...cn('CN_Stock'), ...cn('CN_ETF')]) {
      expect(i.exchange, i.symbol).toBe(cnExchangeOf(i.code, i.type));
    }
  });

  it('keeps region, pool and type consistent with the exchange', () => {
    for (const i of SIM_INSTRUMENTS) {
      expect(i.region, i.symbol).toBe(REGION[i.exchange]);
      const pool = i.type === 'index' ? `${i.region}_Index` : i.region === 'CN' ? (i.type === 'etf' ? 'CN_ETF' : 'CN_Stock') : `${i.region}_Stock`;
      expect(i.pool, i.symbol).toBe(pool);
      expect(['stock', 'etf', 'index']).toContain(i.type);
    }
  });

  it('has plausible share counts, prices and volatilities', () => {
    for (const i of SIM_INSTRUMENTS) {
      expect(Number.isInteger(i.totalShares) && i.totalShares > 0, i.symbol).toBe(true);
      expect(Number.isInteger(i.floatShares) && i.floatShares > 0, i.symbol).toBe(true);
      expect(i.floatShares, i.symbol).toBeLessThanOrEqual(i.totalShares);
      expect(i.price, i.symbol).toBeGreaterThan(0);
      expect(i.volatility, i.symbol).toBeGreaterThan(0);
      expect(i.volatility, i.symbol).toBeLessThan(1);
    }
  });

  it('has valid listing dates no later than 2026-11-21', () => {
    for (const i of SIM_INSTRUMENTS) {
      expect(i.listingDate, i.symbol).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      const parsed = new Date(`${i.listingDate}T00:00:00Z`);
      expect(parsed.toISOString().slice(0, 10), i.symbol).toBe(i.listingDate);
      expect(i.listingDate <= '2026-11-21', i.symbol).toBe(true);
    }
  });

  it('uses the lot size rules of each board', () => {
    for (const i of SIM_INSTRUMENTS) {
      expect(Number.isInteger(i.lotSize) && i.lotSize > 0, i.symbol).toBe(true);
      if (i.region === 'US') expect(i.lotSize, i.symbol).toBe(1);
      if (i.region === 'CN') expect(i.lotSize, i.symbol).toBe(i.code.startsWith('688') ? 200 : 100);
    }
    const lot = (s: string) => findSimInstrument(s)?.lotSize;
    expect([lot('00700.HK'), lot('00005.HK'), lot('00941.HK'), lot('01810.HK'), lot('02800.HK')])
      .toEqual([100, 400, 500, 200, 500]);
  });

  it('pays a yield exactly when it has a dividend policy', () => {
    for (const i of SIM_INSTRUMENTS) {
      if (i.dividend === 'none') expect(i.dividendYield, i.symbol).toBe(0);
      else {
        expect(i.dividendYield, i.symbol).toBeGreaterThan(0);
        expect(i.dividendYield, i.symbol).toBeLessThan(0.15);
      }
    }
    expect(['TSLA.US', 'AMZN.US', 'BRK.B.US', 'NFLX.US'].map((s) => findSimInstrument(s)?.dividend))
      .toEqual(['none', 'none', 'none', 'none']);
    expect(findSimInstrument('AAPL.US')?.dividend).toBe('quarterly');
  });

  it('marks ST names, and only those, as special treatment', () => {
    for (const i of SIM_INSTRUMENTS) {
      const stName = /^\*?ST/.test(i.name);
      expect(i.st === true, i.symbol).toBe(stName);
      if (stName) expect(i.pool, i.symbol).toBe('CN_Stock');
    }
  });

  it('covers every A-share board, ST, ETFs among HK/US stocks, bonus shares and splits', () => {
    const a = cn('CN_Stock');
    expect(a.filter((i) => i.exchange === 'BJ').length).toBeGreaterThanOrEqual(4);
    expect(a.some((i) => i.code.startsWith('688'))).toBe(true);
    expect(a.some((i) => /^30[01]/.test(i.code))).toBe(true);
    expect(a.some((i) => /^60[0135]/.test(i.code))).toBe(true);
    expect(a.some((i) => /^00[012]/.test(i.code))).toBe(true);
    expect(a.filter((i) => i.st).length).toBeGreaterThanOrEqual(2);
    expect(a.filter((i) => i.bonusShares).length).toBeGreaterThanOrEqual(8);
    expect(SIM_INSTRUMENTS.filter((i) => i.bonusShares && i.region !== 'CN')).toEqual([]);
    expect(SIM_INSTRUMENTS.filter((i) => i.splits).length).toBeGreaterThanOrEqual(5);
    expect(['AAPL.US', 'NVDA.US', 'TSLA.US', '00700.HK'].map((s) => findSimInstrument(s)?.splits))
      .toEqual([true, true, true, true]);
    expect(['02800.HK', '03033.HK', 'SPY.US', 'QQQ.US'].map((s) => findSimInstrument(s)?.type))
      .toEqual(['etf', 'etf', 'etf', 'etf']);
  });

  it('carries the real name and listing date of well-known names', () => {
    expect(findSimInstrument('600519.SH')).toMatchObject({
      code: '600519', exchange: 'SH', region: 'CN', name: '贵州茅台', type: 'stock', pool: 'CN_Stock',
      listingDate: '2001-08-27', lotSize: 100,
    });
    expect(findSimInstrument('00700.HK')).toMatchObject({
      code: '00700', exchange: 'HK', region: 'HK', name: '腾讯控股', pool: 'HK_Stock', listingDate: '2004-06-16',
    });
    expect(findSimInstrument('AAPL.US')).toMatchObject({
      code: 'AAPL', name: 'Apple Inc.', pool: 'US_Stock', listingDate: '1980-12-12', lotSize: 1,
    });
    expect(findSimInstrument('BRK.B.US')).toMatchObject({ code: 'BRK.B', exchange: 'US' });
    expect(findSimInstrument('688981.SH')).toMatchObject({ name: '中芯国际', lotSize: 200 });
    expect(findSimInstrument('300750.SZ')?.name).toBe('宁德时代');
    expect(findSimInstrument('430047.BJ')?.name).toBe('诺思兰德');
    expect(findSimInstrument('510300.SH')).toMatchObject({ name: '沪深300ETF华泰柏瑞', type: 'etf', pool: 'CN_ETF' });
    expect(findSimInstrument('159915.SZ')).toMatchObject({ type: 'etf', pool: 'CN_ETF' });
  });
});

describe('findSimInstrument', () => {
  it('returns the listed object for a normalised symbol and nothing otherwise', () => {
    const tencent = SIM_INSTRUMENTS.find((i) => i.symbol === '00700.HK');
    expect(findSimInstrument('00700.HK')).toBe(tencent);
    expect(findSimInstrument('700.HK')).toBeUndefined();
    expect(findSimInstrument('999999.SH')).toBeUndefined();
    expect(findSimInstrument('')).toBeUndefined();
  });

  it('finds every listed instrument', () => {
    for (const i of SIM_INSTRUMENTS) expect(findSimInstrument(i.symbol)).toBe(i);
  });
});

describe('simPoolMembers', () => {
  it('partitions the list by pool, in list order', () => {
    for (const pool of POOL_IDS) {
      expect(simPoolMembers(pool)).toEqual(SIM_INSTRUMENTS.filter((i) => i.pool === pool));
    }
    const total = POOL_IDS.reduce((n, pool) => n + simPoolMembers(pool).length, 0);
    expect(total).toBe(SIM_INSTRUMENTS.length);
    expect(simPoolMembers('CN_Stock')[0].symbol).toBe('600519.SH');
    expect(simPoolMembers('US_Stock')[0].symbol).toBe('AAPL.US');
  });

  it('returns the same array on every call', () => {
    expect(simPoolMembers('HK_Stock')).toBe(simPoolMembers('HK_Stock'));
  });
});

describe('SIM_POOLS', () => {
  it('describes the seven pools', () => {
    expect(SIM_POOLS).toEqual([
      { id: 'CN_Stock', name: 'A股', region: 'CN', category: 'equity' },
      { id: 'CN_ETF', name: '沪深ETF', region: 'CN', category: 'etf' },
      { id: 'HK_Stock', name: '港股', region: 'HK', category: 'equity' },
      { id: 'US_Stock', name: '美股', region: 'US', category: 'equity' },
      { id: 'CN_Index', name: 'A股指数', region: 'CN', category: 'index' },
      { id: 'HK_Index', name: '港股指数', region: 'HK', category: 'index' },
      { id: 'US_Index', name: '美股指数', region: 'US', category: 'index' },
    ]);
    expect(SIM_POOLS.map((p) => p.id).sort()).toEqual([...POOL_IDS].sort());
  });
});
