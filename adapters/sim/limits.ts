// A-share daily price limits (涨跌停). Limits are computed in integer grid units so the
// round-half-up of prev_close × (1 ± p) is exact: 10.05 × 1.1 must give 11.06, whatever the
// double arithmetic of 11.055 would say.

import type { Exchange, InstrumentType, Region } from '../../src/domain.ts';
import { priceDecimals } from './ticks.ts';

export interface LimitRules {
  region: Region;
  exchange: Exchange;
  code: string;
  type: InstrumentType;
  st?: boolean;
}

export interface LimitPrices {
  up: number;
  down: number;
}

/** The limit in whole percent, or undefined for markets without daily limits (HK, US) and for indices. */
export function limitPercent(rules: LimitRules): number | undefined {
  if (rules.region !== 'CN' || rules.type === 'index') return undefined;
  if (rules.type === 'etf') return 10;
  if (rules.exchange === 'BJ') return 30;
  const growthBoard = /^(300|301|688|689)/.test(rules.code);
  if (growthBoard) return 20;
  return rules.st ? 5 : 10;
}

/** Limit-up and limit-down prices from the base price (previous close or ex-rights reference). */
export function limitPrices(rules: LimitRules, base: number): LimitPrices | undefined {
  return limitPricesAt(rules, limitPercent(rules), base);
}

/** limitPrices with the instrument's limitPercent already known (the walk asks once per run of days). */
export function limitPricesAt(rules: LimitRules, pct: number | undefined, base: number): LimitPrices | undefined {
  if (pct === undefined) return undefined;
  const decimals = priceDecimals(rules);
  const scale = 10 ** decimals;
  const units = Math.round(base * scale);
  const up = Math.floor((units * (100 + pct) + 50) / 100);
  // At least one grid unit, so a limit-down price is never zero.
  const down = Math.max(1, Math.floor((units * (100 - pct) + 50) / 100));
  return { up: up / scale, down: down / scale };
}
