// The recorder asks no vendor for days older than it serves (capabilities.historyDays, e.g.
// Eastmoney's five trading days of 1m bars): an empty answer there would read as "no bars that
// day" and be stored as such. Those member-days are counted as beyond the window, not failures.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { localMidnight } from '../../src/markets/calendar.ts';
import { buildTestApp } from '../helpers/app.ts';
import { fakeAdapter } from '../helpers/fake-adapter.ts';

const now = () => Date.parse('2026-11-26T18:00:00+08:00');
const dir = mkdtempSync(join(tmpdir(), 'mdqs-vendor-window-'));
let app: FastifyInstance | undefined;
afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('with a 2-day 1m window and catchUpDays 4: 1m asked for the last two days only, 1d for all four', async () => {
  const sim = createSimAdapter({}, { now });
  const vendor = fakeAdapter(sim, { caps: { ...sim.capabilities, historyDays: { '1m': 2 } } });
  ({ app } = await buildTestApp({
    now,
    adapters: new Map([['sim', vendor]]),
    configure: (c) => {
      c.history = {
        ...c.history, enabled: true, sqlitePath: join(dir, 'w.sqlite'),
        record: { catchUpDays: 4, jobs: [{ id: 'w', symbols: ['600519.SH'], periods: ['1d', '1m'], exFactors: false, instruments: false, membership: false }] },
      };
    },
  }));
  await app.recorder!.runDue();
  const asked = vendor.calls.filter((c) => c.method === 'getCandles');
  expect(asked).toHaveLength(4 + 2);
  const runs = await app.history.store!.ledgerGet('run', { name: 'w/CN' });
  const byDay = Object.fromEntries(runs.map((r) => [r.day, JSON.parse(r.data)]));
  expect(Object.keys(byDay)).toEqual(['2026-11-23', '2026-11-24', '2026-11-25', '2026-11-26']);
  expect(byDay['2026-11-23']).toMatchObject({ state: 'done', beyond_window: { '1m': 1 }, recorded: { '1d': 1 }, failures: {} });
  expect(byDay['2026-11-26']).toMatchObject({ state: 'done', beyond_window: {}, recorded: { '1d': 1, '1m': 1 } });
  // Nothing of 11-23's minutes was stored as "empty".
  const coverage = await app.history.store!.storedCoverage!({ adapter: 'sim', symbol: '600519.SH', period: '1m' });
  expect(coverage.every((c) => c.lo >= localMidnight('CN', '2026-11-24'))).toBe(true);
});
