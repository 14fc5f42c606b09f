// The candle history store through the real app on the embedded sim (issue 9): after one request
// for a year of daily bars, shifted windows inside it make zero vendor calls (also after a
// restart, the SQLite file reopened); a window extending it by a month makes one call for that
// month only; adjusted and derived-period answers from the store equal a direct fetch's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';

// Saturday 2025-06-21 12:00 Shanghai: every bar of the windows below is closed.
const NOW = Date.UTC(2025, 5, 21, 4, 0, 0);
const dir = mkdtempSync(join(tmpdir(), 'mdqs-history-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const day = (iso: string) => Date.parse(`${iso}T00:00:00+08:00`);

async function start(path: string, history: boolean): Promise<{ app: FastifyInstance; vendor: FakeAdapter }> {
  const vendor = fakeAdapter(createSimAdapter({}, { now: () => NOW }));
  const { app } = await buildTestApp({
    now: () => NOW,
    adapters: new Map([['sim', vendor]]),
    configure: (config) => {
      config.history = { ...config.history, enabled: history, sqlitePath: path };
    },
  });
  return { app, vendor };
}

async function klines(app: FastifyInstance, query: string) {
  const res = await app.inject({ url: `/v1/klines?symbol=600519.SH&${query}`, headers: { 'x-api-key': KEYS.demo } });
  expect(res.statusCode).toBe(200);
  return res.json().data as { timestamp: number[]; close: number[]; open: number[] };
}

describe('candle history store through the app', () => {
  const path = join(dir, 'history.sqlite');

  it('a year once, then shifted windows inside it cost no vendor call, also after a restart', async () => {
    let { app, vendor } = await start(path, true);
    const year = await klines(app, `period=1d&adjust=none&count=10000&start_time=${day('2024-06-01')}&end_time=${day('2025-05-31')}`);
    expect(year.timestamp.length).toBeGreaterThan(230);
    const afterYear = vendor.calls.getCandles;
    expect(afterYear).toBeGreaterThan(0);
    for (const [from, to] of [['2024-07-01', '2024-09-30'], ['2024-08-15', '2025-01-10'], ['2025-02-01', '2025-05-30']]) {
      const window = await klines(app, `period=1d&adjust=none&count=10000&start_time=${day(from)}&end_time=${day(to)}`);
      expect(window.timestamp[0]).toBeGreaterThanOrEqual(day(from));
      expect(window.timestamp.at(-1)).toBeLessThanOrEqual(day(to));
      const expected = year.timestamp.filter((ts) => ts >= day(from) && ts <= day(to));
      expect(window.timestamp).toEqual(expected);
    }
    expect(vendor.calls.getCandles).toBe(afterYear);
    await app.close();

    ({ app, vendor } = await start(path, true));
    const again = await klines(app, `period=1d&adjust=none&count=10000&start_time=${day('2024-10-01')}&end_time=${day('2025-03-31')}`);
    expect(again.timestamp).toEqual(year.timestamp.filter((ts) => ts >= day('2024-10-01') && ts <= day('2025-03-31')));
    expect(vendor.calls.getCandles).toBe(0);

    // One month past the stored year: one vendor call, for that month only.
    const extended = await klines(app, `period=1d&adjust=none&count=10000&start_time=${day('2024-06-01')}&end_time=${day('2025-06-20')}`);
    expect(extended.timestamp.length).toBeGreaterThan(year.timestamp.length);
    expect(vendor.calls.getCandles).toBe(1);
    await app.close();
  });

  it("/metrics reports the store's hot blocks held in memory, none before a store hit", async () => {
    const { app } = await start(join(dir, 'blocks.sqlite'), true);
    const held = async () => {
      const text = (await app.inject({ url: '/metrics' })).body;
      const match = /^mdqs_cache_bytes\{layer="store_blocks"\} (\d+)$/m.exec(text);
      expect(match, 'mdqs_cache_bytes{layer="store_blocks"} on /metrics').not.toBeNull();
      return Number(match![1]);
    };
    expect(await held()).toBe(0);
    await klines(app, `period=1d&adjust=none&count=10000&start_time=${day('2024-06-01')}&end_time=${day('2025-05-31')}`);
    // A window inside the stored year, not the same URL: the memory tier misses, the store answers.
    await klines(app, `period=1d&adjust=none&count=10000&start_time=${day('2024-07-01')}&end_time=${day('2024-09-30')}`);
    const bytes = await held();
    expect(bytes).toBeGreaterThan(1000);
    expect(bytes).toBeLessThanOrEqual(16 * 1024 * 1024);
    await app.close();
  });

  it('adjusted and derived periods from the store equal a direct fetch', async () => {
    const stored = await start(path, true);
    const direct = await start(join(dir, 'unused.sqlite'), false);
    for (const query of [
      `period=1d&adjust=forward&count=200&end_time=${day('2025-06-20')}`,
      `period=1w&adjust=backward&count=40&end_time=${day('2025-06-20')}`,
      `period=1M&adjust=forward_additive&count=12&end_time=${day('2025-06-20')}`,
      `period=1d&adjust=backward_additive&count=150&start_time=${day('2024-09-01')}&end_time=${day('2025-04-30')}`,
      'period=1Q&adjust=none&count=8',
    ]) {
      expect(await klines(stored.app, query)).toEqual(await klines(direct.app, query));
    }
    await stored.app.close();
    await direct.app.close();
  });
});

describe('candle history store in front of a real vendor adapter (tickflow over msw)', async () => {
  const { setupServer } = await import('msw/node');
  const { tickflowHandlers, TICKFLOW_TEST_BASE } = await import('../../mocks/handlers/tickflow.ts');
  const { createAdapters, productionDeps } = await import('../../src/upstream/registry.ts');
  const log: Array<{ url: string }> = [];
  const server = setupServer(...tickflowHandlers(log as never));
  server.listen({ onUnhandledRequest: 'error' });
  afterAll(() => server.close());
  const path = join(dir, 'tickflow.sqlite');
  const klineCalls = () => log.filter((r) => new URL(r.url).pathname === '/v1/klines');

  async function startVendor(): Promise<FastifyInstance> {
    const routing = { markets: { CN: ['tickflow'], HK: ['tickflow'], US: ['tickflow'] }, overrides: {} };
    const adapterOptions = { tickflow: { baseUrl: TICKFLOW_TEST_BASE, apiKey: 'k', http: { retry: { maxRetries: 0 } } } };
    const adapters = createAdapters(routing, adapterOptions, productionDeps(() => NOW));
    const { app } = await buildTestApp({
      now: () => NOW,
      adapters,
      configure: (config) => {
        Object.assign(config.routing, routing);
        config.adapters = adapterOptions;
        config.history = { ...config.history, enabled: true, sqlitePath: path };
      },
    });
    return app;
  }

  it('fetches a range once; windows inside it and a restart cost nothing; an extension fetches only the gap', async () => {
    let app = await startVendor();
    const all = await klines(app, `period=1d&adjust=none&count=100&start_time=${day('2024-05-27')}&end_time=${day('2024-06-05')}`);
    expect(all.timestamp).toHaveLength(6);
    const first = klineCalls().length;
    expect(first).toBeGreaterThan(0);
    const inside = await klines(app, `period=1d&adjust=none&count=100&start_time=${day('2024-05-29')}&end_time=${day('2024-06-03')}`);
    expect(inside.timestamp).toEqual(all.timestamp.slice(1, 5));
    expect(klineCalls()).toHaveLength(first);
    await app.close();

    app = await startVendor();
    const reopened = await klines(app, `period=1d&adjust=none&count=3&end_time=${day('2024-06-04')}`);
    expect(reopened.timestamp).toEqual(all.timestamp.slice(3));
    expect(klineCalls()).toHaveLength(first);
    await klines(app, `period=1d&adjust=none&count=100&start_time=${day('2024-05-27')}&end_time=${day('2024-06-12')}`);
    const gap = klineCalls().slice(first);
    expect(gap).toHaveLength(1);
    expect(Number(new URL(gap[0].url).searchParams.get('start_time'))).toBeGreaterThanOrEqual(day('2024-06-05'));
    await app.close();
  });
});
