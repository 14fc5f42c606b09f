// Large answers encoded off the event loop (src/http/formats/offload.ts): the bytes a worker
// encodes equal the inline encoder's in every format; numeric columns cross as Float64Arrays and
// come back the same numbers (NaN and -0 included), arrays holding anything but numbers cross as
// they are; small answers stay inline (no worker is started); gzip of a large body runs on the
// thread pool and decompresses to the body; closing fails pending work with SHUTTING_DOWN.
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { countCells, createEncoder, encodeInline, pack, unpack } from '../../src/http/formats/offload.ts';

/** A candles batch body: `symbols` × `bars`, with a NaN and a -0 in it. */
function batchBody(symbols: number, bars: number): { data: Record<string, Record<string, number[]>> } {
  const data: Record<string, Record<string, number[]>> = {};
  for (let s = 0; s < symbols; s++) {
    const timestamp = Array.from({ length: bars }, (_, i) => Date.UTC(2010, 0, 1) + i * 86_400_000);
    const close = timestamp.map((_, i) => 10 + s + Math.sin(i) * 0.01 + i / 1000);
    data[`SIM${String(s + 1).padStart(4, '0')}.US`] = {
      timestamp, open: close.map((c) => c - 0.01), high: close.map((c) => c + 0.02), low: close.map((c) => c - 0.02), close,
      volume: close.map((_, i) => 1000 + i), amount: close.map((c, i) => c * (1000 + i)),
      prev_close: close.map((c, i) => (i === 0 ? Number.NaN : i === 1 ? -0 : c)),
    };
  }
  return { data };
}

describe('pack and unpack', () => {
  it('numeric columns cross as Float64Arrays and come back the same numbers; other arrays as they are', () => {
    const body = { data: { a: [1, 2.5, Number.NaN, -0, 1e308], b: ['x', 'y'], c: [1, null, 3], d: [] as number[] }, n: 7 };
    const transfer: ArrayBuffer[] = [];
    const packed = pack(body, transfer) as { data: { a: unknown; b: unknown; c: unknown } };
    expect(transfer).toHaveLength(1);
    expect(packed.data.b).toEqual(body.data.b);
    expect(packed.data.c).toBe(body.data.c);
    const back = unpack(structuredClone(packed, { transfer })) as typeof body;
    expect(back.data.a).toHaveLength(5);
    expect(back.data.a[2]).toBeNaN();
    expect(Object.is(back.data.a[3], -0)).toBe(true);
    expect(back).toEqual(body);
    expect(countCells(body)).toBe(8);
  });
});

describe('the encoder', () => {
  const encoder = createEncoder({ inlineMaxCells: 1000, workers: 2, idleMs: 60_000 });
  afterAll(() => encoder.close());
  const body = batchBody(20, 2000);

  it.each(['json', 'csv', 'arrow', 'parquet'] as const)('a large answer in %s: the worker\'s bytes equal the inline encoder\'s', async (format) => {
    const table = format === 'json' ? undefined : 'candles-batch' as const;
    const [inWorker, inline] = await Promise.all([encoder.encode(body, format, table), encodeInline(body, format, table)]);
    expect(inWorker.length).toBeGreaterThan(100_000);
    expect(inWorker.equals(inline)).toBe(true);
  });

  it('gzip of a large body decompresses to the body; a small one too', async () => {
    const big = await encodeInline(body, 'csv', 'candles-batch');
    expect(gunzipSync(await encoder.gzip(big)).equals(big)).toBe(true);
    const small = Buffer.from('{"data":[]}');
    expect(gunzipSync(await encoder.gzip(small)).equals(small)).toBe(true);
  });

  it('closing fails the answers still being encoded with SHUTTING_DOWN', async () => {
    const closing = createEncoder({ inlineMaxCells: 1000, workers: 1 });
    const pending = expect(closing.encode(batchBody(50, 4000), 'csv', 'candles-batch')).rejects.toMatchObject({ reason: 'SHUTTING_DOWN' });
    await closing.close();
    await pending;
  });
});
