// Day blocks (schema v2): the blob must give back every double bit for bit, pick its compact forms
// where they are exact, and the block helpers must split, merge, cut and reassemble series exactly.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Candles } from '../../src/domain.ts';
import {
  assemble, blockOf, blockRuns, CorruptBlockError, countIn, cutBlock, decodeBlock, decodeTimestamps, encodeBlock, mergeBlock, readBlocks, type BlockBars,
} from '../../src/store/blocks.ts';
import { corruptCount } from '../../src/cache/corruption.ts';
import { barsWithin } from '../../src/store/candle-store.ts';

const DAY = 86_400_000;
const MIN = 60_000;
const COLS = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount'] as const;
/** Byte offset of the first column tag, and the tags themselves (see the blocks.ts header). */
const TAGS = 16;
const F64 = 0;
const I32 = 1;
const ABSENT = 0xff;

/** Bars at `ts` with exact-thousandth prices (k / 1000: 10 + k / 1000 is not always exact), whole volumes and amounts too big for int32 cents. */
function bars(ts: number[], prev?: (i: number) => number): Candles {
  const c: Candles = {
    timestamp: ts,
    open: ts.map((_, i) => (10_000 + i) / 1000),
    high: ts.map((_, i) => (11_000 + i) / 1000),
    low: ts.map((_, i) => (9_000 + i) / 1000),
    close: ts.map((_, i) => (10_500 + i) / 1000),
    volume: ts.map((_, i) => 1000 * (i + 1)),
    amount: ts.map((_, i) => 123_456_789.25 + i),
  };
  if (prev !== undefined) c.prev_close = ts.map((_, i) => prev(i));
  return c;
}

function block(ts: number[], prev?: (i: number) => number): BlockBars {
  return decodeBlock(encodeBlock(bars(ts, prev)));
}

function tags(bytes: Uint8Array): number[] {
  return [...bytes.subarray(TAGS, TAGS + 8)];
}

/** Every column equal bit for bit (NaN to NaN), prev_close NaN where `c` has none. */
function sameBits(got: BlockBars, c: Candles, from = 0, to = c.timestamp.length): void {
  const n = to - from;
  for (const name of COLS) {
    expect(got[name].length).toBe(n);
    for (let i = 0; i < n; i++) if (!Object.is(got[name][i], c[name][from + i])) expect.fail(`${name}[${i}]: ${got[name][i]} vs ${c[name][from + i]}`);
  }
  expect(got.prev_close.length).toBe(n);
  for (let i = 0; i < n; i++) {
    const want = c.prev_close === undefined ? Number.NaN : c.prev_close[from + i];
    if (!Object.is(got.prev_close[i], want)) expect.fail(`prev_close[${i}]: ${got.prev_close[i]} vs ${want}`);
  }
}

/** 2024-03-04 00:00 UTC, a Monday. */
const MONDAY = Date.UTC(2024, 2, 4);
/** One minute label per minute in (from, to] hours UTC of day `d` after MONDAY. */
function minutes(d: number, fromH: number, toH: number): number[] {
  const out: number[] = [];
  for (let t = MONDAY + d * DAY + fromH * 3_600_000 + MIN; t <= MONDAY + d * DAY + toH * 3_600_000; t += MIN) out.push(t);
  return out;
}

