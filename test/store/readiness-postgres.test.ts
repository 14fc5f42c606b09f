// /readyz follows a shared PostgreSQL store with no candle traffic (issue 42.2): a real PostgreSQL
// of the test's own (own-postgres.ts: initdb and pg_ctl on a free port, never the shared server)
// stopped is listed under `degraded` within 5 s, and started again is cleared within 5 s; the
// instance stays 200 throughout (a shared fault). The app's clock stands still, so the store's
// bypass after a failed request (RETRY_STORE_MS on that clock) can end only by a probe that
// succeeds: after the recovery, a request for a new symbol is kept in PostgreSQL again.
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { postgresBin, startOwnPostgres, type OwnPostgres } from './own-postgres.ts';

// Saturday 2025-06-21 12:00 Shanghai: every bar asked for is closed.
const NOW = Date.UTC(2025, 5, 21, 4, 0, 0);
const now = () => NOW;
const SCHEMA = 'mdqs_readiness';

const BIN = postgresBin();
if (BIN === undefined) {
  if (process.env.REQUIRE_REDIS === '1') throw new Error('REQUIRE_REDIS=1 but no PostgreSQL server (initdb) is installed');
  process.stderr.write('\n*** SKIPPING the PostgreSQL readiness test: no PostgreSQL server (initdb) installed ***\n\n');
}
const describePg = BIN === undefined ? describe.skip : describe;

describePg('readiness follows a shared PostgreSQL store', () => {
  let server: OwnPostgres | undefined;
  let app: FastifyInstance | undefined;

  beforeAll(async () => {
    server = await startOwnPostgres(BIN);
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    server?.dispose();
  }, 60_000);

  const readyz = async () => {
    const res = await app!.inject({ url: '/readyz' });
    return { status: res.statusCode, body: res.json() as { status: string; history: { ok: boolean; error?: string }; degraded?: { name: string }[] } };
  };
  const historyDegraded = (body: { degraded?: { name: string }[] }) => (body.degraded ?? []).some((d) => d.name === 'history');

  /** Polls /readyz until `done`, for at most `ms`: how long it took, and the last answer. */
  async function until(done: (r: Awaited<ReturnType<typeof readyz>>) => boolean, ms: number) {
    const started = performance.now();
    let last = await readyz();
    while (!done(last) && performance.now() - started < ms) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      last = await readyz();
    }
    return { tookMs: performance.now() - started, last };
  }

  async function seriesKept(symbol: string): Promise<number> {
    const client = new pg.Client({ connectionString: server!.url });
    await client.connect();
    try {
      const r = await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.series WHERE symbol = $1`, [symbol]);
      return r.rows[0].n as number;
    } finally {
      await client.end();
    }
  }

  const klines = (symbol: string) =>
    app!.inject({ url: `/v1/klines?symbol=${symbol}&period=1d&adjust=none&count=120`, headers: { 'x-api-key': KEYS.demo } });

  it('stopped: degraded within 5 s with no request; started: cleared within 5 s; the store is used again', async () => {
    ({ app } = await buildTestApp({
      now,
      adapters: new Map([['sim', createSimAdapter({}, { now })]]),
      configure: (config) => {
        config.history = { ...config.history!, enabled: true, backend: 'postgres', databaseUrl: server!.url, postgresSchema: SCHEMA };
      },
    }));
    expect((await klines('600519.SH')).statusCode).toBe(200);
    expect(await seriesKept('600519.SH')).toBe(1);
    const healthy = await readyz();
    expect(healthy.status).toBe(200);
    expect(healthy.body.history.ok).toBe(true);
    expect(historyDegraded(healthy.body)).toBe(false);

    // Stopped, and no candle request: only /readyz is asked.
    server!.stop();
    const down = await until((r) => historyDegraded(r.body), 5_000);
    expect(down.last.body.history.ok, JSON.stringify(down.last.body.history)).toBe(false);
    expect(historyDegraded(down.last.body)).toBe(true);
    expect(down.tookMs).toBeLessThan(5_000);
    // A shared fault: the instance stays ready, and says so.
    expect(down.last.status).toBe(200);
    expect(down.last.body.status).toBe('degraded');

    // A request meanwhile is answered from the vendor (the store bypassed after its failure).
    expect((await klines('000001.SZ')).statusCode).toBe(200);

    // Started again, and no candle request: the next probes find it.
    server!.start();
    const up = await until((r) => r.body.history.ok && !historyDegraded(r.body), 5_000);
    expect(up.last.body.history).toEqual({ ok: true, backend: 'postgres' });
    expect(historyDegraded(up.last.body)).toBe(false);
    expect(up.tookMs).toBeLessThan(5_000);
    expect(up.last.status).toBe(200);

    // The bypass ended with the probe (the app's clock has not moved since the failure).
    expect((await klines('601318.SH')).statusCode).toBe(200);
    expect(await seriesKept('601318.SH')).toBe(1);
  }, 60_000);
});
