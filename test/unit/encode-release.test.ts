// The Arrow encoder frees its intermediate buffers as soon as the answer is written
// (src/http/formats/encode.ts): the columns' typed arrays once Arrow's writer has copied them into
// the IPC stream (the Parquet writer's own are in parquet-writer.test.ts). The answers themselves must
// be untouched (the roundtrip tests in test/routes/formats-roundtrip.test.ts read them back).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tableFromIPC } from 'apache-arrow';
import { encodeTable } from '../../src/http/formats/encode.ts';

const rows = 500;
const t0 = Date.UTC(2024, 0, 2);
const body = {
  data: {
    timestamp: Array.from({ length: rows }, (_, i) => t0 + i * 86_400_000),
    open: Array.from({ length: rows }, (_, i) => 10 + i / 100), high: Array.from({ length: rows }, (_, i) => 11 + i / 100),
    low: Array.from({ length: rows }, (_, i) => 9 + i / 100), close: Array.from({ length: rows }, (_, i) => 10.5 + i / 100),
    volume: Array.from({ length: rows }, (_, i) => 1000 + i), amount: Array.from({ length: rows }, (_, i) => 10_000 + i),
  },
};

/** Buffers detached through ArrayBuffer.prototype.transfer during `fn`, by their size before. */
async function detachedDuring(fn: () => Promise<Buffer>): Promise<{ sizes: number[]; out: Buffer }> {
  const sizes: number[] = [];
  const original = ArrayBuffer.prototype.transfer;
  const spy = vi.spyOn(ArrayBuffer.prototype, 'transfer').mockImplementation(function (this: ArrayBuffer, length?: number) {
    sizes.push(this.byteLength);
    return original.call(this, length);
  });
  try {
    return { sizes, out: await fn() };
  } finally {
    spy.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

describe('columnar encoders free their intermediate buffers', () => {
  it('Arrow: every column and validity buffer is detached once written, and the answer still reads back', async () => {
    const { sizes, out } = await detachedDuring(() => encodeTable('arrow', 'candles', body));
    // At least the eight value columns (8 bytes a row) and their validity bitmaps.
    expect(sizes.filter((s) => s === rows * 8).length).toBeGreaterThanOrEqual(7);
    expect(sizes.filter((s) => s === Math.ceil(rows / 8)).length).toBeGreaterThanOrEqual(7);
    expect(out.byteLength).toBeGreaterThan(rows * 8 * 7);
    const table = tableFromIPC(out);
    expect(table.numRows).toBe(rows);
    expect(table.getChild('close')?.get(rows - 1)).toBeCloseTo(10.5 + (rows - 1) / 100, 10);
  });
});
