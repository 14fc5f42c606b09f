// A fleet records into its shared PostgreSQL store with one runner: two real server processes on
// one store, with Redis (the runner holds a Redis lease) and without it (a PostgreSQL advisory
// lock), at a CN evening (MDQS_CLOCK_START) with a TickFlow-format vendor on a local server.
// Exactly one instance records; it is SIGKILLed mid-run and the other finishes the job; every
// member-day and period was asked of the vendor once, but for the requests in flight at the kill
// (at most the recorder's concurrency, 2 here: the killed runner never stored their answers).
// A month later a new instance answers the recorded minute bars from the shared store, the
// vendor's five-day window long past them.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simSymbols } from '../helpers/cache-app.ts';
import { startTickflowVendor, tickflowConfigYaml, type FakeVendor } from '../helpers/tickflow-vendor.ts';
import { startServer, type ServerProcess } from '../e2e/server-process.ts';
import { describeRedis, REDIS_URL } from '../redis/support.ts';

const CLOCK_START = '2026-11-25T18:00:00+08:00';
const began = Date.now();
/** The vendor's clock; `later` moves it (with a server started at that time) a month on. */
let later = 0;
const now = () => Date.parse(CLOCK_START) + (Date.now() - began) + later;
const MONTH_MS = 30 * 86_400_000;
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** Trading days recorded: 11-23, 11-24 and 11-25 (catchUpDays 3). */
const DAYS = 3;
const MEMBERS = simSymbols('CN').filter((s) => !/^(000001\.SH|000300\.SH|000905\.SH|000852\.SH|000016\.SH|000688\.SH|399\d{3}\.SZ|899\d{3}\.BJ)$/.test(s)).slice(0, 40);

const dir = mkdtempSync(join(tmpdir(), 'mdqs-recorder-fleet-'));
let vendor: FakeVendor;
const running: ServerProcess[] = [];
const schemas: string[] = [];

beforeAll(async () => {
  vendor = await startTickflowVendor(now, { delayMs: 15, minuteWindowDays: 5 });
});
afterAll(async () => {
  for (const server of running) await server.stop();
  await vendor?.close();
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
  rmSync(dir, { recursive: true, force: true });
});

function configFile(schema: string, record = true): string {
  const path = join(dir, `${schema}${record ? '' : '-reader'}.yaml`);
  const jobs = record
    ? `
    delayMinutes: 20
    catchUpDays: ${DAYS}
    concurrency: 2
    jobs:
      - id: fleet
        symbols: [${MEMBERS.join(', ')}]
        periods: [1d, 1m]
        exFactors: false
        instruments: false
        membership: false`
    : `
    jobs: []`;
  writeFileSync(path, tickflowConfigYaml(vendor, ['retry: { maxRetries: 0 }'], `history:
  backend: postgres
  postgresSchema: ${schema}
  record:${jobs}`));
  return path;
}

async function doneDays(schema: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const r = await client.query(`SELECT day, data FROM ${schema}.ledger WHERE kind = 'run' ORDER BY day`);
    return (r.rows as { day: string; data: string }[]).filter((row) => JSON.parse(row.data).state === 'done').map((row) => row.day);
  } catch {
    return [];
  } finally {
    await client.end();
  }
}

const recording = (line: { msg?: string }) => line.msg === 'recorder: recording a day';

