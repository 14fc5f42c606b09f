// Stored history answers whatever the vendor does, through real server processes (`node
// src/server.ts`, as `npm start` runs it) in front of a TickFlow-format vendor on a local HTTP
// server, with the service's clock in a CN session (MDQS_CLOCK_START: Wednesday 2026-11-25 10:30
// Asia/Shanghai; the vendor's sim runs on the same clock and sends the forming bar). One instance
// fills the store; the vendor then answers 500 until the adapter's circuit opens. Every request
// of the outage table answers 200 with the stored bars on that instance, on the same instance
// restarted with empty caches (SQLite), and on a second instance started during the outage that
// shares the PostgreSQL store: a window inside stored history (adjust none and forward), and the
// newest 60 daily bars (none and forward), whose forming bar is then said to be absent
// (X-Forming-Bar) and which is never cached as fresh: once the vendor is back the next request
// gets the live forming bar. The upstream counter equals what the vendor received.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '../../src/markets/calendar.ts';
import { startTickflowVendor, tickflowConfigYaml, type FakeVendor } from '../helpers/tickflow-vendor.ts';
import { startServer, type ServerProcess } from './server-process.ts';

const SESSION = Date.parse('2026-11-25T10:30:00+08:00');
const began = Date.now();
/** The session clock: SESSION when the file started, running at real speed. */
const now = () => SESSION + (Date.now() - began);
const OPEN_MS = 1500;
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const day = (iso: string) => Date.parse(`${iso}T00:00:00+08:00`);
const WINDOW = `start_time=${day('2026-09-01')}&end_time=${day('2026-10-30')}&count=10000`;
const ROWS = {
  windowNone: `/v1/klines?symbol=600519.SH&period=1d&adjust=none&${WINDOW}`,
  windowForward: `/v1/klines?symbol=600519.SH&period=1d&adjust=forward&${WINDOW}`,
  newestNone: '/v1/klines?symbol=600519.SH&period=1d&adjust=none&count=60',
  newestForward: '/v1/klines?symbol=600519.SH&period=1d&adjust=forward&count=60',
} as const;
type Row = keyof typeof ROWS;
interface Bars { timestamp: number[]; open: number[]; close: number[] }
interface Answer { status: number; headers: Headers; bars: Bars; body: Record<string, unknown> }

const dir = mkdtempSync(join(tmpdir(), 'mdqs-outage-'));
let vendor: FakeVendor;
const running: ServerProcess[] = [];

beforeAll(async () => {
  vendor = await startTickflowVendor(now);
});
afterAll(async () => {
  for (const server of running) await server.stop();
  await vendor?.close();
  rmSync(dir, { recursive: true, force: true });
});

function configFile(name: string, history: string): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, tickflowConfigYaml(vendor, ['retry: { maxRetries: 0 }', `breaker: { failureThreshold: 2, openMs: ${OPEN_MS} }`], history));
  return path;
}

async function start(config: string, name: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const server = await startServer({
    CONFIG_FILE: config, MDQS_CLOCK_START: String(now()), MDQS__server__pidFile: join(dir, `${name}.pid`), ...env,
  });
  running.push(server);
  return server;
}

async function stop(server: ServerProcess): Promise<void> {
  await server.stop();
  running.splice(running.indexOf(server), 1);
}

async function get(server: ServerProcess, path: string): Promise<Answer> {
  const res = await fetch(server.base + path, { headers: { 'x-api-key': 'demo-key' } });
  const body = await res.json() as Record<string, unknown>;
  return { status: res.status, headers: res.headers, bars: body.data as Bars, body };
}

/** Vendor calls of `server` that reached the vendor (refusals by the open circuit are counted apart). */
async function upstream(server: ServerProcess): Promise<{ reached: number; refused: number }> {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  let reached = 0;
  let refused = 0;
  for (const line of text.split('\n')) {
    const m = /^mdqs_upstream_requests_total\{([^}]*)\} (\d+)/.exec(line);
    if (m === null || !m[1].includes('adapter="tickflow"')) continue;
    if (/outcome="(circuit_open|budget_exhausted)"/.test(m[1])) refused += Number(m[2]);
    else reached += Number(m[2]);
  }
  return { reached, refused };
}

/** The vendor fails (500) until `server`'s circuit for tickflow opens: asked for a symbol nothing stored. */
async function openCircuit(server: ServerProcess): Promise<void> {
  vendor.down = true;
  vendor.downStatus = 500;
  for (let attempt = 0; attempt < 6; attempt++) {
    const res = await get(server, '/v1/klines?symbol=000001.SZ&period=1d&adjust=none&count=5');
    expect(res.status).toBeGreaterThanOrEqual(500);
    if (res.body.error === 'UPSTREAM_UNAVAILABLE') return;
  }
  throw new Error('the circuit never opened');
}

/** Today's forming daily bar's label on the session clock (Shanghai midnight of the session day). */
const todayLabel = () => day(localDate('CN', now()));

/** The answers the filling instance gave in session with the vendor up. */
const filled = {} as Record<Row, Bars>;

