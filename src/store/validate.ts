// DESIGN.md 4.2 invariants a bar must meet before it is stored: a finite integer label, finite
// positive prices with low ≤ open, close ≤ high, a non-negative integer volume, a finite
// non-negative amount, labels strictly ascending. A vendor bar failing any of them is dropped
// (and never stored); the rest of the answer stands.
import type { Candles } from '../domain.ts';

function positive(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x) && x > 0;
}

export interface Validated {
  candles: Candles;
  dropped: number;
}

export function validateCandles(c: Candles): Validated {
  const n = c.timestamp.length;
  const columns = [c.open, c.high, c.low, c.close, c.volume, c.amount];
  const prevOk = c.prev_close !== undefined && c.prev_close.length === n;
  const keep: number[] = [];
  let last = -Infinity;
  for (let i = 0; i < n; i++) {
    const t = c.timestamp[i];
    if (!Number.isSafeInteger(t) || t <= last) continue;
    if (columns.some((col) => col === undefined || col.length !== n)) return { candles: emptyLike(c), dropped: n };
    const open = c.open[i];
    const high = c.high[i];
    const low = c.low[i];
    const close = c.close[i];
    if (!positive(open) || !positive(high) || !positive(low) || !positive(close)) continue;
    if (low > open || low > close || high < open || high < close) continue;
    const volume = c.volume[i];
    if (!Number.isSafeInteger(volume) || volume < 0) continue;
    const amount = c.amount[i];
    if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) continue;
    if (prevOk && !positive(c.prev_close![i])) continue;
    keep.push(i);
    last = t;
  }
  if (keep.length === n) return { candles: c, dropped: 0 };
  const pick = (col: number[]) => keep.map((i) => col[i]);
  const out: Candles = {
    timestamp: pick(c.timestamp), open: pick(c.open), high: pick(c.high), low: pick(c.low),
    close: pick(c.close), volume: pick(c.volume), amount: pick(c.amount),
  };
  if (prevOk) out.prev_close = pick(c.prev_close!);
  return { candles: out, dropped: n - keep.length };
}

function emptyLike(c: Candles): Candles {
  const out: Candles = { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [] };
  if (c.prev_close !== undefined) out.prev_close = [];
  return out;
}
