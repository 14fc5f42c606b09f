// readBlocks on one equity window (221 daily bars from 11 format-2 blocks, checksums verified
// before), the store hit's decode step, timed alone: run it on two checkouts to compare.
//   node bench/suites/block-read.ts [repo root, default this one]
const which = process.argv[2] ?? new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const mod = await import(`${which}/src/store/blocks.ts`);
const DAY = 86_400_000;
const ts = Array.from({ length: 1280 }, (_, i) => 1_500_000_000_000 - (1_500_000_000_000 % DAY) + i * DAY);
const c = { timestamp: ts, open: ts.map((_, i) => 10 + i / 1000), high: ts.map((_, i) => 11 + i / 1000), low: ts.map((_, i) => 9 + i / 1000), close: ts.map((_, i) => 10.5 + i / 1000), volume: ts.map((_, i) => 1000 * i), amount: ts.map((_, i) => 123456.25 + i), prev_close: ts.map((_, i) => 10.4 + i / 1000) };
const runs = mod.blockRuns('1d', ts);
const blobs = runs.map((r: any) => mod.encodeBlock(c, r.from, r.to));
const lo = ts[500], hi = ts[720];
let n = 0;
for (let round = 0; round < 5; round++) {
  const t0 = performance.now();
  for (let i = 0; i < 100000; i++) n += mod.readBlocks(blobs, lo, hi, undefined, true).bars.timestamp.length;
  console.log(which, round, ((performance.now() - t0) / 100000 * 1000).toFixed(2), 'µs/read');
}
