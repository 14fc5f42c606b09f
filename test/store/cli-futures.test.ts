// `history warm` of a China futures contract: its trading days run from the previous day's close
// through their night sessions, so warming Monday stores Friday night's minute bars too (the
// night of the evening after the last day is the next day's, not warmed), daily bars under their
// trading day; a rerun asks the vendor for nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { minuteBarLabels } from '../../src/markets/calendar.ts';
import { runHistoryCommand } from '../../src/store/cli.ts';
import { openBackend } from '../../src/store/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-history-cli-futures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, 'h.sqlite');
// Minute bars of 2025 are older than the default 60-day retention: kept forever here.
const env = { ...process.env, MDQS__history__sqlitePath: path, MDQS__history__retentionDays__1m: '0', CONFIG_FILE: '', REDIS_URL: '' };

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { out += String(chunk); return true; });
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => { err += String(chunk); return true; });
  try {
    return { code: await runHistoryCommand(args, env), out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

const sh = (date: string, hhmm: string) => Date.parse(`${date}T${hhmm}:00+08:00`);

describe('history warm of a futures contract', () => {
  it('warming Friday and Monday stores Thursday night, Friday, Friday night and Monday: every minute bar of both trading days', async () => {
    const warmed = await run(['warm', '--symbols', 'au2604.SHF', '--period', '1d,1m', '--from', '2025-06-13', '--to', '2025-06-16']);
    expect(warmed.code, warmed.err).toBe(0);
    expect(warmed.out).toContain('warmed 1/1 symbols of 1 symbols (1d,1m from 2025-06-13) with 2 vendor calls via sim');
    const store = await openBackend({ backend: 'sqlite', sqlitePath: path } as Parameters<typeof openBackend>[0]);
    try {
      const minutes = await store.read({ adapter: 'sim', symbol: 'au2604.SHF', period: '1m' }, 0, Number.MAX_SAFE_INTEGER);
      expect(minutes.timestamp).toEqual([...minuteBarLabels('CN_FUTURES:au', '2025-06-13', 1), ...minuteBarLabels('CN_FUTURES:au', '2025-06-16', 1)]);
      expect(minutes.timestamp[0]).toBe(sh('2025-06-12', '21:01'));
      expect(minutes.timestamp.at(-1)).toBe(sh('2025-06-16', '15:00'));
      expect(minutes.open_interest).toHaveLength(minutes.timestamp.length);
      const days = await store.read({ adapter: 'sim', symbol: 'au2604.SHF', period: '1d' }, 0, Number.MAX_SAFE_INTEGER);
      expect(days.timestamp).toEqual([sh('2025-06-13', '00:00'), sh('2025-06-16', '00:00')]);
      expect(days.settlement_price).toHaveLength(2);
    } finally {
      await store.close();
    }
    const again = await run(['warm', '--symbols', 'au2604.SHF', '--period', '1d,1m', '--from', '2025-06-13', '--to', '2025-06-16']);
    expect(again.out).toContain('with 0 vendor calls');
  });
});
