// An own SQLite store that cannot be written is this instance's fault (issue 42.3): on a real
// filesystem filled at run time, a fill fails with SQLITE_FULL; answers keep coming from the
// vendor, and /readyz is 503 with the history check failing (`unwritable`) until a write
// succeeds again: a read that succeeds meanwhile (a store hit, readiness's own read) does not
// clear it. Space freed, readiness's write probe succeeds and the instance is ready again.
//
// The filesystem is a small tmpfs mounted for the test (it needs root, or CAP_SYS_ADMIN, as CI
// has): the real ENOSPC path through SQLite's WAL, which `PRAGMA max_page_count` would not take
// (that limit is per connection, and the server's connection is not the test's to set).
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';

// Saturday 2025-06-21 12:00 Shanghai: every bar asked for is closed.
const NOW = Date.UTC(2025, 5, 21, 4, 0, 0);

const mountPoint = mkdtempSync(join(tmpdir(), 'mdqs-full-disk-'));
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint], { encoding: 'utf8' }).status === 0;
if (!mounted) {
  rmdirSync(mountPoint);
  if (process.env.REQUIRE_REDIS === '1') throw new Error('REQUIRE_REDIS=1 but a tmpfs cannot be mounted here (needs root or CAP_SYS_ADMIN)');
  process.stderr.write('\n*** SKIPPING the full-disk readiness test: cannot mount a tmpfs (needs root or CAP_SYS_ADMIN) ***\n\n');
}
const describeMounted = mounted ? describe : describe.skip;

describeMounted('an own SQLite store on a full disk', () => {
  const path = join(mountPoint, 'history.sqlite');
  const filler = join(mountPoint, 'filler');
  let clock = NOW;
  const now = () => clock;
  const apps: FastifyInstance[] = [];
  let app: FastifyInstance;
  let plain: FastifyInstance;

  beforeAll(async () => {
    ({ app } = await buildTestApp({
      now,
      adapters: new Map([['sim', createSimAdapter({}, { now })]]),
      configure: (config) => {
        config.history = { ...config.history!, enabled: true, sqlitePath: path };
      },
    }));
    // The same vendor with no store: what every answer must be.
    ({ app: plain } = await buildTestApp({ now, adapters: new Map([['sim', createSimAdapter({}, { now })]]) }));
    apps.push(app, plain);
  });

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    if (mounted) {
      spawnSync('umount', [mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    }
  });

  const get = (target: FastifyInstance, url: string) => target.inject({ url, headers: { 'x-api-key': KEYS.demo } });
  const klines = (symbol: string, extra = '') => `/v1/klines?symbol=${symbol}&period=1d&adjust=none&count=300${extra}`;
  const readyz = async () => {
    const res = await app.inject({ url: '/readyz' });
    return { status: res.statusCode, body: res.json() as { status: string; history: Record<string, unknown> } };
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  function fillDisk(): void {
    const fd = openSync(filler, 'w');
    try {
      for (const size of [65_536, 4096, 1]) {
        const chunk = Buffer.alloc(size, 7);
        try {
          for (;;) writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        }
      }
    } finally {
      closeSync(fd);
    }
  }

  function storedSymbols(): string[] {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return (db.prepare('SELECT symbol FROM series ORDER BY symbol').all() as { symbol: string }[]).map((r) => r.symbol);
    } finally {
      db.close();
    }
  }

  it('a fill failing with SQLITE_FULL: served from the vendor, 503 until a write succeeds; ready again once space is freed', async () => {
    expect((await get(app, klines('600519.SH'))).statusCode).toBe(200);
    expect((await readyz()).status).toBe(200);
    expect(storedSymbols()).toEqual(['600519.SH']);

    fillDisk();
    // A new series: its fill cannot be written. The answer is the vendor's, whole.
    const during = await get(app, klines('000001.SZ'));
    expect(during.statusCode).toBe(200);
    expect(during.json().data).toEqual((await get(plain, klines('000001.SZ'))).json().data);
    const full = await readyz();
    expect(full.status).toBe(503);
    expect(full.body.status).toBe('not_ready');
    expect(full.body.history).toMatchObject({ ok: false, backend: 'sqlite' });

    // Past the bypass after the failure (RETRY_STORE_MS on the app's clock): a stored window is
    // read from the store, successfully; readiness reads the file again (at most once a second).
    clock += 6_000;
    const stored = await get(app, klines('600519.SH', `&end_time=${Date.UTC(2025, 4, 30)}`));
    expect(stored.statusCode).toBe(200);
    expect(stored.json().data).toEqual((await get(plain, klines('600519.SH', `&end_time=${Date.UTC(2025, 4, 30)}`))).json().data);
    await sleep(1_100);
    const still = await readyz();
    expect(still.status).toBe(503);
    expect(still.body.history).toMatchObject({ ok: false, backend: 'sqlite', unwritable: true });
    expect(String(still.body.history.error)).toMatch(/cannot be written: database or disk is full/);
    expect(storedSymbols()).toEqual(['600519.SH']);

    // Space again, and no candle request: readiness's write probe succeeds (at most once a second).
    rmSync(filler);
    const started = performance.now();
    let after = await readyz();
    while (after.status !== 200 && performance.now() - started < 5_000) {
      await sleep(200);
      after = await readyz();
    }
    expect(after.status).toBe(200);
    expect(after.body.history).toEqual({ ok: true, backend: 'sqlite' });

    // Fills are kept again; the probe left nothing behind.
    expect((await get(app, klines('601318.SH'))).statusCode).toBe(200);
    expect(storedSymbols()).toEqual(['600519.SH', '601318.SH']);
    const db = new DatabaseSync(path, { readOnly: true });
    expect(db.prepare("SELECT count(*) AS n FROM reference WHERE kind = 'probe'").get()).toEqual({ n: 0 });
    db.close();
  }, 60_000);
});