describe('encodeBlock / decodeBlock round trip', () => {
  const price = fc.oneof(
    fc.integer({ min: 1, max: 10_000_000 }).map((n) => n / 1000),
    fc.double({ min: 1e-6, max: 1e9, noNaN: true, noDefaultInfinity: true }),
    fc.constant(0.1 + 0.2),
    fc.constant(123.4500030517578),
  );
  const volume = fc.oneof(
    fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }),
    fc.double({ min: 0, max: 1e15, noNaN: true }),
  );
  const amount = fc.oneof(
    fc.integer({ min: 0, max: 2 ** 31 - 1 }).map((n) => n / 100),
    fc.integer({ min: 0, max: 1e15 }),
    fc.double({ min: 0, max: 1e15, noNaN: true }),
    fc.constant(1e15),
  );
  /** Steps in eighths of a ms (exact in doubles): whole seconds, or any ms with a fraction. */
  const step = fc.oneof(
    fc.integer({ min: 1, max: 86_400 }).map((s) => s * 8000),
    fc.integer({ min: 1, max: 8 * 600_000 }),
  );
  const bar = fc.record({ step, open: price, close: price, volume, amount, prev: fc.option(price, { nil: Number.NaN }) });
  const series = fc.record({
    base: fc.oneof(fc.integer({ min: 1_500_000_000_000, max: 1_900_000_000_000 }), fc.integer({ min: 8 * 1.5e12, max: 8 * 1.9e12 }).map((n) => n / 8)),
    rows: fc.array(bar, { minLength: 0, maxLength: 40 }),
    prev: fc.constantFrom('absent', 'present', 'some NaN'),
    cut: fc.tuple(fc.nat(), fc.nat()),
  });

  it('gives back every double bit for bit, whatever the columns hold', () => {
    fc.assert(fc.property(series, ({ base, rows, prev, cut }) => {
      let eighths = 0;
      let whole = true;
      const ts: number[] = [];
      for (const r of rows) {
        ts.push(base + eighths / 8);
        eighths += r.step;
      }
      const c: Candles = {
        timestamp: ts,
        open: rows.map((r) => r.open),
        high: rows.map((r) => Math.max(r.open, r.close)),
        low: rows.map((r) => Math.min(r.open, r.close)),
        close: rows.map((r) => r.close),
        volume: rows.map((r) => r.volume),
        amount: rows.map((r) => r.amount),
      };
      if (prev === 'present') c.prev_close = rows.map((r) => (Number.isNaN(r.prev) ? r.open : r.prev));
      if (prev === 'some NaN') c.prev_close = rows.map((r) => r.prev);

      const n = rows.length;
      const from = n === 0 ? 0 : cut[0] % n;
      const to = n === 0 ? 0 : from + (cut[1] % (n - from + 1));
      // Labels are stored as whole seconds after the first bar of the block only when all are.
      let offset = 0;
      for (let i = from + 1; i < to; i++) {
        offset += rows[i - 1].step;
        if (offset % 8000 !== 0) whole = false;
      }
      const bytes = encodeBlock(c, from, to);
      expect(bytes[0]).toBe(2);
      expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(4, true)).toBe(to - from);
      expect(bytes[TAGS]).toBe(whole ? I32 : F64);
      const got = decodeBlock(bytes);
      sameBits(got, c, from, to);
      expect(decodeTimestamps(bytes)).toEqual(got.timestamp);

      // prev_close survives assembly only when every bar has one.
      if (to === from) return;
      const all = assemble([got], -Infinity, Infinity);
      const kept = c.prev_close !== undefined && c.prev_close.slice(from, to).every((p) => !Number.isNaN(p));
      expect(all.prev_close === undefined).toBe(!kept);
      expect(all.close).toEqual(c.close.slice(from, to));
    }), { numRuns: 400 });
  });

  it('keeps float noise, huge amounts and big volumes exactly', () => {
    const c = bars([MONDAY, MONDAY + MIN, MONDAY + 2 * MIN], (i) => [0.1 + 0.2, 123.4500030517578, 7.125][i]);
    c.open = [0.1 + 0.2, 123.4500030517578, 1.001];
    c.volume = [2 ** 31, 2 ** 31 - 1, 9_007_199_254_740_991];
    c.amount = [1e15, 0.1 + 0.2, 21_474_836.47];
    const got = decodeBlock(encodeBlock(c));
    sameBits(got, c);
    expect(got.open[0]).toBe(0.30000000000000004);
    expect(got.open[1]).toBe(123.4500030517578);
    expect(got.volume).toEqual([2147483648, 2147483647, 9007199254740991]);
    expect(got.amount).toEqual([1e15, 0.30000000000000004, 21474836.47]);
  });

  it('labels off whole seconds fall back to f64 and come back exactly', () => {
    const ts = [MONDAY, MONDAY + 60_000.5, MONDAY + 120_001];
    const bytes = encodeBlock(bars(ts));
    expect(bytes[TAGS]).toBe(F64);
    expect(decodeBlock(bytes).timestamp).toEqual(ts);
    expect(decodeTimestamps(bytes)).toEqual(ts);
    // A base off the second is fine when the offsets are whole seconds.
    const shifted = [MONDAY + 500.25, MONDAY + 60_500.25, MONDAY + 3_600_500.25];
    const b2 = encodeBlock(bars(shifted));
    expect(b2[TAGS]).toBe(I32);
    expect(decodeBlock(b2).timestamp).toEqual(shifted);
  });

  it('offsets beyond int32 seconds fall back to f64', () => {
    const far = [0, (2 ** 31) * 1000];
    expect(encodeBlock(bars(far))[TAGS]).toBe(F64);
    expect(decodeBlock(encodeBlock(bars(far))).timestamp).toEqual(far);
    const edge = [0, (2 ** 31 - 1) * 1000];
    expect(encodeBlock(bars(edge))[TAGS]).toBe(I32);
    expect(decodeBlock(encodeBlock(bars(edge))).timestamp).toEqual(edge);
  });

  it('an empty block round-trips', () => {
    const bytes = encodeBlock(bars([]));
    expect(bytes.byteLength).toBe(28);
    const got = decodeBlock(bytes);
    expect(got.timestamp).toEqual([]);
    expect(got.prev_close).toEqual([]);
    expect(decodeTimestamps(bytes)).toEqual([]);
  });

  it('reads a blob that sits inside a larger buffer', () => {
    const bytes = encodeBlock(bars([MONDAY, MONDAY + MIN]));
    const big = new Uint8Array(bytes.byteLength + 11);
    big.set(bytes, 3);
    const got = decodeBlock(big.subarray(3, 3 + bytes.byteLength));
    sameBits(got, bars([MONDAY, MONDAY + MIN]));
  });
});

