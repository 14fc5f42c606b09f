// The recorder through the real app, the real TickFlow adapter and a TickFlow-format vendor on a
// local HTTP server whose 1m K-lines reach back only five trading days (like Eastmoney's), with an
// injectable clock:
// - recorded on day D after the close, D's 1m bars answer 200 from the store ten trading days
//   later, on an instance that just started, while the vendor no longer has them;
// - one vendor request per member-day and period; a rerun (restart) asks for nothing;
// - a missed day inside the vendor's window is caught up on start, older ones are not asked;
// - recorded series are kept past history.retentionDays (the recorder's own retention: forever);
// - before the close (plus delay) the day is not recorded; /v1/meta shows the last run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { metricValue } from '../helpers/cache-app.ts';
import { startTickflowVendor, type FakeVendor } from '../helpers/tickflow-vendor.ts';

const at = (iso: string) => Date.parse(iso);
const midnight = (iso: string) => Date.parse(`${iso}T00:00:00+08:00`);
/** Monday 2026-11-16, a CN trading day; its close is 15:00 Shanghai. */
const D = '2026-11-16';
let clock = at(`${D}T16:00:00+08:00`);
const now = () => clock;

const dir = mkdtempSync(join(tmpdir(), 'mdqs-recorder-'));
let vendor: FakeVendor;
const apps: FastifyInstance[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
  await vendor?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeAll(async () => {
  vendor = await startTickflowVendor(now, { minuteWindowDays: 5 });
});

const MEMBERS = ['600519.SH', '000001.SZ', '300750.SZ'];

async function start(path: string, record: Record<string, unknown> = {}): Promise<FastifyInstance> {
  const routing = { markets: { CN: ['tickflow'], HK: ['tickflow'], US: ['tickflow'] }, overrides: {}, allowSimFallback: false, strict: false };
  const adapters = { tickflow: { baseUrl: vendor.base, apiKey: 'vendor-secret', http: { retry: { maxRetries: 0 }, breaker: { failureThreshold: 1000, openMs: 1000 } } } };
  const deps = productionDeps(now);
  const { app } = await buildTestApp({
    now,
    adapters: createAdapters(routing, adapters, deps),
    upstreamClients: deps.clients,
    configure: (c) => {
      Object.assign(c, { routing, adapters });
      c.history = {
        ...c.history, enabled: true, sqlitePath: path,
        // Ad-hoc minute fills keep 3 days: recorded series must not be trimmed by it.
        retentionDays: { '1m': 3, '1d': 0 },
        record: {
          delayMinutes: 20, catchUpDays: 1, concurrency: 2,
          jobs: [{ id: 'core', symbols: MEMBERS, periods: ['1d', '1m'], exFactors: true, instruments: false, membership: false }],
          ...record,
        },
      };
    },
  });
  apps.push(app);
  return app;
}

const klineRequests = () => vendor.requests.filter((u) => u.pathname === '/v1/klines');
const get = (app: FastifyInstance, url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
const minuteWindow = (symbol: string, day: string) =>
  `/v1/klines?symbol=${symbol}&period=1m&count=240&start_time=${midnight(day) + 9.5 * 3_600_000}&end_time=${midnight(day) + 15 * 3_600_000}`;

describe('the recorder keeps every bar past the vendor\'s window', () => {
  const path = join(dir, 'archive.sqlite');

  it('before the close plus the delay nothing of the day is recorded', async () => {
    clock = at(`${D}T15:10:00+08:00`);
    const app = await start(join(dir, 'early.sqlite'));
    const before = klineRequests().length;
    await app.recorder!.runDue();
    // The newest recordable day is the previous one (Friday), not D.
    const runs = await app.recorder!.lastRuns();
    expect(runs.map((r) => r.day)).toEqual(['2026-11-13']);
    expect(klineRequests().slice(before).every((u) => Number(u.searchParams.get('end_time')) < midnight(D))).toBe(true);
    await app.close();
  });

  it('records day D once per member and period, and a rerun asks the vendor for nothing', async () => {
    clock = at(`${D}T16:00:00+08:00`);
    // The day before too: D's first minute bar takes its prev_close from it.
    const app = await start(path, { catchUpDays: 2 });
    const before = klineRequests().length;
    const factorsBefore = vendor.requests.filter((u) => u.pathname === '/v1/klines/ex-factors').length;
    await app.recorder!.runDue();
    const asked = klineRequests().slice(before);
    // member-days × periods, each one request.
    expect(asked).toHaveLength(2 * MEMBERS.length * 2);
    const runs = await app.recorder!.lastRuns();
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ job: 'core', market: 'CN', day: D, state: 'done', members: 3, done: 3, requests: 6, failures: {} });
    const days = await app.history.store!.ledgerGet('run', { name: 'core/CN' });
    expect(days.map((r) => [r.day, JSON.parse(r.data).state])).toEqual([['2026-11-13', 'done'], [D, 'done']]);
    expect(runs[0].bars['1d']).toBe(3);
    expect(runs[0].bars['1m']).toBe(3 * 240);
    // Ex-factors were recorded into the store's reference table, in one batch.
    expect(vendor.requests.filter((u) => u.pathname === '/v1/klines/ex-factors')).toHaveLength(factorsBefore + 1);
    expect(runs[0].recorded).toEqual({ '1d': 3, '1m': 3 });
    expect(await metricValue(app, 'mdqs_store_completeness', { market: 'CN', period: '1m' })).toBe(1);
    expect(await metricValue(app, 'mdqs_recorder_members_done', { job: 'core' })).toBe(3);
    expect(await metricValue(app, 'mdqs_recorder_bars_total', { job: 'core', period: '1m' })).toBe(2 * 3 * 240);
    const meta = await get(app, '/v1/meta');
    expect(meta.json().data.recording).toEqual([expect.objectContaining({ job: 'core', day: D, state: 'done' })]);
    await app.close();

    // Restarted: the day is done; even forced again, every member-day is stored: no request.
    const again = await start(path);
    const mark = klineRequests().length;
    await again.recorder!.runDue();
    await again.recorder!.recordDay({ id: 'core', symbols: MEMBERS, universes: [], periods: ['1d', '1m'], exFactors: false, instruments: false, membership: false }, 'CN', D);
    expect(klineRequests().length).toBe(mark);
    await again.close();
  });

  it('ten trading days later, D\'s 1m bars answer from the store on a new instance; the vendor no longer has them', async () => {
    clock = at('2026-11-30T10:30:00+08:00');
    // The vendor's window has moved past D: it sends nothing for that day now.
    const direct = await fetch(`${vendor.base}/v1/klines?symbol=600519.SH&period=1m&start_time=${midnight(D)}&end_time=${midnight(D) + 86_399_999}&count=1000`);
    expect(((await direct.json()) as { data: { timestamp: number[] } }).data.timestamp).toEqual([]);
    const app = await start(path, { jobs: [] });
    const before = klineRequests().length;
    const answer = await get(app, minuteWindow('600519.SH', D));
    expect(answer.statusCode).toBe(200);
    expect(answer.json().data.timestamp).toHaveLength(240);
    expect(klineRequests().length).toBe(before);
    // An ad-hoc fill of an unrecorded symbol that day gets nothing: the archive is what was recorded.
    const unrecorded = await get(app, minuteWindow('601318.SH', D));
    expect(unrecorded.json().data.timestamp ?? []).toHaveLength(0);
    // Retention (1m: 3 days for ad-hoc fills) leaves recorded series whole.
    await app.history.store!.retention();
    const kept = await get(app, minuteWindow('000001.SZ', D));
    expect(kept.json().data.timestamp).toHaveLength(240);
    // Only the unrecorded symbol went to the vendor (which has nothing of that day any more).
    expect(klineRequests().slice(before).map((u) => u.searchParams.get('symbol'))).toEqual(expect.arrayContaining(['601318.SH']));
    expect(klineRequests().slice(before).every((u) => u.searchParams.get('symbol') === '601318.SH')).toBe(true);
    await app.close();
  });

  it('on start, missed days inside the vendor\'s window are caught up; older ones are not asked for', async () => {
    // Thursday 2026-11-26 evening: days 11-17 … 11-26 were missed (the instance was down).
    clock = at('2026-11-26T18:00:00+08:00');
    const app = await start(path, { catchUpDays: 4 });
    const before = klineRequests().length;
    // The vendor fails for a moment: the day is recorded with failures, completeness shows it,
    // and the next pass asks only for what is missing.
    vendor.down = true;
    await app.recorder!.recordDay({ id: 'core', symbols: MEMBERS, universes: [], periods: ['1d', '1m'], exFactors: false, instruments: false, membership: false }, 'CN', '2026-11-23');
    vendor.down = false;
    expect(await metricValue(app, 'mdqs_store_completeness', { market: 'CN', period: '1m' })).toBeLessThan(1);
    expect(await metricValue(app, 'mdqs_recorder_failures_total', { job: 'core', reason: 'upstream_error' })).toBeGreaterThan(0);
    await app.recorder!.runDue();
    const runs = await app.history.store!.ledgerGet('run', { name: 'core/CN' });
    const done = runs.filter((r) => JSON.parse(r.data).state === 'done').map((r) => r.day);
    expect(done).toEqual(['2026-11-13', D, '2026-11-23', '2026-11-24', '2026-11-25', '2026-11-26']);
    const asked = klineRequests().slice(before).filter((u) => vendor.requests.indexOf(u) >= 0);
    // 4 days × members × periods once each after the outage, plus the attempts that failed.
    const answered = new Set(asked.map((u) => `${u.searchParams.get('symbol')}|${u.searchParams.get('period')}|${u.searchParams.get('start_time')}`));
    expect(answered.size).toBe(4 * MEMBERS.length * 2);
    expect(await metricValue(app, 'mdqs_store_completeness', { market: 'CN', period: '1m' })).toBe(1);
    // Every 1m answer of the catch-up held its day's bars: inside the vendor's window.
    for (const day of ['2026-11-23', '2026-11-26']) {
      const answer = await get(app, minuteWindow('300750.SZ', day));
      expect(answer.json().data.timestamp).toHaveLength(240);
    }
    await app.close();
  });
});
