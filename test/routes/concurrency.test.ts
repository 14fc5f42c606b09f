// Single-flight and batching through the routes (docs/architecture.md#single-flight-and-batching): N concurrent identical requests
// make one upstream call, overlapping batches share in-flight symbols, misses are grouped into the
// adapter's native batch size, and a client that disconnects does not cancel the shared fetch.
// The adapter is held at a gate until every request is provably waiting, so no timing is assumed.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { buildCountingApp, getWithKey, metricValue, simSymbols } from '../helpers/cache-app.ts';
import { KEYS } from '../helpers/app.ts';

const apps: FastifyInstance[] = [];
/** Generous: under a loaded CI box 200 injected requests can take a while to all be waiting. */
const WAIT = { timeout: 15_000, interval: 10 };
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

async function setup(options: Parameters<typeof buildCountingApp>[0] = {}) {
  const built = await buildCountingApp(options);
  apps.push(built.app);
  return { ...built, get: (url: string) => getWithKey(built.app, url) };
}

/** Requests that looked up the response cache for `resource` and missed (each then joins or starts a build). */
const responseMisses = (app: FastifyInstance, resource: string) =>
  metricValue(app, 'mdqs_cache_lookups_total', { layer: 'response', resource, result: 'miss' });

describe('single-flight', () => {
  it('200 concurrent identical requests on a cold cache make exactly one upstream call', async () => {
    const { app, adapter, get } = await setup();
    adapter.hold();
    const pending = Array.from({ length: 200 }, () => get('/v1/quotes?symbols=600519.SH'));
    await vi.waitFor(async () => expect(await responseMisses(app, 'quotes')).toBe(200), WAIT);
    adapter.release();
    const responses = await Promise.all(pending);
    expect(responses.map((r) => r.statusCode)).toEqual(Array(200).fill(200));
    expect(new Set(responses.map((r) => r.body)).size).toBe(1);
    expect(responses[0].json().data.map((q: { symbol: string }) => q.symbol)).toEqual(['600519.SH']);
    expect(adapter.count()).toBe(1);
    expect(adapter.log.map((c) => c.symbols)).toEqual([['600519.SH']]);
  });

  it('different windows over the same candles share one fetch', async () => {
    const { app, adapter, get } = await setup();
    adapter.hold();
    const counts = Array.from({ length: 50 }, (_, i) => i + 1);
    const pending = counts.map((n) => get(`/v1/klines?symbol=600519.SH&period=1d&count=${n}&adjust=none`));
    await vi.waitFor(async () => expect(await responseMisses(app, 'candles')).toBe(50), WAIT);
    adapter.release();
    const responses = await Promise.all(pending);
    expect(responses.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
    expect(responses.map((r) => r.json().data.timestamp.length)).toEqual(counts);
    expect(adapter.calls.getCandles).toBe(1);
    // Issue 8: one single-flight for every resource, so waiters are labelled with the real resource.
    const waiters = await metricValue(app, 'mdqs_singleflight_waiters_total', { resource: 'candles' });
    expect(waiters).toBe(49);
  });
});

describe('batching', () => {
  it('a cold 100-symbol batch with maxBatch 50 makes two calls of 50', async () => {
    const { adapter, get } = await setup({ fake: { caps: { maxBatch: 50 } } });
    const symbols = simSymbols('CN').slice(0, 100);
    const res = await get(`/v1/quotes?symbols=${symbols.join(',')}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toHaveLength(100);
    expect(adapter.calls.getQuotes).toBe(2);
    expect(adapter.log.map((c) => c.symbols.length)).toEqual([50, 50]);
    expect(adapter.symbolsOf('getQuotes').sort()).toEqual([...symbols].sort());
  });

  it('overlapping concurrent batches (1–60 and 40–100) fetch each symbol exactly once', async () => {
    const { adapter, get } = await setup({ fake: { caps: { maxBatch: 50 } } });
    const symbols = simSymbols('CN').slice(0, 100);
    const first = symbols.slice(0, 60);
    const second = symbols.slice(39, 100);
    adapter.hold();
    const pending = [get(`/v1/quotes?symbols=${first.join(',')}`), get(`/v1/quotes?symbols=${second.join(',')}`)];
    // Both requests have issued their loads once every symbol has been asked for.
    await vi.waitFor(() => expect(new Set(adapter.symbolsOf('getQuotes')).size).toBe(100), WAIT);
    adapter.release();
    const [a, b] = await Promise.all(pending);
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(200);
    expect(a.json().data.map((q: { symbol: string }) => q.symbol)).toEqual(first);
    expect(b.json().data.map((q: { symbol: string }) => q.symbol)).toEqual(second);
    const asked = adapter.symbolsOf('getQuotes');
    expect(asked).toHaveLength(100);
    expect([...asked].sort()).toEqual([...symbols].sort());
    for (const call of adapter.log) expect(call.symbols.length).toBeLessThanOrEqual(50);
    // 60 → 50 + 10; the other's 21 shared symbols join, its 40 new ones are one call.
    expect(adapter.calls.getQuotes).toBe(3);
  });
});

describe('a disconnecting client', () => {
  it('does not cancel the shared fetch: the waiting request gets 200 from one call whose signal never aborted', async () => {
    const { app, adapter } = await setup();
    const serverSockets: Socket[] = [];
    app.server.on('connection', (socket: Socket) => serverSockets.push(socket));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const path = '/v1/quotes?symbols=601318.SH';
    const agent = new http.Agent({ keepAlive: false });
    const request = () => http.get({ host: '127.0.0.1', port, path, agent, headers: { 'x-api-key': KEYS.demo } });

    adapter.hold();
    const leaving = request();
    leaving.on('error', () => undefined);
    await vi.waitFor(() => expect(adapter.calls.getQuotes).toBe(1), WAIT);

    const staying = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request();
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => { body += chunk; });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
    });
    await vi.waitFor(async () => expect(await responseMisses(app, 'quotes')).toBe(2), WAIT);

    // The first client hangs up; wait until the server has seen its socket close.
    const firstServerSocket = serverSockets[0];
    const closed = new Promise<void>((resolve) => firstServerSocket.once('close', () => resolve()));
    leaving.destroy();
    await closed;

    adapter.release();
    const result = await staying;
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body).data.map((q: { symbol: string }) => q.symbol)).toEqual(['601318.SH']);
    expect(adapter.calls.getQuotes).toBe(1);
    const signal = adapter.log[0].signal;
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal?.aborted).toBe(false);
    agent.destroy();
  });
});
