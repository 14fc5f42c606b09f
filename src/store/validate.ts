// docs/contract.md#shapes-and-units invariants a bar must meet before it is stored: a finite integer label, finite
// positive prices with low ≤ open, close ≤ high, a non-negative integer volume, a finite
// non-negative amount, labels strictly ascending; a futures contract's open interest a
// non-negative integer and its settlement price finite and positive. A vendor bar failing any of
// them is dropped (and never stored); the rest of the answer stands.
import { FUTURES_COLUMNS } from '../candles/window.ts';
import type { Candles } from '../domain.ts';

export interface Validated {
  candles: Candles;
  dropped: number;
}

export function validateCandles(c: Candles): Validated {
  const n = c.timestamp.length;
  // A column missing or of another length fails every bar that has a valid label.
  const ragged = [c.open, c.high, c.low, c.close, c.volume, c.amount].some((col) => col === undefined || col.length !== n)
    || FUTURES_COLUMNS.some((name) => c[name] !== undefined && c[name].length !== n);
  const prevOk = c.prev_close !== undefined && c.prev_close.length === n;
  const oi = c.open_interest;
  const settlement = c.settlement_price;
  // The indices kept, built only once a bar is dropped (almost every answer keeps them all: then
  // nothing is allocated; issue 30, the store's writes were a tenth of the mixed soak's garbage).
  let keep: number[] | undefined;
  let last = -Infinity;
  for (let i = 0; i < n; i++) {
    const t = c.timestamp[i];
    let ok = Number.isSafeInteger(t) && t > last;
    if (ok && ragged) return { candles: emptyLike(c), dropped: n };
    if (ok) {
      const open = c.open[i];
      const high = c.high[i];
      const low = c.low[i];
      const close = c.close[i];
      const volume = c.volume[i];
      const amount = c.amount[i];
      // positive() written out: a call with a double argument that V8 does not inline boxes it,
      // five heap numbers a bar (0.8 GB in 40 s of the mixed soak).
      const prev = prevOk ? c.prev_close![i] : 1;
      ok = typeof open === 'number' && open > 0 && open < Infinity
        && typeof high === 'number' && high > 0 && high < Infinity
        && typeof low === 'number' && low > 0 && low < Infinity
        && typeof close === 'number' && close > 0 && close < Infinity
        && !(low > open || low > close || high < open || high < close)
        && Number.isSafeInteger(volume) && volume >= 0
        && typeof amount === 'number' && amount >= 0 && amount < Infinity
        && typeof prev === 'number' && prev > 0 && prev < Infinity
        && (oi === undefined || (Number.isSafeInteger(oi[i]) && oi[i] >= 0))
        && (settlement === undefined || (typeof settlement[i] === 'number' && settlement[i] > 0 && settlement[i] < Infinity));
    }
    if (ok) {
      keep?.push(i);
      last = t;
    } else if (keep === undefined) {
      keep = [];
      for (let k = 0; k < i; k++) keep.push(k);
    }
  }
  if (keep === undefined) return { candles: c, dropped: 0 };
  const kept = keep;
  const pick = (col: number[]) => kept.map((i) => col[i]);
  const out: Candles = {
    timestamp: pick(c.timestamp), open: pick(c.open), high: pick(c.high), low: pick(c.low),
    close: pick(c.close), volume: pick(c.volume), amount: pick(c.amount),
  };
  if (prevOk) out.prev_close = pick(c.prev_close!);
  for (const name of FUTURES_COLUMNS) if (c[name] !== undefined) out[name] = pick(c[name]);
  return { candles: out, dropped: n - kept.length };
}

function emptyLike(c: Candles): Candles {
  const out: Candles = { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] };
  if (c.prev_close !== undefined) out.prev_close = [];
  for (const name of FUTURES_COLUMNS) if (c[name] !== undefined) out[name] = [];
  return out;
}
