// Ex-factors from Eastmoney's corporate-action tables and raw daily closes (docs/vendors.md#eastmoney-dividends,
// docs/vendors.md#ex-factors-from-corporate-actions): for an ex-date t with P_prev the raw close of the last trading day before t,
// ref = (P_prev − cash + rights_price·rights) / (1 + bonus + transfer + rights) per share, and
// ex_factor = P_prev / ref. Each record carries those parts (docs/contract.md#ex-factors-and-adjustment).
//
// Sources: A-share dividends and bonus/transfer shares from RPT_SHAREBONUS_DET (per 10 shares);
// A-share rights issues (配股) from RPT_IPO_ALLOTMENT (akshare's stock_pg_em: PLACING_RATIO per 10,
// ISSUE_PRICE, EX_DIVIDEND_DATE); HK dividends, splits and consolidations from the F10 table
// RPT_HKF10_MAIN_DIVBASIC, whose plan is free text (PLAN_EXPLAIN, parsed below).
// [verify] chose these tables over stock/cqcx/get, whose units no public source settles.

import type { ExFactor, Region } from '../../src/domain.ts';
import { localMidnight } from '../../src/markets/calendar.ts';
import { lastCloseBefore, type Bar } from '../common/bars.ts';
import type { PayloadReader, RowCheck } from '../common/validate.ts';

export interface CorporateAction {
  /** Ex-date, 'YYYY-MM-DD'. */
  exDate: string;
  /** Cash dividend per share (pre-tax), in the trading currency. */
  cash: number;
  /** Bonus plus transfer shares per share; a split of n for 1 is n − 1, a consolidation of n into 1 is 1/n − 1. */
  shares: number;
  /** Rights shares offered per share (配股), 0 when none. */
  rights?: number;
  /** Subscription price of a rights share. */
  rightsPrice?: number;
}

/**
 * Rows → actions per share. Unit traps (docs/vendors.md#eastmoney-dividends): PRETAX_BONUS_RMB is CNY per 10 shares;
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
    const bonus = n('BONUS_RATIO');
    const transfer = n('IT_RATIO');
    // Older rows can carry the plan only as text, with every ratio column null (600519's
    // 2015-07-17 "10送1.00派43.74元" in the replay): the text's shares then, never cash-only.
    const plan = planPerTen(r.optionalString(row.IMPL_PLAN_PROFILE, `${p}.IMPL_PLAN_PROFILE`));
    const shares = combined ?? (bonus !== null || transfer !== null ? (bonus ?? 0) + (transfer ?? 0) : plan?.shares ?? 0);
    const cash = n('PRETAX_BONUS_RMB') ?? plan?.cash ?? 0;
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

/**
 * The per-10-shares parts of a plan text ("10送3.5转5派3元", "10转3派1.50元(含税)",
 * "10派192.93元(含税,扣税后173.637元)"): bonus + transfer shares and pre-tax cash, or undefined when
 * the text is not such a plan (a rights issue, a blank, "不分配不转增").
 */
export function planPerTen(text: string | null): { shares: number; cash: number } | undefined {
  if (text === null) return undefined;
  const m = /^10股?(?:送(?:红股)?([\d.]+)股?)?(?:转(?:增)?([\d.]+)股?)?(?:派(?:发现金)?(?:红利)?([\d.]+)元)?/.exec(text.replace(/\s+/g, ''));
  if (m === null || (m[1] === undefined && m[2] === undefined && m[3] === undefined)) return undefined;
  const parts = [m[1], m[2], m[3]].map((v) => (v === undefined ? 0 : Number(v)));
  if (parts.some((v) => !Number.isFinite(v))) return undefined;
  return { shares: parts[0] + parts[1], cash: parts[2] };
}

/** Earliest ex-date of the actions (the raw closes must reach back before it), or undefined. */
export function earliestExDate(actions: CorporateAction[]): string | undefined {
  let earliest: string | undefined;
  for (const a of actions) if (earliest === undefined || a.exDate < earliest) earliest = a.exDate;
  return earliest;
}

