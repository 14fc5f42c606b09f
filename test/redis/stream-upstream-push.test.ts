// Upstream push (issue 41.5): the TickFlow adapter on the real HTTP layer in front of a fake
// TickFlow vendor with its WebSocket push feed (test/helpers/tickflow-stream-vendor.ts), two app
// instances on real ports sharing a redis-server of this test's own, the clock in a CN session
// (a Wednesday morning in Shanghai, moving with real time), no caches:
//   - one upstream subscription per symbol across the two instances, and no polling while the
//     feed pushes; both instances' clients get every pushed value, with the vendor's timestamp
//     and the same consecutive seq;
//   - the vendor's sockets killed (and its handshakes refused): both instances say polling
//     (/readyz, /metrics), the symbols are polled and the updates go on with the next seq; the
//     vendor back: push again, once per symbol, and polling stops.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadDefaultConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { createMetrics, upstreamSink } from '../../src/metrics.ts';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { buildTestApp, CN_MORNING } from '../helpers/app.ts';
import { startStreamVendor, type StreamVendor } from '../helpers/tickflow-stream-vendor.ts';
import { connect, STREAM_KEYS, streamKeyStore, type TestClient } from '../stream/helpers.ts';
import { connectedClient, describeRedis, startPrivateRedis, type PrivateRedis } from './support.ts';

const started = Date.now();
const now = () => CN_MORNING + (Date.now() - started);
/** The vendor stamps its events by its own clock, a little behind ours: pushed values keep its stamp. */
const vendorNow = () => now() - 1234;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SYMBOLS = ['600000.SH', '000001.SZ', '600519.SH'];

