// Pool ids and their TickFlow aliases (docs/contract.md#symbols-regions-pools).
import type { PoolId, Region } from '../domain.ts';

const POOLS: Record<string, PoolId> = {
  CN_Stock: 'CN_Stock',
  CN_ETF: 'CN_ETF',
  HK_Stock: 'HK_Stock',
  US_Stock: 'US_Stock',
  CN_Index: 'CN_Index',
  HK_Index: 'HK_Index',
  US_Index: 'US_Index',
  // TickFlow names, accepted so its clients work unchanged.
  CN_Equity_A: 'CN_Stock',
  HK_Equity: 'HK_Stock',
  US_Equity: 'US_Stock',
};

export const POOL_REGION: Record<PoolId, Region> = {
  CN_Stock: 'CN',
  CN_ETF: 'CN',
  HK_Stock: 'HK',
  US_Stock: 'US',
  CN_Index: 'CN',
  HK_Index: 'HK',
  US_Index: 'US',
};

/** Canonical pool id for an id or alias (case-sensitive, like TickFlow); `undefined` if unknown. */
export function resolvePoolId(id: string): PoolId | undefined {
  return Object.hasOwn(POOLS, id) ? POOLS[id] : undefined;
}