describe('encodeBlock compact forms', () => {
  const day = minutes(0, 1.5, 7);

  it('a typical 1m block: int32 labels, prices, volume; f64 amounts; no prev_close column', () => {
    const n = day.length;
    const bytes = encodeBlock(bars(day));
    // header 28 (with the CRC-32) + six int32 columns (labels, OHLC, volume) + amount as f64
    expect(bytes.byteLength).toBe(28 + 4 * n * 6 + 8 * n);
    expect(n).toBe(330);
    expect(bytes.byteLength).toBe(10_588);
    expect(tags(bytes)).toEqual([I32, I32 + 3, I32 + 3, I32 + 3, I32 + 3, ABSENT, I32, F64]);
    expect(new DataView(bytes.buffer, bytes.byteOffset).getFloat64(8, true)).toBe(day[0]);
  });

  it('one noisy price column grows the block by exactly 4n bytes', () => {
    const n = day.length;
    const plain = encodeBlock(bars(day)).byteLength;
    const c = bars(day);
    c.high = c.high.slice();
    c.high[7] = 0.1 + 0.2;
    const bytes = encodeBlock(c);
    expect(bytes.byteLength - plain).toBe(4 * n);
    expect(tags(bytes)[2]).toBe(F64);
    expect(decodeBlock(bytes).high[7]).toBe(0.30000000000000004);
  });

  it('prev_close: thousandths +4n, some NaN +8n (f64)', () => {
    const n = day.length;
    const plain = encodeBlock(bars(day)).byteLength;
    const full = encodeBlock(bars(day, (i) => (10_000 + i) / 1000));
    expect(full.byteLength - plain).toBe(4 * n);
    expect(tags(full)[5]).toBe(I32 + 3);
    const holes = encodeBlock(bars(day, (i) => (i === 3 ? Number.NaN : (10_000 + i) / 1000)));
    expect(holes.byteLength - plain).toBe(8 * n);
    expect(tags(holes)[5]).toBe(F64);
    const got = decodeBlock(holes);
    expect(got.prev_close[3]).toBeNaN();
    expect(got.prev_close[4]).toBe(10.004);
    expect(assemble([got], -Infinity, Infinity).prev_close).toBeUndefined();
    expect(assemble([got], day[4], day[9]).prev_close).toEqual([10.004, 10.005, 10.006, 10.007, 10.008, 10.009]);
  });

  it('amounts: cents when they fit int32, whole numbers next, else f64; volumes past int32 go f64', () => {
    const c = bars([MONDAY, MONDAY + MIN]);
    c.amount = [21_474_836.47, 5];
    expect(tags(encodeBlock(c))[7]).toBe(I32 + 2);
    c.amount = [100_000_000, 2_147_483_647];
    expect(tags(encodeBlock(c))[7]).toBe(I32);
    c.amount = [2_147_483_648, 1];
    expect(tags(encodeBlock(c))[7]).toBe(F64);
    c.volume = [2 ** 31 - 1, 0];
    expect(tags(encodeBlock(c))[6]).toBe(I32);
    c.volume = [2 ** 31, 0];
    expect(tags(encodeBlock(c))[6]).toBe(F64);
    c.volume = [1.5, 0];
    expect(tags(encodeBlock(c))[6]).toBe(F64);
  });

  it('a sub-range encodes only its bars, labels relative to its own first bar', () => {
    const all = bars(day);
    const bytes = encodeBlock(all, 10, 20);
    expect(bytes.byteLength).toBe(28 + 4 * 10 * 6 + 8 * 10);
    expect(new DataView(bytes.buffer, bytes.byteOffset).getFloat64(8, true)).toBe(day[10]);
    sameBits(decodeBlock(bytes), all, 10, 20);
  });
});

