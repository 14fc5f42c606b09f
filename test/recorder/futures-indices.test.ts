// The recorder records indices and China futures like stocks (through the sim, whose contracts
// have night sessions), with an injectable clock:
// - futures are market CN_FUTURES: a day is recordable once every product has closed (15:15, the
//   treasury futures) plus the delay, and its window runs from the previous day's close through
//   the night session to its own close, so Monday's minute bars include Friday night's;
// - Friday recorded while Friday's night is in progress covers only Friday: Monday's run then
//   fetches the night once, with Monday's day session (one vendor request per member-day and period);
// - an instance that just started answers the recorded bars, open interest and settlement
//   included, with the vendor down; the coverage route shows no gap; /v1/meta lists the run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { minuteBarLabels } from '../../src/markets/calendar.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';

const sh = (date: string, hhmm: string) => Date.parse(`${date}T${hhmm}:00+08:00`);
let clock = sh('2025-06-13', '22:00');
const now = () => clock;
const dir = mkdtempSync(join(tmpdir(), 'mdqs-recorder-futures-'));
const path = join(dir, 'archive.sqlite');
const apps: FastifyInstance[] = [];
afterAll(async () => {
  for (const app of apps) await app.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

const MEMBERS = ['au2604.SHF', '000300.SH', 'HSI.HK'];

/** An instance on the shared store; `down`: its sim's K-lines fail. Every K-line request is logged. */
async function start(down = false) {
  const built = await buildTestApp({
    now,
    configure: (c) => {
      c.history = {
        ...c.history, enabled: true, sqlitePath: path,
        record: {
          ...c.history!.record, delayMinutes: 20, catchUpDays: 3, concurrency: 2,
          jobs: [{ id: 'desk', universes: [], symbols: MEMBERS, periods: ['1d', '1m'], exFactors: false, instruments: true, membership: false }],
        },
      };
    },
  });
  const sim = built.adapters.get('sim')!;
  const calls: string[] = [];
  const starts: string[] = [];
  const real = sim.getCandles!.bind(sim);
  sim.getCandles = async (query, ctx) => {
    calls.push(`${query.symbol.symbol} ${query.period}`);
    starts.push(`${query.symbol.symbol} ${query.period} ${query.start === undefined ? '' : new Date(query.start + 8 * 3_600_000).toISOString().slice(0, 16)}`);
    if (down) throw new Error('sim: unreachable (test)');
    return real(query, ctx);
  };
  apps.push(built.app);
  return { app: built.app, calls, starts };
}
const get = (app: FastifyInstance, url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });

describe('recording futures and indices', () => {
  it('Friday 22:00 (a night session running): Wednesday to Friday are recorded for CN, HK and CN_FUTURES, the night is not covered', async () => {
    clock = sh('2025-06-13', '22:00');
    const { app, calls } = await start();
    await app.recorder!.runDue();
    // Three days caught up, every member, both periods: one request each.
    expect(calls.sort()).toEqual(MEMBERS.flatMap((s) => [`${s} 1d`, `${s} 1m`, `${s} 1d`, `${s} 1m`, `${s} 1d`, `${s} 1m`]).sort());
    const runs = (await get(app, '/v1/meta')).json().data.recording as { market: string; day: string; state: string; members: number }[];
    expect(runs.map((r) => `${r.market} ${r.day} ${r.state} ${r.members}`).sort()).toEqual([
      'CN 2025-06-13 done 1', 'CN_FUTURES 2025-06-13 done 1', 'HK 2025-06-13 done 1',
    ]);
    await app.close();
  });

  it('Monday 15:20: CN is due (15:00 + 20 min), CN_FUTURES not yet (the last product closes at 15:15)', async () => {
    clock = sh('2025-06-16', '15:20');
    const { app, calls } = await start();
    await app.recorder!.runDue();
    expect(calls.sort()).toEqual(['000300.SH 1d', '000300.SH 1m']);
    await app.close();
  });

  it('Monday 15:40: the futures day, Friday night included, in one request per period', async () => {
    clock = sh('2025-06-16', '15:40');
    const { app, calls } = await start();
    await app.recorder!.runDue();
    expect(calls.sort()).toEqual(['au2604.SHF 1d', 'au2604.SHF 1m']);
    await app.recorder!.runDue();
    expect(calls).toHaveLength(2);
    await app.close();
  });

  it('an instance that just started, the vendor down: the recorded days answer from the store, futures columns included', async () => {
    clock = sh('2025-06-16', '18:00');
    const { app, calls } = await start(true);
    const night = await get(app, `/v1/klines?symbol=au2604.SHF&period=1m&count=600&start_time=${sh('2025-06-13', '15:01')}&end_time=${sh('2025-06-16', '15:00')}`);
    expect(night.statusCode, night.body).toBe(200);
    const bars = night.json().data;
    expect(bars.timestamp).toEqual(minuteBarLabels('CN_FUTURES:au', '2025-06-16', 1));
    expect(bars.open_interest).toHaveLength(bars.timestamp.length);
    expect(bars.settlement_price).toHaveLength(bars.timestamp.length);
    // Monday's daily bar (with the two before it that the answer's window reaches, recorded too).
    const dailyRes = await get(app, `/v1/klines?symbol=au2604.SHF&period=1d&count=1&start_time=${sh('2025-06-16', '00:00')}&end_time=${sh('2025-06-16', '00:00')}`);
    expect(dailyRes.statusCode, dailyRes.body).toBe(200);
    const daily = dailyRes.json().data;
    expect(daily.timestamp).toEqual([sh('2025-06-16', '00:00')]);
    expect(daily.settlement_price).toEqual([bars.settlement_price.at(-1)]);
    expect(daily.open_interest).toEqual([bars.open_interest.at(-1)]);
    const index = await get(app, `/v1/klines?symbol=000300.SH&period=1m&count=240&start_time=${sh('2025-06-16', '09:31')}&end_time=${sh('2025-06-16', '15:00')}`);
    expect(index.statusCode).toBe(200);
    expect(index.json().data.timestamp).toEqual(minuteBarLabels('CN', '2025-06-16', 1));
    const hsi = await get(app, `/v1/klines?symbol=HSI.HK&period=1d&count=1&start_time=${sh('2025-06-13', '00:00')}&end_time=${sh('2025-06-13', '00:00')}`);
    expect(hsi.statusCode).toBe(200);
    expect(hsi.json().data.timestamp).toEqual([sh('2025-06-13', '00:00')]);
    const coverage = (await get(app, '/v1/coverage?symbols=au2604.SHF,000300.SH&period=1m&start_date=2025-06-13&end_date=2025-06-16')).json().data;
    expect(coverage['au2604.SHF']).toMatchObject({ expected: 2, stored: 2, missing_count: 0 });
    expect(coverage['000300.SH']).toMatchObject({ expected: 2, stored: 2, missing_count: 0 });
    // Only the contract's daily bar was asked again: Thursday's, recorded provisional (its
    // settlement a VWAP until the next row states it), is due its recheck; with the vendor down
    // the stored bar answers.
    expect(new Set(calls)).toEqual(new Set(['au2604.SHF 1d']));
  });

  it('Tuesday 15:40: the daily request reaches back over Monday, whose provisional bar (settlement as VWAP) it re-fetches and makes final', async () => {
    clock = sh('2025-06-17', '15:40');
    const { app, calls, starts } = await start();
    await app.recorder!.runDue();
    // One request per member and period, as ever: Monday's daily bar rides along with Tuesday's.
    expect(calls.sort()).toEqual(['000300.SH 1d', '000300.SH 1m', 'HSI.HK 1d', 'HSI.HK 1m', 'au2604.SHF 1d', 'au2604.SHF 1m'].sort());
    const daily = starts.find((s) => s.startsWith('au2604.SHF 1d'))!;
    expect(daily.slice('au2604.SHF 1d '.length) <= '2025-06-16T00:00').toBe(true);
    await app.recorder!.runDue();
    expect(calls).toHaveLength(6);
  });
});
