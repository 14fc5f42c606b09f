// Retention at write, for one store pass: the bars of a fill labelled before the retention's cut
// are served and never written, and their range is never recorded as covered (the store would
// otherwise answer it later from bars it does not hold). The pass still plans, counts and answers
// as if they were stored: it lays what it fetched unkept over the coverage and the bars it reads.
import { copyBar, FUTURES_COLUMNS, joinCandles, lowerBound, sizedCandles, upperBound, windowCandles } from '../candles/window.ts';
import type { Candles } from '../domain.ts';
import { overlayAll, type Interval, type Segment } from './coverage.ts';

export class Unkept {
  /** Ascending, disjoint pieces (each from a range the pass found uncovered). */
  readonly #pieces: Candles[] = [];
  readonly #covers: Segment[] = [];

  /** The first label written (-Infinity: everything is kept). */
  readonly from: number;

  constructor(from: number) {
    this.from = from;
  }

  /**
   * The part of a fill (bars inside `cover`) at or after `from`, to be written with its cover;
   * undefined when nothing of it is. The part before `from` is kept here for the pass only.
   */
  keep(bars: Candles, cover: Interval): { bars: Candles; cover: Interval } | undefined {
    if (cover.lo >= this.from) return { bars, cover };
    const hi = Math.min(cover.hi, this.from - 1);
    const old = windowCandles(bars, { end: hi });
    if (old.timestamp.length > 0) this.#add(old);
    this.#covers.push({ lo: cover.lo, hi, recheckAt: null });
    if (cover.hi < this.from) return undefined;
    return { bars: windowCandles(bars, { start: this.from }), cover: { lo: this.from, hi: cover.hi } };
  }

  /** Label-free gaps to record as covered: the parts at or after `from` (the rest count for the pass only). */
  keepFree(gaps: readonly Interval[]): Interval[] {
    const out: Interval[] = [];
    for (const g of gaps) {
      if (g.lo < this.from) this.#covers.push({ lo: g.lo, hi: Math.min(g.hi, this.from - 1), recheckAt: null });
      if (g.hi >= this.from) out.push({ lo: Math.max(g.lo, this.from), hi: g.hi });
    }
    return out;
  }

  /** The stored coverage with what the pass fetched unkept laid over it. */
  over(segments: Segment[]): Segment[] {
    return this.#covers.length === 0 ? segments : overlayAll(segments, this.#covers);
  }

  /** Unkept bars labelled in [lo, hi]. */
  count(lo: number, hi: number): number {
    let n = 0;
    for (const p of this.#pieces) n += upperBound(p.timestamp, hi) - lowerBound(p.timestamp, lo);
    return n;
  }

  /**
   * `stored` (a read of [lo, hi], its newest `newest` when given) with the unkept bars of
   * [lo, hi] merged in by label (an unkept bar wins a tie: it is the fresher), newest `newest`.
   */
  merge(stored: Candles, lo: number, hi: number, newest?: number): Candles {
    if (this.#pieces.length === 0) return stored;
    const fresh = joinCandles(this.#pieces, { start: lo, end: hi });
    if (fresh.timestamp.length === 0) return stored;
    if (stored.timestamp.length === 0) return newest === undefined ? fresh : windowCandles(fresh, { count: newest });
    const a = stored.timestamp;
    const b = fresh.timestamp;
    let n = 0;
    for (let i = 0, j = 0; i < a.length || j < b.length; n++) {
      if (j >= b.length || (i < a.length && a[i] < b[j])) i++;
      else {
        if (i < a.length && a[i] === b[j]) i++;
        j++;
      }
    }
    const withPrev = stored.prev_close !== undefined && fresh.prev_close !== undefined;
    const out = sizedCandles(n, withPrev);
    // A futures contract's columns, when both sides have them (the store leaves out a column some bars lack).
    const extras = FUTURES_COLUMNS.filter((name) => stored[name] !== undefined && fresh[name] !== undefined);
    for (const name of extras) out[name] = new Array<number>(n);
    for (let i = 0, j = 0, k = 0; k < n; k++) {
      const fromStored = j >= b.length || (i < a.length && a[i] < b[j]);
      const src = fromStored ? stored : fresh;
      const at = fromStored ? i : j;
      copyBar(out, k, src, at);
      if (withPrev) (out.prev_close as number[])[k] = (src.prev_close as number[])[at];
      for (const name of extras) (out[name] as number[])[k] = (src[name] as number[])[at];
      if (fromStored) i++;
      else {
        if (i < a.length && a[i] === b[j]) i++;
        j++;
      }
    }
    return newest === undefined ? out : windowCandles(out, { count: newest });
  }

  #add(piece: Candles): void {
    // Pieces come from disjoint uncovered ranges; kept in label order for joinCandles.
    const at = this.#pieces.findIndex((p) => p.timestamp[0] > piece.timestamp[0]);
    if (at === -1) this.#pieces.push(piece);
    else this.#pieces.splice(at, 0, piece);
  }
}