describe('decodeBlock / decodeTimestamps', () => {
  it('decodeTimestamps equals the decoded block labels', () => {
    for (const ts of [minutes(0, 13.5, 20), [MONDAY, MONDAY + 0.5], []]) {
      const bytes = encodeBlock(bars(ts, (i) => i + 1));
      expect(decodeTimestamps(bytes)).toEqual(decodeBlock(bytes).timestamp);
      expect(decodeTimestamps(bytes)).toEqual(ts);
    }
  });

  it('rejects an unknown format byte, naming it', () => {
    const bytes = encodeBlock(bars([MONDAY]));
    bytes[0] = 7;
    expect(() => decodeBlock(bytes)).toThrow('unknown block format 7');
    expect(() => decodeTimestamps(bytes)).toThrow('unknown block format 7');
    expect(() => decodeBlock(new Uint8Array(0))).toThrow('unknown block format empty');
  });

  it('rejects a blob cut short or padded, naming both sizes', () => {
    const bytes = encodeBlock(bars(minutes(0, 1.5, 7)));
    const n = 330;
    expect(bytes.byteLength).toBe(28 + 4 * n * 6 + 8 * n);
    expect(() => decodeBlock(bytes.subarray(0, bytes.byteLength - 4))).toThrow(`a block of ${n} bars is ${bytes.byteLength - 4} bytes, expected ${bytes.byteLength}`);
    const padded = new Uint8Array(bytes.byteLength + 8);
    padded.set(bytes);
    expect(() => decodeTimestamps(padded)).toThrow(`expected ${bytes.byteLength}`);
  });
});

describe('every block read is verified (format 2: a CRC-32 in the header)', () => {
  const day = minutes(0, 1.5, 7);

  it('a flipped bit anywhere, a changed price or a changed header field: CorruptBlockError, counted', () => {
    const good = encodeBlock(bars(day));
    const before = corruptCount('history');
    const damaged: Uint8Array[] = [];
    // Every byte position of the header and a spread of column bytes, one bit flipped each.
    for (const at of [1, 4, 8, 15, 16, 23, 24, 27, 28, 29, 100, 1000, 5000, good.byteLength - 1]) {
      const bytes = good.slice();
      bytes[at] ^= 0x10;
      damaged.push(bytes);
    }
    // One close price changed by one thousandth: still a well-formed block, a wrong value.
    const price = good.slice();
    const v = new DataView(price.buffer);
    const closeAt = 28 + 4 * day.length * 4;
    v.setInt32(closeAt, v.getInt32(closeAt, true) + 1, true);
    damaged.push(price);
    for (const bytes of damaged) {
      expect(() => decodeBlock(bytes)).toThrow(CorruptBlockError);
      expect(() => decodeTimestamps(bytes)).toThrow(CorruptBlockError);
    }
    expect(() => decodeBlock(price)).toThrow("a block's checksum does not match");
    expect(corruptCount('history') - before).toBe(2 * damaged.length + 1);
    sameBits(decodeBlock(good), bars(day));
  });

  it('format 1 blocks (no checksum, written before) are still read, bar for bar', () => {
    const c = bars(day);
    const v2 = encodeBlock(c);
    // The same block as format 1 wrote it: the 24-byte header without the CRC, then the columns.
    const v1 = new Uint8Array(v2.byteLength - 4);
    v1.set(v2.subarray(0, 24));
    v1.set(v2.subarray(28), 24);
    v1[0] = 1;
    sameBits(decodeBlock(v1), c);
    expect(decodeTimestamps(v1)).toEqual(day);
    // Merged or rewritten, it is stored as format 2.
    expect(encodeBlock(decodeBlock(v1))).toEqual(v2);
  });
});

describe('readBlocks: stored blocks straight to a window (the store hit)', () => {
  /** Three 1m days as stored: a plain one, one with prev_close, one with f64 columns (noise, some NaN prev_close). */
  const days = [minutes(0, 1.5, 7), minutes(1, 1.5, 7), minutes(2, 1.5, 7)];
  const series: Candles[] = [
    bars(days[0]),
    bars(days[1], (i) => (10_400 + i) / 1000),
    { ...bars(days[2], (i) => (i % 7 === 0 ? Number.NaN : 10.4 + i * 1e-7)), open: days[2].map((_, i) => 10 + i * 1e-9) },
  ];
  const blobs = series.map((c) => encodeBlock(c));
  const all = [...days[0], ...days[1], ...days[2]];

  it('equals assemble(decodeBlock …) for any window and newest count, prev_close kept or dropped alike', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 2 }), fc.integer({ min: 1, max: 3 }),
      fc.integer({ min: -5, max: all.length + 5 }), fc.integer({ min: -5, max: all.length + 5 }),
      fc.option(fc.integer({ min: 0, max: all.length + 10 }), { nil: undefined }), fc.integer({ min: -59_999, max: 59_999 }),
      (first, count, a, b, newest, jitter) => {
        const picked = blobs.slice(first, first + count);
        const at = (i: number) => (i < 0 ? all[0] - (1 - i) * MIN : i >= all.length ? all[all.length - 1] + (i - all.length + 1) * MIN : all[i]);
        const lo = at(Math.min(a, b)) + jitter;
        const hi = at(Math.max(a, b));
        const want = assemble(picked.map((x) => decodeBlock(x)), lo, hi, newest);
        const got = readBlocks(picked, lo, hi, newest);
        expect(got.bars).toEqual(want);
        for (const name of [...COLS, 'prev_close'] as const) {
          const w = want[name];
          const g = got.bars[name];
          if (w === undefined || g === undefined) expect(g).toBe(w);
          else for (let i = 0; i < w.length; i++) if (!Object.is(g[i], w[i])) expect.fail(`${name}[${i}]: ${g[i]} vs ${w[i]}`);
        }
        expect(got.held).toBe(assemble(picked.map((x) => decodeBlock(x)), lo, hi).timestamp.length);
      },
    ), { numRuns: 300 });
  });

  it('verifies every block before reading it: a damaged one throws CorruptBlockError, even outside the window', () => {
    const damaged = blobs[0].slice();
    damaged[damaged.byteLength - 1] ^= 0x01;
    // The window lies in the third block only: the first is still checked.
    expect(() => readBlocks([damaged, blobs[1], blobs[2]], days[2][10], days[2][20])).toThrow(CorruptBlockError);
    expect(readBlocks([blobs[0], blobs[1], blobs[2]], days[2][10], days[2][20]).bars.timestamp).toEqual(days[2].slice(10, 21));
  });
});

