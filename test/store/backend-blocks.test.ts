// Both backends on day blocks, driven directly: reads of the newest N across many blocks (the
// PostgreSQL backend pages through them), counts whose edges cut blocks, upserts that merge into a
// held block, drops and retention that split one.
import { describe, expect, it } from 'vitest';
import { windowCandles } from '../../src/candles/window.ts';
import type { Candles } from '../../src/domain.ts';
import type { Backend, SeriesKey } from '../../src/store/backend.ts';
import { directBackends, loopTurnsDuring, minuteBars } from './harness.ts';

const backends = directBackends('blocks');
const openBackend = async (kind: 'sqlite' | 'postgres', name: string): Promise<Backend> => (await backends.open(kind, name)).backend;

const DAY = 86_400_000;

describe.each(['sqlite', 'postgres'] as const)('day blocks on %s', (kind) => {
  const key: SeriesKey = { adapter: 'x', symbol: 'BLK.US', period: '1m' };

  it('reads, counts, merges, drops and prunes across block edges', async () => {
    const b = await openBackend(kind, 'all');
    const all = minuteBars(30, 240);
    const lo = all.timestamp[0];
    const hi = all.timestamp[all.timestamp.length - 1];
    await b.fill({ key, bars: all, covers: [{ lo, hi, recheckAt: null }] });
    expect(await b.read(key, lo, hi)).toEqual(all);

    // Newest N across many blocks: more than one PostgreSQL page (8, then 16 blocks).
    for (const n of [1, 240, 241, 3000, 7200, 9999]) {
      expect(await b.read(key, lo, hi, n)).toEqual(windowCandles(all, { count: n }));
    }
    // A range whose both ends cut a block.
    const from = all.timestamp[100];
    const to = all.timestamp[5000];
    expect(await b.read(key, from, to, 700)).toEqual(windowCandles(all, { start: from, end: to, count: 700 }));
    expect(await b.countBars(key, from, to)).toBe(4901);
    expect(await b.countBars(key, from, from)).toBe(1);
    expect(await b.countBars(key, hi + 1, hi + DAY)).toBe(0);

    // An upsert over part of a held block: new values win, the rest of the block stays.
    const fresh = windowCandles(minuteBars(30, 240, 1), { start: all.timestamp[250], end: all.timestamp[300] });
    await b.fill({ key, bars: fresh, covers: [] });
    const merged = await b.read(key, all.timestamp[240], all.timestamp[479]);
    expect(merged.timestamp).toEqual(all.timestamp.slice(240, 480));
    expect(merged.open.slice(10, 61)).toEqual(fresh.open);
    expect(merged.open.slice(0, 10)).toEqual(all.open.slice(240, 250));
    expect(merged.open.slice(61)).toEqual(all.open.slice(301, 480));

    // Drop a range cutting two blocks and holding whole ones.
    const d0 = all.timestamp[1000];
    const d1 = all.timestamp[2000];
    expect(await b.drop({ adapter: 'x', from: d0, to: d1 })).toBe(1001);
    expect(await b.countBars(key, lo, hi)).toBe(7200 - 1001);
    expect((await b.read(key, d0 - 60_000, d1 + 60_000)).timestamp).toEqual([all.timestamp[999], all.timestamp[2001]]);
    expect(await b.coverage(key)).toEqual([{ lo, hi: d0 - 1, recheckAt: null }, { lo: d1 + 1, hi, recheckAt: null }]);

    // Retention: everything before a label in the middle of a day's block.
    const cut = all.timestamp[6100];
    expect(await b.prune('1m', cut)).toBe(6100 - 1001);
    expect((await b.stats()).bars).toBe(1100);
    expect((await b.read(key, lo, hi)).timestamp).toEqual(all.timestamp.slice(6100));
    expect(await b.coverage(key)).toEqual([{ lo: cut, hi, recheckAt: null }]);
    await b.close();
  });
});

describe('sqlite retention over many series', () => {
  it('finds the series with bars before the cut page by page, without a turn of the loop per series, and prunes them', async () => {
    const b = await openBackend('sqlite', 'many');
    const recent = minuteBars(2, 30);
    const old = minuteBars(10, 30);
    const cutAt = old.timestamp[0] + 5 * DAY;
    const shifted = { ...recent, timestamp: recent.timestamp.map((t) => t + 20 * DAY) };
    const fill = (symbol: string, bars: Candles) => b.fill({
      key: { adapter: 'x', symbol, period: '1m' }, bars, covers: [{ lo: bars.timestamp[0], hi: bars.timestamp[bars.timestamp.length - 1], recheckAt: null }],
    });
    // 5,000 series whose bars all lie after the cut (more than one page of series ids), and two
    // with five days before it: the first series of all and one on the second page.
    await fill('FIRST.US', old);
    for (let i = 0; i < 5000; i++) await fill(`N${i}.US`, shifted);
    await fill('LAST.US', old);
    const { result: removed, turns } = await loopTurnsDuring(() => b.prune('1m', cutAt));
    expect(removed).toBe(2 * 5 * 30);
    for (const symbol of ['FIRST.US', 'LAST.US']) {
      expect(await b.countBars({ adapter: 'x', symbol, period: '1m' }, 0, Number.MAX_SAFE_INTEGER)).toBe(5 * 30);
    }
    expect(await b.countBars({ adapter: 'x', symbol: 'N7.US', period: '1m' }, 0, Number.MAX_SAFE_INTEGER)).toBe(60);
    // A turn per chunk of the two series and one between the two pages: not the 5,002 a turn per series took.
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(turns).toBeLessThan(20);
    // Nothing left to remove: a second pass removes nothing.
    expect(await b.prune('1m', cutAt)).toBe(0);
    await b.close();
  }, 60_000);
});
