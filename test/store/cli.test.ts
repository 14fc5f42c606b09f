// `history warm | stats | drop` against a temporary SQLite store and the sim adapter.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { simPoolMembers } from '../../adapters/sim/instruments.ts';
import { runHistoryCommand } from '../../src/store/cli.ts';
import { startTickflowVendor, tickflowConfigYaml } from '../helpers/tickflow-vendor.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-history-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { ...process.env, MDQS__history__sqlitePath: join(dir, 'h.sqlite'), CONFIG_FILE: '' };

async function run(args: string[], withEnv: Record<string, string | undefined> = env): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { out += String(chunk); return true; });
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => { err += String(chunk); return true; });
  try {
    const code = await runHistoryCommand(args, withEnv);
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

describe('history CLI', () => {
  const members = simPoolMembers('CN_ETF').length;

  it('warm fetches each member once and resumes for free', async () => {
    const first = await run(['warm', '--universe', 'CN_ETF', '--period', '1d', '--from', '2025-01-01', '--to', '2025-03-31', '--pause-ms', '0']);
    expect(first.code).toBe(0);
    expect(first.out).toContain(`warmed ${members}/${members} symbols of CN_ETF (1d from 2025-01-01) with ${members} vendor calls via sim`);
    expect(first.err).toContain(`${members}/${members}`);
    const again = await run(['warm', '--universe', 'CN_ETF', '--period', '1d', '--from', '2025-01-01', '--to', '2025-03-31', '--pause-ms', '0']);
    expect(again.out).toContain('with 0 vendor calls');
  });

  it('warm takes symbols, several periods and reference data in one command, at the vendor budget\'s pace', async () => {
    // A TickFlow-format vendor whose budget allows 4 requests a second: the warm waits for room
    // (no fixed pause, no refusal) and the vendor never sees more than that in any second.
    const vendor = await startTickflowVendor(Date.now);
    try {
      const config = join(dir, 'budget.yaml');
      writeFileSync(config, tickflowConfigYaml(vendor, ['budget: { max: 4, windowMs: 1000 }'], 'history:\n  record: { budgetReserve: 0 }'));
      // This process's budget (no REDIS_URL): the fleet-wide one is the budget tests' (test/redis).
      const budgetEnv = { ...env, REDIS_URL: '', CONFIG_FILE: config, MDQS__history__sqlitePath: join(dir, 'budget.sqlite') };
      const symbols = ['600519.SH', '000001.SZ', '300750.SZ', '601318.SH'];
      const t0 = Date.now();
      const warmed = await run(['warm', '--symbols', symbols.join(','), '--period', '1d,1m', '--from', '2026-11-16', '--to', '2026-11-20', '--ex-factors'], budgetEnv);
      expect(warmed.code).toBe(0);
      const klines = vendor.requests.filter((u) => u.pathname === '/v1/klines');
      // Each symbol and period once, and one ex-factors batch.
      expect(klines.map((u) => `${u.searchParams.get('symbol')}|${u.searchParams.get('period')}`).sort()).toEqual(symbols.flatMap((s) => [`${s}|1d`, `${s}|1m`]).sort());
      expect(vendor.requests.filter((u) => u.pathname === '/v1/klines/ex-factors')).toHaveLength(1);
      expect(warmed.out).toContain(`warmed 4/4 symbols of 4 symbols (1d,1m from 2026-11-16) with 9 vendor calls via tickflow`);
      // 9 requests at 4 per second: at least two full windows of waiting.
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
      const again = await run(['warm', '--symbols', symbols.join(','), '--period', '1d,1m', '--from', '2026-11-16', '--to', '2026-11-20'], budgetEnv);
      expect(again.out).toContain('with 0 vendor calls');
    } finally {
      await vendor.close();
    }
  });

  it('stats and drop', async () => {
    const stats = await run(['stats', '--json']);
    const parsed = JSON.parse(stats.out);
    expect(parsed.symbols).toBe(members);
    expect(parsed.byPeriod['1d'].series).toBe(members);
    const symbol = simPoolMembers('CN_ETF')[0].symbol;
    const dropped = await run(['drop', '--symbol', symbol, '--period', '1d', '--from', '2025-02-01', '--to', '2025-02-28']);
    expect(dropped.code).toBe(0);
    expect(dropped.out).toMatch(new RegExp(`^dropped (1[5-9]|20) bars of ${symbol.replace('.', '\\.')} 1d from 2025-02-01 to 2025-02-28`));
    const after = JSON.parse((await run(['stats', '--json'])).out);
    expect(after.bars).toBeLessThan(parsed.bars);
  });

  it('warm starts no earlier than the retention: minute bars all older than it cost no vendor call', async () => {
    const day = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10);
    const before = JSON.parse((await run(['stats', '--json'])).out).byPeriod['1m'].bars;
    const old = await run(['warm', '--universe', 'CN_ETF', '--period', '1m', '--from', day(100), '--to', day(90), '--pause-ms', '0']);
    expect(old.code).toBe(0);
    expect(old.out).toMatch(/^nothing to warm: 1m bars before \d{4}-\d{2}-\d{2} are not kept \(history.retentionDays.1m: 60\)/);
    expect(JSON.parse((await run(['stats', '--json'])).out).byPeriod['1m'].bars).toBe(before);
  });

  it('usage errors exit 2', async () => {
    expect((await run(['drop'])).code).toBe(2);
    expect((await run(['warm', '--universe', 'Nope', '--from', '2025-01-01'])).code).toBe(2);
    expect((await run(['nothing'])).code).toBe(2);
  });
});
