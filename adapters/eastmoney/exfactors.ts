// A-share ex-factors from Eastmoney's dividend table (RPT_SHAREBONUS_DET) and raw daily closes
// (reference/vendors.md §1.8, §7.2): for an ex-date t with P_prev the raw close of the last trading
// day before t, ref = (P_prev − cash) / (1 + bonus + transfer), ex_factor = P_prev / ref.
// Rights issues are not in this table and are not covered. [verify] chose this table over
// stock/cqcx/get, whose units the reference leaves open; its per-10-share units are well attested.

import type { ExFactor, Region } from '../../src/domain.ts';
import { localMidnight } from '../../src/markets/calendar.ts';
import { lastCloseBefore, type Bar } from '../common/bars.ts';
import type { PayloadReader, RowCheck } from '../common/validate.ts';

export interface CorporateAction {
  /** Ex-date, 'YYYY-MM-DD'. */
  exDate: string;
  /** Cash dividend per share (pre-tax). */
  cash: number;
  /** Bonus plus transfer shares per share. */
  shares: number;
}

/**
 * Rows → actions per share. Unit traps (§1.8): PRETAX_BONUS_RMB is CNY per 10 shares;
 * BONUS_RATIO and IT_RATIO are shares per 10; BONUS_IT_RATIO is already their sum. Rows without
 * an ex-date are plans not yet carried out; rows of another security (a filter on the six-digit
 * code also matches the same code on another exchange) are dropped by SECUCODE when present.
 * A row repeated verbatim (same ex-date, cash and shares) is one action, applied once; a negative
 * amount makes the whole table unusable (a partial list would mis-adjust every earlier price).
 */
export function parseDividendRows(rows: unknown[], symbol: string, r: PayloadReader, check: RowCheck): CorporateAction[] {
  const out: CorporateAction[] = [];
  const seen = new Set<string>();
  rows.forEach((item, i) => {
    const p = `result.data[${i}]`;
    const row = r.record(item, p);
    const secucode = r.optionalString(row.SECUCODE, `${p}.SECUCODE`);
    if (secucode !== null && secucode.toUpperCase() !== symbol) return;
    const ex = r.optionalString(row.EX_DIVIDEND_DATE, `${p}.EX_DIVIDEND_DATE`);
    const m = ex === null ? null : /^(\d{4}-\d{2}-\d{2})/.exec(ex);
    if (m === null) return;
    const n = (k: string) => r.optionalNumber(row[k], `${p}.${k}`);
    const combined = n('BONUS_IT_RATIO');
    const shares = combined ?? (n('BONUS_RATIO') ?? 0) + (n('IT_RATIO') ?? 0);
    const cash = n('PRETAX_BONUS_RMB') ?? 0;
    if (!Number.isFinite(cash) || !Number.isFinite(shares) || cash < 0 || shares < 0) {
      check.drop('invalid_dividend', rows.length);
      check.nothingUsable();
    }
    if (cash === 0 && shares === 0) return;
    const key = `${m[1]}|${cash}|${shares}`;
    if (seen.has(key)) {
      check.drop('duplicate_ex_factor');
      return;
    }
    seen.add(key);
    out.push({ exDate: m[1], cash: cash / 10, shares: shares / 10 });
  });
  check.flush();
  return out;
}

/** Earliest ex-date of the actions (the raw closes must reach back before it), or undefined. */
export function earliestExDate(actions: CorporateAction[]): string | undefined {
  let earliest: string | undefined;
  for (const a of actions) if (earliest === undefined || a.exDate < earliest) earliest = a.exDate;
  return earliest;
}

/**
 * One ex-factor per ex-date, ascending. `closes` are raw daily bars stamped at local midnight,
 * ascending. Actions on one date combine (cash and shares add up). An ex-date after `now`, or one
 * with no trading day before it in `closes`, is skipped: its P_prev is not known yet.
 */
export function deriveExFactors(region: Region, actions: CorporateAction[], closes: Bar[], now: number): ExFactor[] {
  const byDate = new Map<string, CorporateAction>();
  for (const a of actions) {
    const seen = byDate.get(a.exDate);
    byDate.set(a.exDate, seen ? { exDate: a.exDate, cash: seen.cash + a.cash, shares: seen.shares + a.shares } : a);
  }
  const out: ExFactor[] = [];
  for (const action of byDate.values()) {
    const t = localMidnight(region, action.exDate);
    if (t > now) continue;
    const prev = lastCloseBefore(closes, t);
    if (prev === undefined) continue;
    const ref = (prev - action.cash) / (1 + action.shares);
    if (!(ref > 0)) continue;
    // P_prev / ref written without the division by ref: 10.50 / ((10.50 − 0.50) / 1) = 1.05 exactly.
    out.push({ timestamp: t, ex_factor: (prev * (1 + action.shares)) / (prev - action.cash) });
  }
  return out.sort((a, b) => a.timestamp - b.timestamp);
}

