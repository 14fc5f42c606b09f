// The compact SQLite row encoding (prices × 1000, amounts × 100 where exact) must give back every
// double exactly, whatever the vendor sent.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteBackend } from '../../src/store/sqlite.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-history-enc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sqlite bar encoding', () => {
  it('round-trips exact decimals, float noise and huge amounts bit for bit', async () => {
    const backend = openSqliteBackend(join(dir, 'enc.sqlite'));
    const key = { adapter: 'x', symbol: 'A.US', period: '1d' as const };
    const price = fc.oneof(
      fc.integer({ min: 1, max: 10_000_000 }).map((n) => n / 1000),
      fc.double({ min: 1e-6, max: 1e9, noNaN: true, noDefaultInfinity: true }),
      fc.constant(123.4500030517578),
      fc.constant(0.1 + 0.2),
    );
    await fc.assert(fc.asyncProperty(fc.array(fc.tuple(price, price, fc.double({ min: 0, max: 1e15, noNaN: true }), fc.option(price, { nil: null })), { minLength: 1, maxLength: 20 }), async (rows) => {
      await backend.drop({});
      const n = rows.length;
      const ts = rows.map((_, i) => 1_700_000_000_000 + i * 60_000);
      const bars = {
        timestamp: ts, open: rows.map((r) => r[0]), high: rows.map((r) => Math.max(r[0], r[1])), low: rows.map((r) => Math.min(r[0], r[1])),
        close: rows.map((r) => r[1]), volume: rows.map((_, i) => i * 1000), amount: rows.map((r) => r[2]),
        prev_close: rows.map((r) => r[3] ?? 1),
      };
      await backend.fill({ key, bars, covers: [{ lo: ts[0], hi: ts[n - 1], recheckAt: null }] });
      expect(await backend.read(key, ts[0], ts[n - 1])).toEqual(bars);
    }), { numRuns: 60 });
    await backend.close();
  });

  it('stores a typical bar in fewer bytes than raw doubles would take', async () => {
    const backend = openSqliteBackend(join(dir, 'size.sqlite'));
    const key = { adapter: 'x', symbol: 'B.US', period: '1d' as const };
    const n = 20_000;
    const ts = Array.from({ length: n }, (_, i) => 1_600_000_000_000 + i * 86_400_000);
    const px = ts.map((_, i) => Math.round((1000 + Math.sin(i) * 100) * 100) / 100);
    await backend.fill({
      key,
      bars: { timestamp: ts, open: px, high: px.map((p) => p + 1), low: px.map((p) => p - 1), close: px, volume: px.map((p) => Math.round(p * 1000)), amount: px.map((p) => Math.round(p * p * 1000 * 100) / 100), prev_close: px },
      covers: [{ lo: ts[0], hi: ts[n - 1], recheckAt: null }],
    });
    const perBar = (await backend.sizeBytes()) / n;
    // Eight 8-byte doubles alone would be 64 bytes; the scaled integers fit in far less.
    expect(perBar).toBeLessThan(60);
    await backend.close();
  });
});