/** Actions on one date as one (the reference price formula takes them at once). */
function mergeActions(actions: CorporateAction[]): CorporateAction[] {
  const byDate = new Map<string, CorporateAction>();
  for (const a of actions) {
    const seen = byDate.get(a.exDate);
    if (seen === undefined) {
      byDate.set(a.exDate, { ...a });
      continue;
    }
    const rights = (seen.rights ?? 0) + (a.rights ?? 0);
    const paid = (seen.rights ?? 0) * (seen.rightsPrice ?? 0) + (a.rights ?? 0) * (a.rightsPrice ?? 0);
    byDate.set(a.exDate, {
      exDate: a.exDate,
      cash: seen.cash + a.cash,
      // Two share events of one date (a bonus and a split) compound like the sim's: (1+a)(1+b) − 1.
      shares: seen.shares !== 0 && a.shares !== 0 ? (1 + seen.shares) * (1 + a.shares) - 1 : seen.shares + a.shares,
      rights,
      rightsPrice: rights > 0 ? paid / rights : 0,
    });
  }
  return [...byDate.values()];
}

/**
 * One ex-factor per ex-date, ascending, with its parts. `closes` are raw daily bars stamped at
 * local midnight, ascending. Actions on one date combine. An ex-date after `now`, or one with no
 * trading day before it in `closes`, is skipped: its P_prev is not known yet.
 */
export function deriveExFactors(region: Region, actions: CorporateAction[], closes: Bar[], now: number): ExFactor[] {
  const out: ExFactor[] = [];
  for (const action of mergeActions(actions)) {
    const t = localMidnight(region, action.exDate);
    if (t > now) continue;
    const prev = lastCloseBefore(closes, t);
    if (prev === undefined) continue;
    const rights = action.rights ?? 0;
    const price = action.rightsPrice ?? 0;
    const shares = 1 + action.shares + rights;
    const value = prev - action.cash + price * rights;
    if (!(shares > 0) || !(value > 0)) continue;
    out.push({
      timestamp: t,
      // P_prev / ref written without the division by ref: 10.50 / ((10.50 − 0.50) / 1) = 1.05 exactly.
      ex_factor: (prev * shares) / value,
      cash_dividend: action.cash,
      bonus_ratio: action.shares,
      rights_ratio: rights,
      rights_price: price,
      parts_known: true,
    });
  }
  return out.sort((a, b) => a.timestamp - b.timestamp);
}

const EX_DATE = /^(\d{4})[-/](\d{2})[-/](\d{2})/;

function exDateOf(value: string | null): string | undefined {
  const m = value === null ? null : EX_DATE.exec(value);
  return m === null ? undefined : `${m[1]}-${m[2]}-${m[3]}`;
}

/**
 * RPT_IPO_ALLOTMENT rows (配股) → rights actions per share: PLACING_RATIO is rights shares per 10
 * held, ISSUE_PRICE the subscription price, EX_DIVIDEND_DATE the ex-rights date (a row without one
 * is not carried out yet). Rows of another exchange's same code are dropped by SECUCODE.
 */
export function parseRightsRows(rows: unknown[], symbol: string, r: PayloadReader, check: RowCheck): CorporateAction[] {
  const out: CorporateAction[] = [];
  rows.forEach((item, i) => {
    const p = `result.data[${i}]`;
    const row = r.record(item, p);
    const secucode = r.optionalString(row.SECUCODE, `${p}.SECUCODE`);
    if (secucode !== null && secucode.toUpperCase() !== symbol) return;
    const exDate = exDateOf(r.optionalString(row.EX_DIVIDEND_DATE, `${p}.EX_DIVIDEND_DATE`));
    if (exDate === undefined) return;
    const ratio = r.optionalNumber(row.PLACING_RATIO, `${p}.PLACING_RATIO`);
    const price = r.optionalNumber(row.ISSUE_PRICE, `${p}.ISSUE_PRICE`);
    if (ratio === null || price === null || !(ratio > 0) || !(price >= 0)) {
      check.drop('invalid_rights_issue', rows.length);
      check.nothingUsable();
    }
    out.push({ exDate, cash: 0, shares: 0, rights: ratio! / 10, rightsPrice: price! });
  });
  check.flush();
  return out;
}

