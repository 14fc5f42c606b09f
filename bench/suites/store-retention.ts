// A retention pass of the SQLite history store over many series with nothing to remove (the
// steady state: the hourly pass and the one at every boot). Builds a store of BENCH_SERIES series
// (half 1m, half 1d; 240 bars each from two days ago), then times `prune('1m', a week ago)` on a
// fresh copy for this checkout and, with BENCH_BEFORE=<checkout>, an earlier one, alternating.
//   node bench/suites/store-retention.ts          BENCH_SERIES (40000), BENCH_ROUNDS (2)
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Candles } from '../../src/domain.ts';
import type { Backend } from '../../src/store/backend.ts';
import { openSqliteBackend } from '../../src/store/sqlite.ts';
import { QUICK, reportHeadlines } from '../lib/report.ts';

const SERIES = Number(process.env.BENCH_SERIES ?? (QUICK ? 4000 : 40_000));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 2));
const walls = new Map<string, number[]>();
const dir = mkdtempSync(join(tmpdir(), 'mdqs-retention-'));
const store = join(dir, 'store.sqlite');

const t0 = Math.floor((Date.now() - 2 * 86_400_000) / 60_000) * 60_000;
const bars: Candles = { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [], prev_close: [] };
for (let i = 0; i < 240; i++) {
  bars.timestamp.push(t0 + i * 60_000);
  for (const k of ['open', 'high', 'low', 'close'] as const) bars[k].push(100 + i / 100);
  bars.prev_close!.push(100);
  bars.volume.push(1000 + i);
  bars.amount.push(100_000 + i);
}
const built = openSqliteBackend(store);
for (let i = 0; i < SERIES; i++) {
  await built.fill({ key: { adapter: 'sim', symbol: `S${i}.US`, period: i % 2 === 0 ? '1m' : '1d' }, bars, covers: [{ lo: bars.timestamp[0], hi: bars.timestamp[239], recheckAt: null }] });
}
await built.close();

const checkouts: Array<[string, string]> = [['now', fileURLToPath(new URL('../../', import.meta.url))]];
if (process.env.BENCH_BEFORE) checkouts.push(['before', process.env.BENCH_BEFORE]);
console.log(`retention pass, SQLite, ${SERIES} series (${SERIES / 2} of 1m), nothing to remove`);
for (let round = 1; round <= ROUNDS; round++) {
  for (const [label, root] of checkouts) {
    const { openSqliteBackend: open } = await import(join(root, 'src/store/sqlite.ts')) as { openSqliteBackend: (path: string) => Backend };
    const copy = join(dir, `${label}.sqlite`);
    copyFileSync(store, copy);
    const b = open(copy);
    const cpu = process.cpuUsage();
    const start = performance.now();
    const removed = await b.prune('1m', Date.now() - 7 * 86_400_000);
    const wall = performance.now() - start;
    const used = process.cpuUsage(cpu);
    await b.close();
    rmSync(copy, { force: true });
    walls.set(label, [...(walls.get(label) ?? []), wall]);
    console.log(`${label} round ${round}: ${wall.toFixed(0)} ms wall, ${((used.user + used.system) / 1000).toFixed(0)} ms CPU, removed ${removed}`);
  }
}
rmSync(dir, { recursive: true, force: true });
reportHeadlines([...walls].map(([label, ms]) => ({ suite: 'store retention', figure: `${label === 'now' ? 'this checkout' : 'before'}: one SQLite retention pass, ${SERIES} series, nothing to remove (fastest of ${ms.length})`, value: `${Math.min(...ms).toFixed(0)} ms` })));
