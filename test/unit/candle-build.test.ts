// Long series are built in a worker thread (issue 14 item 2); the result must be exactly the
// inline build's, for aggregated and base periods and every adjust type.
import { afterAll, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { SymbolRef } from '../../src/domain.ts';
import { answerBuild, buildFromSpec, createCandleBuilder, pack, release, unpack, WORKER_OLD_GENERATION_MB, type BuildSpec } from '../../src/service/candle-build.ts';
import { CN_MORNING } from '../helpers/app.ts';

const sim = createSimAdapter({}, { now: () => CN_MORNING });
const ref: SymbolRef = { symbol: '600519.SH', code: '600519', exchange: 'SH', region: 'CN' };
const worker = createCandleBuilder({ inlineMaxBars: 1_000 });
afterAll(() => worker.close());

describe('candle building in a worker thread', () => {
  it.each(['forward', 'backward', 'none'] as const)('15m from 30,000 1m bars, adjust %s: identical to the inline build', async (adjust) => {
    const raw = await sim.getCandles({ symbol: ref, period: '1m', count: 30_000 });
    const factors = (await sim.getExFactors([ref])).get(ref.symbol) ?? [];
    const spec: BuildSpec = {
      raw: raw!, adjust, period: '15m', region: 'CN', minuteBase: true, window: { count: 1_500 },
      events: factors.map((f) => ({ timestamp: f.timestamp, ex_factor: f.ex_factor, prevClose: Number.NaN })),
    };
    const inline = buildFromSpec(spec);
    const built = await worker.build(spec);
    expect(built.timestamp).toHaveLength(1_500);
    expect(built).toEqual(inline);
  });

  it(`builds the largest series a request can ask for (120,000 1m bars) within the worker's ${WORKER_OLD_GENERATION_MB} MiB old generation, six queued at once`, async () => {
    const raw = await sim.getCandles({ symbol: ref, period: '1m', count: 120_000 });
    expect(raw!.timestamp.length).toBe(120_000);
    const factors = (await sim.getExFactors([ref])).get(ref.symbol) ?? [];
    const events = factors.map((f) => ({ timestamp: f.timestamp, ex_factor: f.ex_factor, prevClose: Number.NaN }));
    const specs: BuildSpec[] = [
      { raw: raw!, events, adjust: 'forward', period: '1m', region: 'CN', minuteBase: true, window: { count: 120_000 } },
      { raw: raw!, events, adjust: 'backward', period: '15m', region: 'CN', minuteBase: true, window: { count: 8_000 } },
      { raw: raw!, events, adjust: 'forward_additive', period: '5m', region: 'CN', minuteBase: true, window: { count: 24_000 } },
    ];
    const built = await Promise.all([...specs, ...specs].map((spec) => worker.build(spec)));
    for (const [i, candles] of built.entries()) expect(candles).toEqual(buildFromSpec(specs[i % 3]));
  }, 60_000);

  it.each(['forward', 'none'] as const)('1m window of 30,000 1m bars (no aggregation: the raw bars sliced in the worker), adjust %s: identical', async (adjust) => {
    const raw = await sim.getCandles({ symbol: ref, period: '1m', count: 30_000 });
    const factors = (await sim.getExFactors([ref])).get(ref.symbol) ?? [];
    const spec: BuildSpec = {
      raw: raw!, adjust, period: '1m', region: 'CN', minuteBase: true, window: { count: 2_000 },
      events: factors.map((f) => ({ timestamp: f.timestamp, ex_factor: f.ex_factor, prevClose: Number.NaN })),
    };
    const built = await worker.build(spec);
    expect(built.timestamp).toHaveLength(2_000);
    expect(Array.isArray(built.close)).toBe(true);
    expect(built).toEqual(buildFromSpec(spec));
  });

  it('release() frees packed columns at once (detached, zero bytes), and leaves the arrays built from them whole', () => {
    const candles = { timestamp: [1, 2, 3], open: [1, 2, 3], high: [1, 2, 3], low: [1, 2, 3], close: [1.5, 2.5, 3.5], volume: [10, 20, 30], amount: [1, 2, 3], prev_close: [1, 1.5, 2.5] };
    const { packed } = pack(candles);
    const copied = Array.from(packed.close!);
    const buffers = Object.values(packed).map((column) => column!.buffer as ArrayBuffer);
    expect(buffers).toHaveLength(8);
    release(packed);
    for (const buffer of buffers) {
      expect(buffer.detached).toBe(true);
      expect(buffer.byteLength).toBe(0);
    }
    expect(copied).toEqual([1.5, 2.5, 3.5]);
    // Twice is harmless (an answer's columns may already be gone).
    expect(() => release(packed)).not.toThrow();
  });

  it('the worker frees its inputs once the answer is posted (and when the build fails); the main thread frees the answer once unpacked', async () => {
    const raw = (await sim.getCandles({ symbol: ref, period: '1m', count: 3_000 }))!;
    const spec: BuildSpec = { raw, events: [], adjust: 'none', period: '15m', region: 'CN', minuteBase: true, window: { count: 100 } };
    const expected = buildFromSpec(spec);
    const { packed: inputs } = pack(raw);
    const inputBuffers = Object.values(inputs).map((c) => c!.buffer as ArrayBuffer);
    let posted: { id: number; packed?: Record<string, Float64Array>; error?: string } | undefined;
    answerBuild({ id: 7, spec: { ...spec, raw: inputs } }, (answer) => {
      posted = answer;
    });
    expect(inputBuffers.every((b) => b.detached)).toBe(true);
    expect(posted?.id).toBe(7);
    const answerBuffers = Object.values(posted!.packed!).map((c) => c.buffer as ArrayBuffer);
    expect(answerBuffers.some((b) => b.detached)).toBe(false);
    const candles = unpack(posted!.packed!);
    expect(candles).toEqual(expected);
    expect(answerBuffers.every((b) => b.detached)).toBe(true);

    // A build that throws (an unknown period) still frees its inputs, and answers with the error.
    const { packed: more } = pack(raw);
    const moreBuffers = Object.values(more).map((c) => c!.buffer as ArrayBuffer);
    answerBuild({ id: 8, spec: { ...spec, period: 'nope' as BuildSpec['period'], raw: more } }, (answer) => {
      posted = answer;
    });
    expect(posted?.id).toBe(8);
    expect(posted?.error).toBeTypeOf('string');
    expect(moreBuffers.every((b) => b.detached)).toBe(true);
  });

  it('a short series is built inline and equals the worker-free result', async () => {
    const raw = await sim.getCandles({ symbol: ref, period: '1d', count: 500 });
    const spec: BuildSpec = { raw: raw!, events: [], adjust: 'none', period: '1w', region: 'CN', minuteBase: false, window: { count: 50 } };
    expect(await worker.build(spec)).toEqual(buildFromSpec(spec));
  });

  it('stops the worker once idle (releasing its heap) and starts a new one for the next long build', async () => {
    const builder = createCandleBuilder({ inlineMaxBars: 100, idleMs: 20 });
    try {
      const raw = await sim.getCandles({ symbol: ref, period: '1d', count: 500 });
      const spec: BuildSpec = { raw: raw!, events: [], adjust: 'none', period: '1w', region: 'CN', minuteBase: false, window: { count: 50 } };
      const first = builder.build(spec);
      expect(builder.running).toBe(true);
      expect(await first).toEqual(buildFromSpec(spec));
      while (builder.running) await new Promise((r) => setTimeout(r, 10));
      expect(await builder.build(spec)).toEqual(buildFromSpec(spec));
    } finally {
      await builder.close();
    }
    expect(builder.running).toBe(false);
  });

  it('close() fails a build still running instead of leaving its request waiting forever', async () => {
    const builder = createCandleBuilder({ inlineMaxBars: 100 });
    const raw = await sim.getCandles({ symbol: ref, period: '1d', count: 500 });
    const spec: BuildSpec = { raw: raw!, events: [], adjust: 'none', period: '1w', region: 'CN', minuteBase: false, window: { count: 50 } };
    const pending = builder.build(spec).then(() => 'resolved', (error: Error) => error.message);
    await builder.close();
    const settled = await Promise.race([pending, new Promise((r) => setTimeout(() => r('still pending'), 2_000))]);
    expect(settled).toMatch(/shutting down/);
  });
});
