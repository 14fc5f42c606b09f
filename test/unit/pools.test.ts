// Pool ids, TickFlow aliases and pool regions (docs/contract.md#symbols-regions-pools).
import { describe, expect, it } from 'vitest';
import { POOL_REGION, resolvePoolId } from '../../src/markets/pools.ts';

describe('resolvePoolId', () => {
  it.each([
    ['CN_Stock', 'CN_Stock'],
    ['CN_ETF', 'CN_ETF'],
    ['HK_Stock', 'HK_Stock'],
    ['US_Stock', 'US_Stock'],
    ['CN_Equity_A', 'CN_Stock'],
    ['HK_Equity', 'HK_Stock'],
    ['US_Equity', 'US_Stock'],
  ])('%s → %s', (id, pool) => {
    expect(resolvePoolId(id)).toBe(pool);
  });

  it.each([
    'cn_stock', 'CN_STOCK', 'cn_equity_a', 'CN_Equity', 'US_ETF', 'HK_ETF', 'CN_Stock ', ' CN_Stock', '',
    'toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf',
  ])('%j is unknown (ids are case-sensitive; no prototype keys)', (id) => {
    expect(resolvePoolId(id)).toBeUndefined();
  });
});

describe('POOL_REGION', () => {
  it('gives the market of every canonical pool', () => {
    expect(POOL_REGION).toEqual({ CN_Stock: 'CN', CN_ETF: 'CN', HK_Stock: 'HK', US_Stock: 'US', CN_Index: 'CN', HK_Index: 'HK', US_Index: 'US' });
  });

  it('aliases resolve into a pool with a region', () => {
    expect(['CN_Equity_A', 'HK_Equity', 'US_Equity'].map((id) => POOL_REGION[resolvePoolId(id)!])).toEqual(['CN', 'HK', 'US']);
  });
});
