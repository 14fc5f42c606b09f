// CPU cost of keeping candles packed (src/cache/candle-codec.ts): pack once per vendor fetch,
// unpack on every data-cache hit. Columns as the sim makes them (daily bars with prev_close);
// median of 7 rounds of 2000 calls each.
//
//   node bench/diagnostics/candle-codec-cpu.ts
import { packCandles, unpackCandles } from '../../src/cache/candle-codec.ts';
import type { Candles } from '../../src/domain.ts';

function daily(n: number): Candles {
  const c: Candles = { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [], prev_close: [] };
  let price = 100;
  for (let i = 0; i < n; i++) {
    const open = price;
    price = Math.round(price * (1 + (Math.random() - 0.5) * 0.04) * 100) / 100;
    c.timestamp.push(Date.UTC(2020, 0, 1) + i * 86_400_000 - 8 * 3_600_000);
    c.open.push(open);
    c.high.push(Math.max(open, price) + 0.5);
    c.low.push(Math.min(open, price) - 0.5);
    c.close.push(price);
    c.volume.push(Math.round(Math.random() * 1e7));
    c.amount.push(Math.round(Math.random() * 1e9) / 100);
    c.prev_close?.push(open);
  }
  return c;
}

function median(run: () => void, calls: number): number {
  const rounds: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) run();
    rounds.push(Number(process.hrtime.bigint() - t0) / calls / 1000);
  }
  return rounds.sort((a, b) => a - b)[3];
}

let sink = 0;
for (const n of [256, 1024, 8192]) {
  const candles = daily(n);
  const packed = packCandles(candles) as ArrayBuffer;
  const pack = median(() => { sink += (packCandles(candles) as ArrayBuffer).byteLength; }, 2000);
  const unpack = median(() => { sink += unpackCandles(packed).timestamp.length; }, 2000);
  const json = median(() => { sink += JSON.stringify(candles).length; }, 200);
  process.stdout.write(`| ${n} bars | ${packed.byteLength} B packed | pack ${pack.toFixed(1)} µs | unpack ${unpack.toFixed(1)} µs | (JSON.stringify of the same columns ${json.toFixed(0)} µs) |\n`);
}
if (sink === 0) process.stdout.write('\n');