describe('blocks without prev_close stay without it through merge and cut', () => {
  it('re-encodes at the same size as a fresh block (no all-NaN f64 column)', () => {
    const ts = minutes(0, 1.5, 5.5);
    const all = bars(ts);
    const fresh = encodeBlock(all);
    expect(tags(fresh)[5]).toBe(ABSENT);
    const first = encodeBlock(all, 0, 120);
    const merged = encodeBlock(mergeBlock(decodeBlock(first), { ...all, timestamp: all.timestamp.slice(120), open: all.open.slice(120), high: all.high.slice(120), low: all.low.slice(120), close: all.close.slice(120), volume: all.volume.slice(120), amount: all.amount.slice(120) }));
    expect(merged).toEqual(fresh);
    const cut = encodeBlock(cutBlock(decodeBlock(fresh), ts[0], ts[0]).kept);
    expect(tags(cut)[5]).toBe(ABSENT);
    expect(cut.byteLength).toBe(fresh.byteLength - (fresh.byteLength - 28) / ts.length);
  });
});

describe('blockOf / blockRuns', () => {
  it('A-share 1m days (01:30–07:00 UTC) split at UTC midnight', () => {
    const days = [0, 1, 2].map((d) => [...minutes(d, 1.5, 3.5), ...minutes(d, 5, 7)]);
    expect(days[0].length).toBe(240);
    const ts = days.flat();
    const d0 = Math.floor(MONDAY / DAY);
    expect(blockOf('1m', MONDAY)).toBe(19_786);
    expect(d0).toBe(19_786);
    expect(blockRuns('1m', ts)).toEqual([
      { block: d0, from: 0, to: 240 },
      { block: d0 + 1, from: 240, to: 480 },
      { block: d0 + 2, from: 480, to: 720 },
    ]);
  });

  it('US 1m days (13:30–21:00 UTC) split at UTC midnight', () => {
    const ts = [...minutes(0, 13.5, 20), ...minutes(1, 14.5, 21), ...minutes(4, 13.5, 20)];
    const d0 = Math.floor(MONDAY / DAY);
    expect(blockRuns('1m', ts)).toEqual([
      { block: d0, from: 0, to: 390 },
      { block: d0 + 1, from: 390, to: 780 },
      { block: d0 + 4, from: 780, to: 1170 },
    ]);
  });

  it('midnight itself opens the next block', () => {
    expect(blockOf('1m', MONDAY - 1)).toBe(19_785);
    expect(blockOf('1m', MONDAY)).toBe(19_786);
    expect(blockRuns('1m', [MONDAY - MIN, MONDAY - 1, MONDAY, MONDAY + 1])).toEqual([
      { block: 19_785, from: 0, to: 2 },
      { block: 19_786, from: 2, to: 4 },
    ]);
  });

  it('1d bars split every 128 days', () => {
    // 2024-01-01 is day 19723; blocks of 128 days start at day 19712 (154 × 128) and 19840.
    const first = Date.UTC(2024, 0, 1, 16);
    const ts = Array.from({ length: 400 }, (_, i) => first + i * DAY);
    expect(blockOf('1d', first)).toBe(154);
    expect(blockOf('1d', 19_840 * DAY - 1)).toBe(154);
    expect(blockOf('1d', 19_840 * DAY)).toBe(155);
    expect(blockRuns('1d', ts)).toEqual([
      { block: 154, from: 0, to: 117 },
      { block: 155, from: 117, to: 245 },
      { block: 156, from: 245, to: 373 },
      { block: 157, from: 373, to: 400 },
    ]);
    expect(blockRuns('1m', [])).toEqual([]);
  });

  it('the runs cover every index exactly once, each in its own block', () => {
    const gaps = fc.array(fc.integer({ min: 1, max: 40 * DAY }), { maxLength: 200 });
    fc.assert(fc.property(fc.constantFrom('1m' as const, '1d' as const), fc.integer({ min: 0, max: 2e12 }), gaps, (period, start, steps) => {
      const ts: number[] = [];
      let t = start;
      for (const s of steps) ts.push((t += s));
      const runs = blockRuns(period, ts);
      let at = 0;
      let last = -Infinity;
      for (const r of runs) {
        expect(r.from).toBe(at);
        expect(r.to).toBeGreaterThan(r.from);
        expect(r.block).toBeGreaterThan(last);
        for (let i = r.from; i < r.to; i++) expect(blockOf(period, ts[i])).toBe(r.block);
        at = r.to;
        last = r.block;
      }
      expect(at).toBe(ts.length);
    }), { numRuns: 200 });
  });
});