/** Asserts the outage answers of `server`: the closed bars as filled, the forming bar said to be absent. */
async function expectOutageAnswers(server: ServerProcess): Promise<void> {
  for (const row of ['windowNone', 'windowForward'] as const) {
    const res = await get(server, ROWS[row]);
    expect(res.status, `${row}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
    expect(res.bars).toEqual(filled[row]);
    expect(res.headers.get('x-forming-bar')).toBeNull();
  }
  for (const row of ['newestNone', 'newestForward'] as const) {
    const res = await get(server, ROWS[row]);
    expect(res.status, `${row}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
    expect(res.headers.get('x-cache')).toBe('STALE');
    expect(res.headers.get('x-forming-bar')).toBe('absent');
    expect(res.headers.get('x-upstream')).toBe('tickflow');
    // Every stored closed bar of the window: the 60 newest closed, the last one yesterday's.
    const closed = filled[row].timestamp.filter((t) => t < todayLabel());
    expect(res.bars.timestamp).toHaveLength(60);
    expect(res.bars.timestamp.at(-1)).toBe(closed.at(-1));
    const overlap = filled[row].timestamp.filter((t) => t < todayLabel() && t >= res.bars.timestamp[0]);
    expect(res.bars.timestamp.slice(-overlap.length)).toEqual(overlap);
    expect(res.bars.close.slice(-overlap.length)).toEqual(filled[row].close.filter((_, i) => overlap.includes(filled[row].timestamp[i])));
  }
}

describe('the outage table on SQLite: the filling instance, then the same instance restarted', () => {
  let server: ServerProcess;
  let restartedAt = 0;
  const config = () => configFile('sqlite', `history:\n  enabled: true\n  backend: sqlite\n  sqlitePath: ${join(dir, 'history.sqlite')}`);

  it('fills in session with the vendor up: the newest bars end with the forming bar', async () => {
    vendor.down = false;
    server = await start(config(), 'a');
    for (const row of Object.keys(ROWS) as Row[]) {
      const res = await get(server, ROWS[row]);
      expect(res.status, row).toBe(200);
      expect(res.headers.get('x-forming-bar')).toBeNull();
      filled[row] = res.bars;
    }
    expect(filled.newestNone.timestamp.at(-1)).toBe(todayLabel());
    expect(filled.windowNone.timestamp.length).toBeGreaterThan(35);
    expect(vendor.requests.some((u) => u.pathname === '/v1/klines/ex-factors')).toBe(true);
  });

  it('with the circuit open, the filling instance still answers every row 200', async () => {
    await openCircuit(server);
    for (const row of Object.keys(ROWS) as Row[]) {
      const res = await get(server, ROWS[row]);
      expect(res.status, row).toBe(200);
    }
  });

  it('restarted during the outage (empty caches), every row answers 200 from the store', async () => {
    await stop(server);
    restartedAt = vendor.requests.length;
    server = await start(config(), 'a2');
    await openCircuit(server);
    const before = vendor.requests.length;
    await expectOutageAnswers(server);
    // The windows and the ex-factors came from the store; the forming bar's calls were refused.
    expect(vendor.requests.length).toBe(before);
    const counts = await upstream(server);
    expect(counts.refused).toBeGreaterThanOrEqual(2);
  });

  it('once the vendor is back, the next request gets the live forming bar (the stale answer was not cached)', async () => {
    vendor.down = false;
    await new Promise((resolve) => setTimeout(resolve, OPEN_MS + 200));
    const res = await get(server, ROWS.newestNone);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-forming-bar')).toBeNull();
    expect(res.headers.get('x-cache')).toBe('MISS');
    expect(res.bars.timestamp.at(-1)).toBe(todayLabel());
    expect(res.bars.timestamp).toHaveLength(60);
  });

  it("the restarted instance's upstream counter equals the requests the vendor received from it", async () => {
    const counts = await upstream(server);
    expect(counts.reached).toBeGreaterThan(0);
    expect(counts.reached).toBe(vendor.requests.length - restartedAt);
    await stop(server);
  });
});

describe('the outage table on PostgreSQL: a second instance started during the outage', () => {
  const schema = `mdqs_outage_${process.pid}_${Date.now() % 100000}`;
  const config = () => configFile('pg', `history:\n  enabled: true\n  backend: postgres\n  postgresSchema: ${schema}`);
  const env = { DATABASE_URL };
  let first: ServerProcess;

  afterAll(async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it('the first instance fills the shared store in session', async () => {
    vendor.down = false;
    first = await start(config(), 'pg1', env);
    for (const row of Object.keys(ROWS) as Row[]) {
      const res = await get(first, ROWS[row]);
      expect(res.status, row).toBe(200);
      filled[row] = res.bars;
    }
    expect(filled.newestNone.timestamp.at(-1)).toBe(todayLabel());
  });

  it('a second instance started while the vendor fails answers every row 200 from the shared store', async () => {
    await openCircuit(first);
    const second = await start(config(), 'pg2', env);
    await openCircuit(second);
    const before = vendor.requests.length;
    await expectOutageAnswers(second);
    expect(vendor.requests.length).toBe(before);
    await stop(second);
    await stop(first);
  });
});
