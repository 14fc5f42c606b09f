// Universes over time: the recorder keeps a membership snapshot on each day a universe's members
// changed; `GET /v1/universes/{id}?as_of=` (and the batch form) answers from them, saying from
// which day recording covers; a member that left stays served from its recorded bars, even with
// the vendor refusing it. Through the app with an injectable clock and the sim behind a fake
// adapter whose pool listing changes between two days.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { PoolDetail, PoolId } from '../../src/domain.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';

const at = (iso: string) => Date.parse(iso);
const midnight = (iso: string) => Date.parse(`${iso}T00:00:00+08:00`);
let clock = at('2026-11-16T16:00:00+08:00');
const now = () => clock;
const LEAVER = '000016.SH';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-as-of-'));
const apps: FastifyInstance[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
  rmSync(dir, { recursive: true, force: true });
});

let leaverGone = false;

async function start(path: string, jobs = true): Promise<{ app: FastifyInstance; vendor: FakeAdapter }> {
  const sim = createSimAdapter({}, { now });
  const vendor = fakeAdapter(sim);
  // The vendor's listing: the leaver is gone from the second day on.
  vendor.listPool = async (pool: PoolId) => {
    const detail = await sim.listPool!(pool) as PoolDetail;
    if (!leaverGone) return detail;
    const symbols = detail.symbols.filter((s) => s !== LEAVER);
    return { ...detail, symbols, symbol_count: symbols.length };
  };
  const { app } = await buildTestApp({
    now,
    adapters: new Map([['sim', vendor]]),
    configure: (c) => {
      c.history = {
        ...c.history, enabled: true, sqlitePath: path,
        record: jobs ? { catchUpDays: 3, jobs: [{ id: 'idx', universes: ['CN_Index'], periods: ['1d'], membership: true, exFactors: false, instruments: false }] } : { jobs: [] },
      };
    },
  });
  apps.push(app);
  return { app, vendor };
}

const get = (app: FastifyInstance, url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });

describe('universes as of a recorded day', () => {
  const path = join(dir, 'as-of.sqlite');

  it('answers the membership recorded at or before as_of, and 404 naming recorded_from before it', async () => {
    clock = at('2026-11-16T16:00:00+08:00');
    let { app } = await start(path);
    await app.recorder!.runDue();
    await app.close();

    clock = at('2026-11-17T16:00:00+08:00');
    leaverGone = true;
    ({ app } = await start(path));
    await app.recorder!.runDue();
    // Wednesday: nothing changed, no new snapshot.
    clock = at('2026-11-18T16:00:00+08:00');
    await app.recorder!.runDue();
    const snapshots = await app.history.store!.ledgerGet('members', { name: 'CN_Index' });
    // Thursday to Monday were recorded on Monday (catchUpDays 3): one snapshot, Thursday's.
    expect(snapshots.map((r) => r.day)).toEqual(['2026-11-12', '2026-11-17']);

    const first = await get(app, '/v1/universes/CN_Index?as_of=2026-11-16');
    expect(first.statusCode).toBe(200);
    expect(first.json().data).toMatchObject({ id: 'CN_Index', as_of: '2026-11-12', recorded_from: '2026-11-12' });
    expect(first.json().data.symbols).toContain(LEAVER);
    const later = await get(app, '/v1/universes/CN_Index?as_of=2026-11-20');
    expect(later.json().data).toMatchObject({ as_of: '2026-11-17', recorded_from: '2026-11-12' });
    expect(later.json().data.symbols).not.toContain(LEAVER);
    expect(later.json().data.symbol_count).toBe(first.json().data.symbol_count - 1);
    // Today's listing (no as_of) is the vendor's.
    const today = await get(app, '/v1/universes/CN_Index');
    expect(today.json().data.symbols).not.toContain(LEAVER);
    expect(today.json().data.as_of).toBeUndefined();

    const before = await get(app, '/v1/universes/CN_Index?as_of=2026-11-10');
    expect(before.statusCode).toBe(404);
    expect(before.json()).toMatchObject({ error: 'NOT_FOUND', details: { recorded_from: '2026-11-12' } });
    expect(before.json().message).toContain('recorded from 2026-11-12');
    const bad = await get(app, '/v1/universes/CN_Index?as_of=16-11-2026');
    expect(bad.statusCode).toBe(400);

    const batch = await app.inject({ method: 'POST', url: '/v1/universes/batch', headers: { 'x-api-key': KEYS.demo }, payload: { ids: ['CN_Index', 'HK_Index'], as_of: '2026-11-16' } });
    expect(batch.statusCode).toBe(200);
    expect(Object.keys(batch.json().data)).toEqual(['CN_Index']);
    expect(batch.json().data.CN_Index.symbols).toContain(LEAVER);
  });

  it('the member that left keeps its recorded bars served, with the vendor refusing it', async () => {
    clock = at('2026-11-18T17:00:00+08:00');
    const { app, vendor } = await start(path, false);
    vendor.failing.set(LEAVER, 'error');
    const answer = await get(app, `/v1/klines?symbol=${LEAVER}&period=1d&count=1&start_time=${midnight('2026-11-16')}&end_time=${midnight('2026-11-16')}`);
    // (an answer's first bar takes prev_close from stored bars before it: recorded too)
    expect(answer.statusCode).toBe(200);
    expect(answer.json().data.timestamp).toEqual([midnight('2026-11-16')]);
    // A day after it left was never recorded: that still fails, nothing is invented.
    const after = await get(app, `/v1/klines?symbol=${LEAVER}&period=1d&count=1&start_time=${midnight('2026-11-17')}&end_time=${midnight('2026-11-17')}`);
    expect(after.statusCode).toBeGreaterThanOrEqual(500);
    vendor.reset();
    const again = await get(app, `/v1/klines?symbol=${LEAVER}&period=1d&count=1&start_time=${midnight('2026-11-16')}&end_time=${midnight('2026-11-16')}`);
    expect(again.statusCode).toBe(200);
    expect(vendor.symbolsOf('getCandles')).not.toContain(LEAVER);
  });

  it('without recorded membership, as_of says how to get it', async () => {
    const { app } = await start(join(dir, 'none.sqlite'), false);
    const answer = await get(app, '/v1/universes/CN_Stock?as_of=2026-11-16');
    expect(answer.statusCode).toBe(404);
    expect(answer.json().message).toContain('history.record');
  });
});