const NUM = '(\\d+(?:\\.\\d+)?)';
const HKD_EQUIVALENT = new RegExp(`相当于(?:每股派)?(?:港币|港元)?\\s*${NUM}\\s*(?:港元|港币|元)`);
const HKD_CASH = new RegExp(`每股派(?:发)?(?:现金)?(?:特别)?(?:股息|息)?\\s*(?:港币|港元)\\s*${NUM}`);
const OTHER_CURRENCY = /(人民币|美元|美金|日元|英镑|欧元|新加坡元|加元|澳元)/;
const SPLIT = new RegExp(`每\\s*${NUM}\\s*股(?:拆细|拆分|拆)(?:为|成)\\s*${NUM}\\s*股`);
const SPLIT_SHORT = new RegExp(`^${NUM}拆${NUM}$`);
const CONSOLIDATION = new RegExp(`每\\s*${NUM}\\s*股合并(?:为|成)\\s*${NUM}\\s*股`);
const BONUS = new RegExp(`每\\s*${NUM}\\s*股送(?:红股)?\\s*${NUM}\\s*股`);
const NO_PAYOUT = /不派|未派|不分配|无派息|不设/;

export type HkPlan = { cash: number; shares: number } | 'none' | 'unparsed';

/**
 * An HK plan text (PLAN_EXPLAIN) → cash per share in HKD and new shares per old share.
 * Recognised (texts as Eastmoney writes them): 每股派港币5.3元; 每股派人民币2.51元(相当于港币2.9003元)
 * (the HKD equivalent); 每10股分派1股美团B类普通股股份(相当于每股派18.13港元) (a distribution in
 * specie at its stated HKD value); 每1股拆细为5股 (split, shares 4); 每10股合并为1股
 * (consolidation, shares −0.9); 每10股送1股 (bonus, 0.1). A cash amount in another currency with no
 * HKD equivalent, or any other text, is 'unparsed': the caller drops the row and says so.
 */
export function parseHkPlan(text: string): HkPlan {
  const plan = text.replace(/\s+/g, '');
  let cash = 0;
  let shares = 0;
  let matched = false;
  const equivalent = HKD_EQUIVALENT.exec(plan);
  const hkd = HKD_CASH.exec(plan);
  if (equivalent !== null) {
    cash = Number(equivalent[1]);
    matched = true;
  } else if (hkd !== null) {
    cash = Number(hkd[1]);
    matched = true;
  } else if (/派/.test(plan) && OTHER_CURRENCY.test(plan)) {
    return 'unparsed';
  }
  const split = SPLIT.exec(plan) ?? SPLIT_SHORT.exec(plan);
  const consolidation = CONSOLIDATION.exec(plan);
  const bonus = equivalent === null ? BONUS.exec(plan) : null;
  if (split !== null) {
    shares = Number(split[2]) / Number(split[1]) - 1;
    matched = true;
  } else if (consolidation !== null) {
    shares = Number(consolidation[2]) / Number(consolidation[1]) - 1;
    matched = true;
  } else if (bonus !== null) {
    shares = Number(bonus[2]) / Number(bonus[1]);
    matched = true;
  } else if (equivalent === null && /分派.*股/.test(plan)) {
    return 'unparsed';
  }
  if (!matched) return NO_PAYOUT.test(plan) ? 'none' : 'unparsed';
  if (!Number.isFinite(cash) || !Number.isFinite(shares) || cash < 0 || shares <= -1) return 'unparsed';
  return cash === 0 && shares === 0 ? 'none' : { cash, shares };
}

/**
 * RPT_HKF10_MAIN_DIVBASIC rows → actions. EX_DIVIDEND_DATE comes as '2025/06/12' (or with a time);
 * rows without one are not carried out yet; a plan that cannot be read is dropped and reported
 * ('unparsed_dividend_plan'), so the served list says it is incomplete through the row report.
 */
export function parseHkDividendRows(rows: unknown[], code: string, r: PayloadReader, check: RowCheck): CorporateAction[] {
  const out: CorporateAction[] = [];
  rows.forEach((item, i) => {
    const p = `result.data[${i}]`;
    const row = r.record(item, p);
    const rowCode = r.optionalString(row.SECURITY_CODE, `${p}.SECURITY_CODE`);
    if (rowCode !== null && rowCode !== code) return;
    const exDate = exDateOf(r.optionalString(row.EX_DIVIDEND_DATE, `${p}.EX_DIVIDEND_DATE`));
    if (exDate === undefined) return;
    const plan = parseHkPlan(r.optionalString(row.PLAN_EXPLAIN, `${p}.PLAN_EXPLAIN`) ?? '');
    if (plan === 'none') return;
    if (plan === 'unparsed') {
      check.drop('unparsed_dividend_plan');
      return;
    }
    out.push({ exDate, cash: plan.cash, shares: plan.shares });
  });
  check.flush();
  return out;
}
