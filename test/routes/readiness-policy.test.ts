// The readiness policy (issue 23.8, 28.5): /readyz is 503 only for this instance's own faults
// (its own SQLite store damaged or failing, shutting down); a fault every instance shares (a
// shared PostgreSQL store failing, Redis down, every vendor of a market open) is reported by name
// and since-when under `degraded`, and the instance stays ready (200).
import { mkdtempSync, openSync, readSync, rmSync, statSync, writeSync, closeSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DatabaseSync } from 'node:sqlite';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { HistoryStore, StoreHealth } from '../../src/store/index.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';

// Saturday 2025-06-21 12:00 Shanghai: every bar asked for is closed.
const NOW = Date.UTC(2025, 5, 21, 4, 0, 0);
const now = () => NOW;
const dir = mkdtempSync(join(tmpdir(), 'mdqs-readiness-'));
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function appWithStore(options: { path?: string; history?: HistoryStore }) {
  const { app } = await buildTestApp({
    now,
    adapters: new Map([['sim', createSimAdapter({}, { now })]]),
    history: options.history,
    configure: (config) => {
      config.history = { ...config.history!, enabled: options.path !== undefined, sqlitePath: options.path ?? config.history!.sqlitePath };
    },
  });
  apps.push(app);
  return app;
}

const klines = (app: FastifyInstance, symbol: string) =>
  app.inject({ url: `/v1/klines?symbol=${symbol}&period=1d&adjust=none&count=300`, headers: { 'x-api-key': KEYS.demo } });

/** Overwrites every page but the first of a SQLite file (and its WAL) with random bytes. */
function damage(path: string): void {
  for (const file of [path, `${path}-wal`]) {
    if (!existsSync(file)) continue;
    const size = statSync(file).size;
    const fd = openSync(file, 'r+');
    const header = Buffer.alloc(100);
    readSync(fd, header, 0, 100, 0);
    const pageSize = file === path ? (header.readUInt16BE(16) === 1 ? 65_536 : header.readUInt16BE(16)) : 4096;
    for (let at = pageSize; at < size; at += pageSize) {
      const noise = Buffer.alloc(Math.min(pageSize, size - at));
      for (let i = 0; i < noise.length; i++) noise[i] = (i * 131 + at) & 0xff;
      writeSync(fd, noise, 0, noise.length, at);
    }
    closeSync(fd);
  }
}

/** A stand-in store whose health the test sets: the policy decides by backend and health alone. */
function storeWithHealth(health: StoreHealth): HistoryStore {
  return {
    stored: async () => undefined,
    // eslint-disable-next-line require-yield
    pass: async function* () { return undefined; },
    salvage: async () => undefined,
    reference: async () => new Map(),
    keepReference: async () => undefined,
    candles: async () => undefined,
    stats: async () => ({ series: 0, bars: 0, bytes: 0, periods: [] } as never),
    drop: async () => 0,
    health: () => health,
    probe: async () => health,
    retention: async () => 0,
    ledgerPut: async () => undefined,
    ledgerGet: async () => [],
    markRecorded: async () => undefined,
    close: async () => undefined,
  };
}

describe('readiness policy', () => {
  it('the instance\'s own SQLite store damaged at run time: data still served, /readyz 503 naming the damage', async () => {
    const path = join(dir, 'damaged.sqlite');
    const app = await appWithStore({ path });
    expect((await klines(app, '600519.SH')).statusCode).toBe(200);
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
    // What is on disk is in the main file (a checkpoint, as SQLite makes on its own as the WAL
    // grows): the damage then hits bars the server's connection has to read back from the file.
    const admin = new DatabaseSync(path);
    admin.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    admin.close();
    damage(path);
    // Requests keep answering (from the vendor); the damage is found on the way.
    for (const symbol of ['600519.SH', '000001.SZ', '601318.SH']) {
      const res = await app.inject({ url: `/v1/klines?symbol=${symbol}&period=1d&adjust=none&count=250&end_time=${Date.UTC(2025, 4, 30)}`, headers: { 'x-api-key': KEYS.demo } });
      expect(res.statusCode).toBe(200);
    }
    // Readiness reads the file itself (not the server connection's page cache) at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().status).toBe('not_ready');
    expect(ready.json().history).toMatchObject({ ok: false, backend: 'sqlite', damaged: true });
    // A damaged file stays reported although later reads may succeed.
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(503);
  });

  it('a block of the instance\'s own SQLite store that fails its checksum: served from the vendor, /readyz 503', async () => {
    const path = join(dir, 'bad-block.sqlite');
    const app = await appWithStore({ path });
    const first = await klines(app, '600519.SH');
    expect(first.statusCode).toBe(200);
    // One byte of a stored block flipped by someone else (the server's own connection wrote it).
    const admin = new DatabaseSync(path);
    const row = admin.prepare('SELECT rowid, data FROM blocks ORDER BY rowid DESC LIMIT 1').get() as { rowid: number; data: Uint8Array };
    const data = Buffer.from(row.data);
    data[data.length - 3] ^= 0x5a;
    admin.prepare('UPDATE blocks SET data = ? WHERE rowid = ?').run(data, row.rowid);
    admin.close();
    // Another window of the same series: a memory miss, a store read of the flipped block.
    const ts = first.json().data.timestamp as number[];
    const window = `start_time=${ts[ts.length - 20]}&end_time=${ts[ts.length - 1]}`;
    const again = await app.inject({ url: `/v1/klines?symbol=600519.SH&period=1d&adjust=none&${window}`, headers: { 'x-api-key': KEYS.demo } });
    expect(again.statusCode).toBe(200);
    expect(again.json().data.close).toEqual(first.json().data.close.slice(-20));
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().history).toMatchObject({ ok: false, backend: 'sqlite', damaged: true });
  });

  it('the instance\'s own SQLite store failing (not damaged): 503', async () => {
    const app = await appWithStore({ history: storeWithHealth({ ok: false, backend: 'sqlite', error: 'disk I/O', since: NOW }) });
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().history).toMatchObject({ ok: false, backend: 'sqlite' });
  });

  it('a shared PostgreSQL store failing: 200, degraded by name and since-when', async () => {
    const app = await appWithStore({ history: storeWithHealth({ ok: false, backend: 'postgres', error: 'connection refused', since: NOW - 60_000 }) });
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().status).toBe('degraded');
    expect(ready.json().degraded).toEqual([
      { name: 'history', problem: 'store failing: history from the vendor', since: new Date(NOW - 60_000).toISOString() },
    ]);
  });

  it('a healthy store: 200 ready, nothing degraded', async () => {
    const app = await appWithStore({ history: storeWithHealth({ ok: true, backend: 'postgres' }) });
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().status).toBe('ready');
    expect(ready.json().degraded).toBeUndefined();
  });

  it('shutting down: 503', async () => {
    const app = await appWithStore({});
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
    app.markClosing();
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().error).toBe('SHUTTING_DOWN');
  });
});