type Element = { symbol: string; seq: number; last_price: number; timestamp: number; volume: number };

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describeRedis('upstream push from TickFlow across two instances', () => {
  let redis: PrivateRedis;
  let vendor: StreamVendor;
  const clients: Redis[] = [];
  const apps: FastifyInstance[] = [];
  const sockets: TestClient[] = [];
  const seen: Map<string, Element[]>[] = [];

  async function instance(): Promise<{ app: FastifyInstance; base: string }> {
    const client = await connectedClient(redis.url, clients);
    const configure = (c: Config) => {
      c.routing.markets.CN = ['tickflow'];
      c.adapters.tickflow = { baseUrl: vendor.base, apiKey: vendor.apiKey, pushReconnectMs: 200, http: { retry: { maxRetries: 0 } } };
      c.redis.instances = 2;
      c.stream.tickMs = 200;
      c.stream.fleetLeaseMs = 1000;
    };
    const config = loadDefaultConfig();
    configure(config);
    const metrics = createMetrics();
    const deps = productionDeps(now, upstreamSink(metrics), undefined, { redis: client, registry: metrics.registry, processes: 2 });
    const adapters = createAdapters(config.routing, config.adapters, deps);
    const { app } = await buildTestApp({ now, keys: streamKeyStore(), adapters, metrics, upstreamClients: deps.clients, redis: client, cache: false, configure });
    apps.push(app);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    return { app, base: `ws://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}` };
  }

  async function subscriber(base: string): Promise<Map<string, Element[]>> {
    const socket = await connect(base, '/v1/ws/stream', STREAM_KEYS.full);
    sockets.push(socket);
    const bySymbol = new Map<string, Element[]>();
    socket.ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { op: string; data?: Element[] };
      if (frame.op !== 'quotes') return;
      for (const e of frame.data ?? []) bySymbol.set(e.symbol, [...(bySymbol.get(e.symbol) ?? []), e]);
    });
    socket.send({ op: 'subscribe', channel: 'quotes', symbols: SYMBOLS });
    await until(() => SYMBOLS.every((s) => bySymbol.has(s)), 'the snapshot');
    return bySymbol;
  }

  const readyz = async (app: FastifyInstance) => (await app.inject({ url: '/readyz' })).json() as {
    stream?: { upstream: Record<string, { mode: string; reason?: string; symbols: { quotes: number } }> };
    degraded?: { name: string; problem: string }[];
  };
  const modeOf = async (app: FastifyInstance) => (await readyz(app)).stream?.upstream.tickflow?.mode;
  const metric = async (app: FastifyInstance, pattern: RegExp) => Number(((await app.inject({ url: '/metrics' })).body.match(pattern) ?? [])[1] ?? Number.NaN);
  /** Every symbol on exactly one vendor socket. */
  const oncePerSymbol = () => {
    const holders = vendor.holders();
    return SYMBOLS.every((s) => holders.get(s) === 1);
  };
  /** Both clients have the vendor's current value of every symbol. */
  const current = () => seen.every((bySymbol) => SYMBOLS.every((s) => bySymbol.get(s)?.at(-1)?.last_price === vendor.quotes.get(s)?.last_price));

  beforeAll(async () => {
    redis = await startPrivateRedis();
    vendor = await startStreamVendor(vendorNow);
    await instance();
    await instance();
  });
  afterAll(async () => {
    for (const s of sockets) s.ws.terminate();
    for (const app of apps) await app.close().catch(() => undefined);
    for (const c of clients) c.disconnect();
    await vendor?.close();
    await redis?.kill();
  });

  it('one upstream subscription per symbol across two instances; pushed values with the vendor timestamp reach both, and nothing is polled', async () => {
    const [one, two] = apps;
    const bases = apps.map((app) => {
      const address = app.server.address();
      return `ws://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
    });
    seen.push(await subscriber(bases[0]), await subscriber(bases[1]));
    await until(async () => oncePerSymbol() && (await modeOf(one)) === 'push' && (await modeOf(two)) === 'push', 'push on both instances');
    await sleep(1000); // five more ticks: the leases hold, nobody subscribes again
    expect(oncePerSymbol()).toBe(true);
    for (const symbol of SYMBOLS) {
      expect(vendor.subscribes.filter((r) => r.op === 'subscribe' && r.symbols.includes(symbol)), symbol).toHaveLength(1);
    }
    // Each instance holds a connection; the symbols are held once between them.
    expect(vendor.open).toBe(2);
    const held = [await metric(one, /mdqs_stream_upstream_symbols\{adapter="tickflow",channel="quotes"\} (\d+)/), await metric(two, /mdqs_stream_upstream_symbols\{adapter="tickflow",channel="quotes"\} (\d+)/)];
    expect(held[0] + held[1]).toBe(SYMBOLS.length);
    expect(await metric(one, /mdqs_stream_upstream_mode\{adapter="tickflow",mode="push"\} (\d+)/)).toBe(1);

    const polled = vendor.quoteRequests.length;
    for (let i = 0; i < 5; i++) {
      vendor.move();
      await until(current, `push ${i + 1} on both instances`, 3000);
    }
    await sleep(600);
    // Pushed, not polled: no quotes request reached the vendor meanwhile.
    expect(vendor.quoteRequests.length).toBe(polled);
    for (const symbol of SYMBOLS) {
      const [a, b] = seen.map((bySymbol) => (bySymbol.get(symbol) ?? []).slice(-5));
      // The vendor's event time, not ours.
      expect(a.at(-1)?.timestamp).toBe(vendor.quotes.get(symbol)?.timestamp);
      expect(a.at(-1)!.timestamp).toBeLessThan(now() - 1000);
      expect(a.map((e) => e.seq), symbol).toEqual(b.map((e) => e.seq));
      for (let i = 1; i < a.length; i++) expect(a[i].seq).toBe(a[i - 1].seq + 1);
      expect(a).toEqual(b);
    }
  }, 30_000);

  it("killing the vendor's sockets falls back to polling, and back to push once it is back", async () => {
    const [one, two] = apps;
    const seqBefore = seen.map((bySymbol) => new Map(SYMBOLS.map((s) => [s, bySymbol.get(s)!.at(-1)!.seq])));
    vendor.refuse = true;
    vendor.kill();
    await until(async () => (await modeOf(one)) === 'polling' && (await modeOf(two)) === 'polling', 'polling on both instances', 5000);
    const body = await readyz(one);
    expect(body.stream?.upstream.tickflow.reason).toMatch(/lost|failed|refused/);
    expect(body.degraded?.some((d) => d.name === 'stream' && /push feed down/.test(d.problem))).toBe(true);
    expect(await metric(two, /mdqs_stream_upstream_mode\{adapter="tickflow",mode="polling"\} (\d+)/)).toBe(1);

    const polledFrom = vendor.quoteRequests.length;
    vendor.move();
    await until(current, 'the polled value on both instances', 5000);
    vendor.move();
    await until(current, 'the next polled value on both instances', 5000);
    // Polled: the vendor saw quotes requests for the symbols again.
    const polled = vendor.quoteRequests.slice(polledFrom).flatMap((r) => r.symbols);
    for (const symbol of SYMBOLS) expect(polled, symbol).toContain(symbol);

    vendor.refuse = false;
    await until(async () => (await modeOf(one)) === 'push' && (await modeOf(two)) === 'push' && oncePerSymbol(), 'push again', 15_000);
    await sleep(600);
    expect(oncePerSymbol()).toBe(true);
    const quiet = vendor.quoteRequests.length;
    for (let i = 0; i < 3; i++) {
      vendor.move();
      await until(current, `push ${i + 1} after the outage`, 3000);
    }
    await sleep(600);
    expect(vendor.quoteRequests.length).toBe(quiet);
    expect((await readyz(one)).degraded?.some((d) => d.name === 'stream')).not.toBe(true);

    // Through push, polling and push again: consecutive seqs, the same on both instances.
    for (const symbol of SYMBOLS) {
      const [a, b] = seen.map((bySymbol, i) => (bySymbol.get(symbol) ?? []).filter((e) => e.seq > seqBefore[i].get(symbol)!));
      expect(a.length, symbol).toBeGreaterThanOrEqual(5);
      for (let i = 1; i < a.length; i++) expect(a[i].seq, symbol).toBe(a[i - 1].seq + 1);
      expect(a[0].seq).toBe(seqBefore[0].get(symbol)! + 1);
      expect(a).toEqual(b);
    }
  }, 40_000);
});