async function fleetRun(withRedis: boolean): Promise<void> {
  const schema = `rec_${withRedis ? 'redis' : 'pg'}_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  const env = {
    CONFIG_FILE: configFile(schema), DATABASE_URL, MDQS_CLOCK_START: CLOCK_START, LOG_LEVEL: 'info', MDQS__server__pidFile: '""',
    ...(withRedis ? { REDIS_URL } : {}),
  };
  const from = vendor.requests.length;
  // Both at once; each one that started is stopped at the end, whatever happens to the other.
  const started = await Promise.allSettled([startServer(env), startServer(env)]);
  for (const s of started) if (s.status === 'fulfilled') running.push(s.value);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
  const [a, b] = started.map((s) => (s as PromiseFulfilledResult<ServerProcess>).value);
  // Exactly one of them records.
  const first = await Promise.race([a, b].map((s) => s.waitFor(recording, 'recording a day').then(() => s)));
  const standby = first === a ? b : a;
  const total = MEMBERS.length * DAYS * 2;
  // Kill the runner mid-run.
  for (let i = 0; i < 400 && vendor.requests.length - from < total * 0.4; i++) await new Promise((r) => setTimeout(r, 50));
  expect(standby.logs.some(recording)).toBe(false);
  first.proc.kill('SIGKILL');
  const killedAt = Date.now();
  await first.exited;
  const askedBeforeKill = vendor.requests.length - from;
  expect(askedBeforeKill).toBeLessThan(total);
  // The other takes over within the lease (Redis: 6 s; the advisory lock goes with the connection) and finishes.
  await standby.waitFor(recording, 'standby recording');
  const takeoverMs = Date.now() - killedAt;
  expect(takeoverMs).toBeLessThan(withRedis ? 9000 : 5000);
  for (let i = 0; i < 600 && (await doneDays(schema)).length < DAYS; i++) await new Promise((r) => setTimeout(r, 100));
  expect(await doneDays(schema)).toEqual(['2026-11-23', '2026-11-24', '2026-11-25']);
  // Vendor requests ÷ member-days per period: one each, but for the requests in flight at the kill.
  const asked = vendor.requests.slice(from).filter((u) => u.pathname === '/v1/klines');
  let repeated = 0;
  for (const period of ['1d', '1m']) {
    const mine = asked.filter((u) => u.searchParams.get('period') === period);
    const distinct = new Set(mine.map((u) => `${u.searchParams.get('symbol')}|${u.searchParams.get('start_time')}`));
    expect(distinct.size).toBe(MEMBERS.length * DAYS);
    repeated += mine.length - distinct.size;
    const memberDays = MEMBERS.length * DAYS;
    console.log(`FIGURE recorder fleet (${withRedis ? 'Redis lease' : 'advisory lock'}), ${period}: ${mine.length} vendor requests / ${memberDays} member-days = ${(mine.length / memberDays).toFixed(3)} (${mine.length - distinct.size} repeated after the kill); takeover ${takeoverMs} ms`);
  }
  expect(repeated).toBeLessThanOrEqual(2);
  await standby.stop();

  // A month later, on a new instance of the fleet: the recorded minute bars answer from the
  // shared store, the vendor's five-day window long past them.
  later = MONTH_MS;
  try {
    const reader = await startServer({ ...env, CONFIG_FILE: configFile(schema, false), MDQS_CLOCK_START: new Date(Date.parse(CLOCK_START) + MONTH_MS).toISOString() });
    running.push(reader);
    const day = Date.parse('2026-11-24T00:00:00+08:00');
    const mark = vendor.requests.length;
    const direct = await fetch(`${vendor.base}/v1/klines?symbol=${MEMBERS[0]}&period=1m&start_time=${day}&end_time=${day + 86_399_999}&count=1000`);
    expect(((await direct.json()) as { data: { timestamp: number[] } }).data.timestamp).toEqual([]);
    const answer = await fetch(`${reader.base}/v1/klines?symbol=${MEMBERS[0]}&period=1m&count=240&start_time=${day + 9.5 * 3_600_000}&end_time=${day + 15 * 3_600_000}`, { headers: { 'x-api-key': 'demo-key' } });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { data: { timestamp: number[] } }).data.timestamp).toHaveLength(240);
    // Only the direct check above asked for K-lines (the forward-adjusted answer asks for ex-factors, not recorded here).
    expect(vendor.requests.slice(mark).filter((u) => u.pathname === '/v1/klines')).toHaveLength(1);
    await reader.stop();
  } finally {
    later = 0;
  }
}

describeRedis('a fleet on one PostgreSQL store and Redis records with one runner', () => {
  it('one runner by lease; SIGKILLed mid-run, the other finishes; one request per member-day', async () => {
    await fleetRun(true);
  }, 90_000);
});

describe('a fleet on one PostgreSQL store without Redis records with one runner', () => {
  it('without Redis: one runner by advisory lock; SIGKILLed mid-run, the other finishes; one request per member-day', async () => {
    await fleetRun(false);
  }, 90_000);
});