describe('mergeBlock', () => {
  it('incoming wins on equal labels; union ascending; missing prev_close is NaN', () => {
    const existing = block([10, 20, 30, 40].map((s) => MONDAY + s * MIN), (i) => 1 + i);
    const inc = bars([20, 25, 40, 50].map((s) => MONDAY + s * MIN));
    inc.close = [99, 98, 97, 96];
    const m = mergeBlock(existing, inc) as BlockBars;
    expect(m.timestamp).toEqual([10, 20, 25, 30, 40, 50].map((s) => MONDAY + s * MIN));
    expect(m.close).toEqual([10.5, 99, 98, 10.502, 97, 96]);
    expect(m.open).toEqual([10, 10, 10.001, 10.002, 10.002, 10.003]);
    expect(m.volume).toEqual([1000, 1000, 2000, 3000, 3000, 4000]);
    expect(m.prev_close.map((p) => (Number.isNaN(p) ? null : p))).toEqual([1, null, null, 3, null, null]);
    for (const name of COLS) expect(m[name].length).toBe(6);
  });

  it('keeps incoming prev_close and round-trips through a blob', () => {
    const existing = block([MONDAY + MIN, MONDAY + 3 * MIN], (i) => 5 + i);
    const inc = bars([MONDAY + 2 * MIN], () => 7.5);
    const m = mergeBlock(existing, inc);
    expect(m.prev_close).toEqual([5, 7.5, 6]);
    sameBits(decodeBlock(encodeBlock(m)), m);
  });

  it('no existing bars: incoming as it is', () => {
    const inc = bars([MONDAY]);
    expect(mergeBlock(undefined, inc)).toBe(inc);
    expect(mergeBlock(block([]), inc)).toBe(inc);
  });

  it('nothing incoming leaves the existing bars', () => {
    const existing = block([MONDAY, MONDAY + MIN], (i) => i + 2);
    const m = mergeBlock(existing, bars([]));
    expect(m.timestamp).toEqual([MONDAY, MONDAY + MIN]);
    expect(m.prev_close).toEqual([2, 3]);
  });
});

describe('cutBlock', () => {
  const ts = [10, 20, 30, 40, 50, 60];

  it('removes exactly the labels in [from, to], inclusive', () => {
    const b = block(ts, (i) => i + 1);
    const { kept, removed } = cutBlock(b, 20, 40);
    expect(removed).toBe(3);
    expect(kept.timestamp).toEqual([10, 50, 60]);
    expect(kept.close).toEqual([10.5, 10.504, 10.505]);
    expect(kept.prev_close).toEqual([1, 5, 6]);
    expect(cutBlock(b, 25, 35)).toMatchObject({ removed: 1, kept: { timestamp: [10, 20, 40, 50, 60] } });
    expect(cutBlock(b, 10, 10)).toMatchObject({ removed: 1, kept: { timestamp: [20, 30, 40, 50, 60] } });
    expect(cutBlock(b, 0, 30)).toMatchObject({ removed: 3, kept: { timestamp: [40, 50, 60], prev_close: [4, 5, 6] } });
    expect(cutBlock(b, 60, 99)).toMatchObject({ removed: 1, kept: { timestamp: [10, 20, 30, 40, 50] } });
    expect(cutBlock(b, 0, 100)).toMatchObject({ removed: 6, kept: { timestamp: [] } });
    expect(b.timestamp).toEqual(ts);
  });

  it('nothing removed returns the same block', () => {
    const b = block(ts);
    expect(cutBlock(b, 61, 100).kept).toBe(b);
    expect(cutBlock(b, 61, 100).removed).toBe(0);
    expect(cutBlock(b, 21, 29).kept).toBe(b);
    expect(cutBlock(b, 21, 29).removed).toBe(0);
    expect(cutBlock(b, 40, 30).kept).toBe(b);
    expect(cutBlock(b, 0, 9).kept).toBe(b);
  });
});

