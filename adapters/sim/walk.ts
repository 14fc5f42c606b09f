// One step of the daily walk: the bar of one trading day from the state the previous day left.
// Kept apart from daily.ts (which sets the walk up and extends it) so each file has one job.

import { commitColumns, dateKeyOf, reserveColumns, type DailyHistory, type Midnight, type WalkParams, type WalkState } from './history.ts';
import { realiseAction } from './actions.ts';
import type { SimInstrument } from './instruments.ts';
import { limitPercent, limitPricesAt } from './limits.ts';
import { createRng, DRAW_NEXT, DRAW_NORMAL, hashString, mixSeed3 } from './random.ts';
import { roundToTick, snapClampAt } from './ticks.ts';

const SALT_BAR = hashString('bar');
/** Chance per trading day that a suspendable A-share starts a 1–3 day suspension. */
const SUSPEND_CHANCE = 1 / 1200;

/** Generates bars for every remaining day up to `through`, appending to the history. */
export function advanceWalk(inst: SimInstrument, history: DailyHistory, walk: WalkState, through: string, midnight: Midnight): void {
  const { params, scale, drift } = walk;
  const days = walk.days;
  // The days to generate are days[cursor, stop): at most that many bars to make room for.
  let lo = walk.cursor;
  let hi = days.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (days[mid] <= through) lo = mid + 1;
    else hi = mid;
  }
  const stop = lo;
  if (stop > walk.cursor) advanceDays(inst, history, walk, stop, midnight, params, scale, drift);
  // Compact consumed days now and then so a long-lived walk does not keep them all.
  if (walk.cursor > 4096) {
    walk.days.splice(0, walk.cursor);
    walk.noise.splice(0, walk.cursor);
    walk.cursor = 0;
  }
}

const rng = createRng(0);
/** A bar's draws, in order: gap noise, gap share, high and low extensions, locked roll, volume
 *  noise, price noise, suspension roll, suspension length. */
const BAR_DRAWS = Uint8Array.of(DRAW_NORMAL, DRAW_NEXT, DRAW_NORMAL, DRAW_NORMAL, DRAW_NEXT, DRAW_NORMAL, DRAW_NORMAL, DRAW_NEXT, DRAW_NEXT);
const draws = new Float64Array(BAR_DRAWS.length);
/** A price being snapped (slot 0) and its limits (FLOOR, CEILING), for snapClampAt. */
const px = new Float64Array(3);
const FLOOR = 1;
const CEILING = 2;

function advanceDays(
  inst: SimInstrument, history: DailyHistory, walk: WalkState, stop: number, midnight: Midnight,
  params: WalkParams, scale: number, drift: number,
): void {
  const columns = reserveColumns(history, stop - walk.cursor);
  const { timestamp, open: opens, high: highs, low: lows, close: closes, volume: volumes, amount: amounts, prevClose } = columns;
  let n = history.dates.length;
  const pct = limitPercent(inst);
  // An index's volume counts constituent shares: its amount follows their price, not its level.
  const amountScale = inst.shareValue === undefined ? 1 : inst.shareValue / inst.price;
  for (; walk.cursor < stop; walk.cursor++, walk.index++) {
    const date = walk.days[walk.cursor];
    const noise = walk.noise[walk.cursor];
    const key = dateKeyOf(date);
    rng.reseed(mixSeed3(walk.symbolHash, key, SALT_BAR));
    // Fixed draw order: every draw happens whether or not it is used (BAR_DRAWS).
    rng.fill(draws, BAR_DRAWS);
    const gapNoise = draws[0];
    const gapShare = draws[1];
    const highExt = Math.abs(draws[2]);
    const lowExt = Math.abs(draws[3]);
    const lockedRoll = draws[4];
    const volumeNoise = draws[5];
    const priceNoise = draws[6];
    const suspendRoll = draws[7];
    const suspendLength = 1 + Math.floor(draws[8] * 3); // rng.int(1, 3)

    let base = walk.lastClose;
    const action = history.planned[walk.nextAction];
    const exDate = action !== undefined && action.date === date;
    if (exDate) {
      walk.nextAction++;
      walk.suspendedLeft = 0;
      const realised = realiseAction(inst.region, walk.lastClose, action);
      base = roundToTick(inst, realised.ref);
      walk.logFactors += Math.log(realised.factor);
      walk.shares *= 1 + action.shareRatio;
      history.events.push({
        date, timestamp: midnight(date, key), pPrev: walk.lastClose, cash: realised.cash,
        shareRatio: action.shareRatio, ref: realised.ref, base, factor: realised.factor,
      });
    } else if (walk.index > 0 && params.suspendable) {
      // A suspended day has no bar; the latent path moves on, so trading resumes with a gap.
      if (walk.suspendedLeft > 0) {
        walk.suspendedLeft--;
        continue;
      }
      if (suspendRoll < SUSPEND_CHANCE) {
        walk.suspendedLeft = suspendLength - 1;
        continue;
      }
    }

    const limits = limitPricesAt(inst, pct, base);
    const floor = limits?.down ?? 0;
    const ceiling = limits?.up ?? Infinity;
    const target = scale + drift * (walk.index + 1) + noise - walk.logFactors;
    // Snapped and clamped in place in `px` (snapClampAt: no heap number a price).
    px[FLOOR] = floor;
    px[CEILING] = ceiling;
    px[0] = Math.exp(target);
    snapClampAt(inst, px, 0, 'nearest', FLOOR, CEILING);
    const close = px[0];
    const move = Math.log(close / base);
    px[0] = base * Math.exp(move * gapShare * 0.4 + 0.3 * params.sigma * gapNoise);
    snapClampAt(inst, px, 0, 'nearest', FLOOR, CEILING);
    let open = px[0];
    px[0] = Math.max(open, close) * Math.exp(params.sigma * (0.1 + 0.6 * highExt));
    snapClampAt(inst, px, 0, 'up', FLOOR, CEILING);
    let high = px[0];
    px[0] = Math.min(open, close) * Math.exp(-params.sigma * (0.1 + 0.6 * lowExt));
    snapClampAt(inst, px, 0, 'down', FLOOR, CEILING);
    let low = px[0];
    let activity = 1 + Math.min(3, Math.abs(move) / (2 * params.sigma));
    if (close === ceiling && lockedRoll < 0.25) {
      // 一字涨停: sealed at the limit from the open, little volume changes hands.
      open = high = low = close;
      activity = 0.15;
    }

    const lots = Math.max(1, Math.round((params.turnover * activity * Math.exp(0.35 * volumeNoise) * walk.shares) / inst.lotSize));
    const volume = lots * inst.lotSize;
    // Clamped inline: a call with double arguments past the inlining budget boxes each of them.
    const mid = ((open + high + low + close) / 4) * Math.exp(0.001 * priceNoise);
    const typical = mid < low ? low : mid > high ? high : mid;

    history.dates.push(date);
    timestamp[n] = midnight(date, key);
    opens[n] = open;
    highs[n] = high;
    lows[n] = low;
    closes[n] = close;
    volumes[n] = volume;
    amounts[n] = Math.round(volume * typical * amountScale * 100) / 100;
    prevClose[n] = base;
    n++;
    walk.lastClose = close;
  }
  commitColumns(history, columns, n);
}
