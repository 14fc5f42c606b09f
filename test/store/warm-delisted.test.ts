// A stock warmed with `history warm --instruments` while it was listed stays served once the
// vendor no longer knows it (no vendor lists delisted symbols, docs/recording.md#delisted-members):
// its recorded instrument answers `/v1/instruments` marked delisted, and its recorded bars answer
// a newest-N window. The vendor is the sim; afterwards a fake wrapping it drops the symbol.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Adapter } from '../../adapters/types.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { runHistoryCommand } from '../../src/store/cli.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { fakeAdapter } from '../helpers/fake-adapter.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-warm-delisted-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, 'h.sqlite');

async function warm(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { out += String(chunk); return true; });
  const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    const code = await runHistoryCommand(['warm', ...args], { ...process.env, MDQS__history__sqlitePath: path, CONFIG_FILE: '', REDIS_URL: '' });
    return { code, out };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

describe('a warmed stock the vendor later drops', () => {
  it('answers its recorded instrument as delisted and its recorded bars', async () => {
    const warmed = await warm(['--symbols', '600519.SH', '--period', '1d', '--from', '2025-01-01', '--to', '2025-03-31', '--instruments', '--pause-ms', '0']);
    expect(warmed.code).toBe(0);
    // One K-line request and one instruments batch.
    expect(warmed.out).toContain('warmed 1/1 symbols of 1 symbols (1d from 2025-01-01) with 2 vendor calls via sim');

    // Days later (past the next close, so the store asks the vendor again), the vendor no longer
    // knows the symbol: absent from its instruments, unknown to its K-lines.
    const later = Date.now() + 3 * 86_400_000;
    const now = () => later;
    const sim = createSimAdapter({}, { now });
    const listed = (await sim.getInstruments!([{ symbol: '600519.SH', code: '600519', exchange: 'SH', region: 'CN' }])).get('600519.SH')!;
    const dropping: Adapter = {
      ...sim,
      getInstruments: async (refs, ctx) => {
        const found = await sim.getInstruments!(refs, ctx);
        found.delete('600519.SH');
        return found;
      },
      getCandles: async (query, ctx) => (query.symbol.symbol === '600519.SH' ? undefined : await sim.getCandles!(query, ctx)),
    };
    const vendor = fakeAdapter(dropping);
    const { app } = await buildTestApp({
      now,
      adapters: new Map([['sim', vendor]]),
      configure: (config) => {
        config.history = { ...config.history, enabled: true, sqlitePath: path };
      },
    });
    try {
      const get = (url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
      const res = await get('/v1/instruments?symbols=600519.SH');
      expect(res.statusCode).toBe(200);
      expect(vendor.calls.getInstruments).toBe(1);
      const row = (res.json().data as Array<{ symbol: string; name: string; ext: Record<string, unknown> }>).find((r) => r.symbol === '600519.SH');
      expect(row?.name).toBe(listed.name);
      expect(row?.ext).toMatchObject({ status: 'delisted', delisting_date: null, listing_date: listed.ext.listing_date });

      const bars = await get('/v1/klines?symbol=600519.SH&period=1d&adjust=none&count=5');
      expect(bars.statusCode).toBe(200);
      const data = bars.json().data as { timestamp: number[] };
      expect(data.timestamp).toHaveLength(5);
      // The newest stored bar is the warm's last day, 2025-03-31 (Beijing).
      expect(new Date(data.timestamp.at(-1)! + 8 * 3_600_000).toISOString().slice(0, 10)).toBe('2025-03-31');
    } finally {
      await app.close();
    }
  });
});