describe('assemble', () => {
  // Three blocks of 4 bars each: 10..40, 110..140, 210..240.
  const blocks = [0, 100, 200].map((o) => block([10, 20, 30, 40].map((s) => s + o), (i) => o + i + 1));
  const all = [10, 20, 30, 40, 110, 120, 130, 140, 210, 220, 230, 240];

  it('windows [lo, hi] inclusive across blocks', () => {
    expect(assemble(blocks, -Infinity, Infinity).timestamp).toEqual(all);
    const w = assemble(blocks, 30, 220);
    expect(w.timestamp).toEqual([30, 40, 110, 120, 130, 140, 210, 220]);
    expect(w.prev_close).toEqual([3, 4, 101, 102, 103, 104, 201, 202]);
    expect(w.close).toEqual([10.502, 10.503, 10.5, 10.501, 10.502, 10.503, 10.5, 10.501]);
    expect(assemble(blocks, 41, 109).timestamp).toEqual([]);
    expect(assemble(blocks, 140, 140).timestamp).toEqual([140]);
    expect(assemble([], 0, 1000).timestamp).toEqual([]);
  });

  it('the newest N across several blocks', () => {
    expect(assemble(blocks, -Infinity, Infinity, 6).timestamp).toEqual([130, 140, 210, 220, 230, 240]);
    expect(assemble(blocks, -Infinity, 220, 5).timestamp).toEqual([120, 130, 140, 210, 220]);
    expect(assemble(blocks, 30, 220, 7).prev_close).toEqual([4, 101, 102, 103, 104, 201, 202]);
    expect(assemble(blocks, -Infinity, Infinity, 4).timestamp).toEqual([210, 220, 230, 240]);
    expect(assemble(blocks, -Infinity, Infinity, 1).timestamp).toEqual([240]);
  });

  it('N beyond the total gives everything; N = 0 gives nothing', () => {
    expect(assemble(blocks, -Infinity, Infinity, 100).timestamp).toEqual(all);
    expect(assemble(blocks, 30, 120, 100).timestamp).toEqual([30, 40, 110, 120]);
    expect(assemble(blocks, -Infinity, Infinity, 0).timestamp).toEqual([]);
    expect(assemble(blocks, -Infinity, Infinity, 0).close).toEqual([]);
  });

  it('drops prev_close only when a returned bar lacks it', () => {
    const mixed = [blocks[0], block([110, 120])];
    expect(assemble(mixed, -Infinity, Infinity).prev_close).toBeUndefined();
    expect(assemble(mixed, -Infinity, 100).prev_close).toEqual([1, 2, 3, 4]);
    const newest = assemble(mixed, -Infinity, Infinity, 4);
    expect(newest.timestamp).toEqual([30, 40, 110, 120]);
    expect(newest.prev_close).toBeUndefined();
    expect(assemble(mixed, -Infinity, 109, 2).prev_close).toEqual([3, 4]);
  });

  it('makes one copy: the result shares no column with the blocks', () => {
    const out = assemble([blocks[0]], -Infinity, Infinity);
    for (const name of COLS) expect(out[name]).not.toBe(blocks[0][name]);
    expect(out.prev_close).not.toBe(blocks[0].prev_close);
    out.close[0] = -1;
    expect(blocks[0].close[0]).toBe(10.5);
  });
});

describe('countIn', () => {
  it('counts labels in [lo, hi], both edges inclusive', () => {
    const ts = [10, 20, 30];
    expect(countIn(ts, 10, 30)).toBe(3);
    expect(countIn(ts, 20, 20)).toBe(1);
    expect(countIn(ts, 11, 29)).toBe(1);
    expect(countIn(ts, 0, 10)).toBe(1);
    expect(countIn(ts, 30, 99)).toBe(1);
    expect(countIn(ts, 31, 99)).toBe(0);
    expect(countIn(ts, 30, 10)).toBe(0);
    expect(countIn([], 0, 99)).toBe(0);
  });
});

