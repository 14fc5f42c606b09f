// The store's bulk reads on both backends: windowsOf (the whole-market day: many series' coverage
// and blocks in one statement) answers exactly what window() answers series by series, for the
// asked symbols of one adapter and period only; listSeries (export) lists the stored series.
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

  it('listSeries lists the stored series, ordered by symbol, period, adapter', async () => {
    expect(await store.storedSeries!({})).toEqual([
      { adapter: 'sim', symbol: '000001.SZ', period: '1d' },
      { adapter: 'other', symbol: '600519.SH', period: '1d' },
      { adapter: 'sim', symbol: '600519.SH', period: '1d' },
      { adapter: 'sim', symbol: '600519.SH', period: '1m' },
      { adapter: 'sim', symbol: '601318.SH', period: '1d' },
    ]);
    expect(await store.storedSeries!({ period: '1m' })).toEqual([{ adapter: 'sim', symbol: '600519.SH', period: '1m' }]);
    expect(await store.storedSeries!({ adapter: 'sim', period: '1d', symbols: ['601318.SH', 'AAPL.US'] })).toEqual([{ adapter: 'sim', symbol: '601318.SH', period: '1d' }]);
  });
});
