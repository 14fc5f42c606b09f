// The store's bulk reads on both backends: windowsOf (the whole-market day: many series' coverage
// and blocks in one statement) answers exactly what window() answers series by series, for the
// asked symbols of one adapter and period only, minute windows of several blocks included, on a
// backend that has read the series before and on one that has not (PostgreSQL looks the series
// ids up once and keeps them: a series another instance creates later is found all the same);
// listSeries (export) lists the stored series.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localMidnight } from '../../src/markets/calendar.ts';
import type { HistoryStore } from '../../src/store/index.ts';
import { openBackend } from '../../src/store/index.ts';
import { clock, direct, place, ref, type Place } from './harness.ts';

const cn = (iso: string) => Date.parse(`${iso}+08:00`);

describe.each(['sqlite', 'postgres'] as const)('bulk reads on %s', (backend) => {
  const at = clock(cn('2026-10-16T16:00:00'));
  const where: Place = place(backend);
  let store: HistoryStore;
  const symbols = ['600519.SH', '000001.SZ', '601318.SH'];

  beforeAll(async () => {
    store = await where.open(at.now);
    const fetch = direct(at.now);
    for (const symbol of symbols) {
      await store.candles('sim', { symbol: ref(symbol), period: '1d', start: cn('2026-01-05T00:00:00'), end: cn('2026-10-16T00:00:00') }, fetch);
    }
    await store.candles('other', { symbol: ref('600519.SH'), period: '1d', start: cn('2026-10-01T00:00:00'), end: cn('2026-10-16T00:00:00') }, fetch);
    await store.candles('sim', { symbol: ref('600519.SH'), period: '1m', start: cn('2026-10-15T00:00:00'), end: cn('2026-10-15T23:59:00') }, fetch);
  });
  afterAll(async () => {
    await store?.close();
    await where.dispose();
  });

  it('windowsOf equals window() series by series, for the asked symbols of one adapter and period', async () => {
    const lo = localMidnight('CN', '2026-10-14');
    const hi = localMidnight('CN', '2026-10-15');
    const windows = await store.storedWindows!('sim', '1d', ['600519.SH', '601318.SH', '999999.SH'], lo, hi);
    expect([...windows.keys()].sort()).toEqual(['600519.SH', '601318.SH']);
    const raw = await openBackend({ ...where.options });
    try {
      for (const symbol of ['600519.SH', '601318.SH']) {
        const one = await raw.window!({ adapter: 'sim', symbol, period: '1d' }, lo, hi);
        const many = windows.get(symbol)!;
        const overlapping = one!.coverage.filter((s) => s.hi >= lo && s.lo <= hi);
        expect(many.coverage).toEqual(overlapping);
        expect(many.blocks.map((b) => [b.block, Buffer.from(b.data).toString('hex')])).toEqual(one!.blocks.map((b) => [b.block, Buffer.from(b.data).toString('hex')]));
        expect(many.blocks.length).toBeGreaterThan(0);
      }
    } finally {
      await raw.close();
    }
  });

  it('windowsOf reads minute days of several blocks, and coverage still to be rechecked, as window() does', async () => {
    const lo = cn('2026-10-14T09:30:00');
    const hi = cn('2026-10-15T15:00:00');
    const daily = await store.storedWindows!('sim', '1d', ['600519.SH'], cn('2026-10-01T00:00:00'), cn('2026-10-16T00:00:00'));
    // The newest daily bars are within the revision window: their coverage is rechecked later.
    expect(daily.get('600519.SH')!.coverage.some((c) => c.recheckAt !== null)).toBe(true);
    await store.candles('sim', { symbol: ref('600519.SH'), period: '1m', start: cn('2026-10-14T00:00:00'), end: cn('2026-10-14T23:59:00') }, direct(at.now));
    const windows = await store.storedWindows!('sim', '1m', ['600519.SH', '000001.SZ'], lo, hi);
    expect([...windows.keys()]).toEqual(['600519.SH']);
    const raw = await openBackend({ ...where.options });
    try {
      for (const [period, l, h, w] of [['1m', lo, hi, windows], ['1d', cn('2026-10-01T00:00:00'), cn('2026-10-16T00:00:00'), daily]] as const) {
        const one = await raw.window!({ adapter: 'sim', symbol: '600519.SH', period }, l, h);
        const many = w.get('600519.SH')!;
        expect(many.coverage).toEqual(one!.coverage.filter((s) => s.hi >= l && s.lo <= h));
        expect(many.blocks.map((b) => [b.block, Buffer.from(b.data).toString('hex')])).toEqual(one!.blocks.map((b) => [b.block, Buffer.from(b.data).toString('hex')]));
      }
      expect(windows.get('600519.SH')!.blocks.map((b) => b.block)).toHaveLength(2);
    } finally {
      await raw.close();
    }
  });

  it('windowsOf finds a series another instance stores after the first read', async () => {
    const lo = localMidnight('CN', '2026-10-14');
    const hi = localMidnight('CN', '2026-10-15');
    expect([...(await store.storedWindows!('sim', '1d', ['600000.SH', '600519.SH'], lo, hi)).keys()]).toEqual(['600519.SH']);
    const other = await where.open(at.now);
    try {
      await other.candles('sim', { symbol: ref('600000.SH'), period: '1d', start: cn('2026-10-01T00:00:00'), end: cn('2026-10-16T00:00:00') }, direct(at.now));
    } finally {
      await other.close();
    }
    const again = await store.storedWindows!('sim', '1d', ['600000.SH', '600519.SH'], lo, hi);
    expect([...again.keys()].sort()).toEqual(['600000.SH', '600519.SH']);
    expect(again.get('600000.SH')!.blocks.length).toBeGreaterThan(0);
  });

  it('listSeries lists the stored series, ordered by symbol, period, adapter', async () => {
    expect(await store.storedSeries!({})).toEqual([
      { adapter: 'sim', symbol: '000001.SZ', period: '1d' },
      { adapter: 'sim', symbol: '600000.SH', period: '1d' },
      { adapter: 'other', symbol: '600519.SH', period: '1d' },
      { adapter: 'sim', symbol: '600519.SH', period: '1d' },
      { adapter: 'sim', symbol: '600519.SH', period: '1m' },
      { adapter: 'sim', symbol: '601318.SH', period: '1d' },
    ]);
    expect(await store.storedSeries!({ period: '1m' })).toEqual([{ adapter: 'sim', symbol: '600519.SH', period: '1m' }]);
    expect(await store.storedSeries!({ adapter: 'sim', period: '1d', symbols: ['601318.SH', 'AAPL.US'] })).toEqual([{ adapter: 'sim', symbol: '601318.SH', period: '1d' }]);
  });
});