describe('barsWithin', () => {
  const ts = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];

  it('counts the union of the spans once', () => {
    expect(barsWithin(ts, [{ lo: 10, hi: 30 }, { lo: 20, hi: 50 }])).toBe(5);
    expect(barsWithin(ts, [{ lo: 20, hi: 50 }, { lo: 10, hi: 30 }])).toBe(5);
    expect(barsWithin(ts, [{ lo: 10, hi: 90 }, { lo: 20, hi: 30 }])).toBe(9);
    expect(barsWithin(ts, [{ lo: 10, hi: 40 }, { lo: 10, hi: 40 }])).toBe(4);
    expect(barsWithin(ts, [{ lo: 10, hi: 30 }, { lo: 30, hi: 30 }, { lo: 30, hi: 50 }])).toBe(5);
  });

  it('adds disjoint spans', () => {
    expect(barsWithin(ts, [{ lo: 70, hi: 80 }, { lo: 10, hi: 20 }])).toBe(4);
    expect(barsWithin(ts, [{ lo: 10, hi: 30 }, { lo: 31, hi: 50 }])).toBe(5);
    expect(barsWithin(ts, [{ lo: 11, hi: 19 }, { lo: 101, hi: 200 }])).toBe(0);
    expect(barsWithin(ts, [])).toBe(0);
    expect(barsWithin([], [{ lo: 0, hi: 100 }])).toBe(0);
  });

  it('matches a brute-force count of the union', () => {
    const span = fc.tuple(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 0, max: 40 })).map(([lo, w]) => ({ lo, hi: lo + w }));
    fc.assert(fc.property(fc.array(span, { maxLength: 6 }), (spans) => {
      const want = ts.filter((t) => spans.some((s) => s.lo <= t && t <= s.hi)).length;
      expect(barsWithin(ts, spans)).toBe(want);
    }), { numRuns: 300 });
  });
});

describe('futures columns (format 3): open interest and settlement price are kept', () => {
  const ts = Array.from({ length: 30 }, (_, i) => 1_749_819_660_000 + i * MIN);
  const futures = (from = 0): Candles => ({
    ...bars(ts.slice(from)),
    open_interest: ts.slice(from).map((_, i) => 180_000 + 7 * (from + i)),
    settlement_price: ts.slice(from).map((_, i) => (780_000 + from + i) / 1000),
  });

  it('round-trips both columns exactly in a format-3 block; bars without them stay format 2, byte for byte as before', () => {
    const bytes = encodeBlock(futures());
    expect(bytes[0]).toBe(3);
    expect([bytes[1], bytes[2]]).toEqual([I32, I32 + 3]);
    const back = decodeBlock(bytes);
    expect(back.open_interest).toEqual(futures().open_interest);
    expect(back.settlement_price).toEqual(futures().settlement_price);
    const plain = encodeBlock(bars(ts));
    expect(plain[0]).toBe(2);
    expect([plain[1], plain[2], plain[3]]).toEqual([0, 0, 0]);
    expect(decodeBlock(plain).open_interest).toBeUndefined();
    // The format-3 block is the format-2 one plus its two columns (4n bytes each), same header size.
    expect(bytes.byteLength - plain.byteLength).toBe(2 * 4 * ts.length);
  });

  it('is verified like the rest: a changed open interest or a changed tag byte is CorruptBlockError', () => {
    const bytes = encodeBlock(futures());
    const last = bytes.slice();
    last[last.byteLength - 1] ^= 1;
    expect(() => decodeBlock(last)).toThrow(CorruptBlockError);
    const tag = bytes.slice();
    tag[1] = F64;
    expect(() => decodeBlock(tag)).toThrow(CorruptBlockError);
  });

  it('merge, assemble and readBlocks keep them; a bar without them (NaN) drops the column from the answer, never serves a gap', () => {
    const older = decodeBlock(encodeBlock(futures(), 0, 20));
    const merged = mergeBlock(older, futures(10));
    expect(merged.open_interest).toEqual(futures().open_interest);
    const blob = encodeBlock(merged);
    const read = readBlocks([blob], ts[5], ts[25]).bars;
    expect(read.open_interest).toEqual(futures().open_interest!.slice(5, 26));
    expect(read.settlement_price).toEqual(futures().settlement_price!.slice(5, 26));
    expect(assemble([decodeBlock(blob)], ts[5], ts[25])).toEqual(read);
    // The same label range merged with plain bars: those bars have no open interest.
    const mixed = mergeBlock(decodeBlock(blob), bars(ts.slice(25)));
    const mixedBlob = encodeBlock(mixed);
    expect(mixedBlob[1]).toBe(F64);
    expect(readBlocks([mixedBlob], ts[0], ts[24]).bars.open_interest).toEqual(futures().open_interest!.slice(0, 25));
    const across = readBlocks([mixedBlob], ts[20], ts[29]).bars;
    expect(across.open_interest).toBeUndefined();
    expect(across.settlement_price).toBeUndefined();
    expect(across.timestamp).toEqual(ts.slice(20));
    // A plain block beside a futures block: only the window that is all futures keeps the columns.
    const plainBlob = encodeBlock(bars(ts.map((t) => t - DAY)));
    expect(readBlocks([plainBlob, blob], ts[0] - DAY, ts[29]).bars.open_interest).toBeUndefined();
    expect(readBlocks([plainBlob, blob], ts[0], ts[29]).bars.open_interest).toEqual(futures().open_interest);
  });
});
