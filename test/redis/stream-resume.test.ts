// Sequence numbers and resume across a fleet (issue 41), on a redis-server of this test's own,
// app instances on real ports and the sim in session (a Wednesday morning in Shanghai, the
// injected clock moving with real time, no caches so each tick reads new prices):
//   - every update carries `seq`, consecutive per channel and symbol, the same on every instance;
//   - client A stays on instance 1; client B on instance 2 disconnects, then resubscribes on
//     instance 1 with its last seq: B's updates equal A's, in order, none missing or repeated;
//   - beyond the replay log (an instance reading a 1 s log): the current value marked gap with
//     the missed range, then live updates from the next seq on.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Adapter } from '../../adapters/types.ts';
import { createAdapters } from '../../src/upstream/registry.ts';
import { loadDefaultConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { buildTestApp, CN_MORNING } from '../helpers/app.ts';
import { fakeAdapter } from '../helpers/fake-adapter.ts';
import { connect, STREAM_KEYS, streamKeyStore, type TestClient } from '../stream/helpers.ts';
import { connectedClient, describeRedis, startPrivateRedis, type PrivateRedis } from './support.ts';

const started = Date.now();
const now = () => CN_MORNING + (Date.now() - started);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SYMBOLS = ['600519.SH', '000001.SZ', '600036.SH'];

type Element = Record<string, unknown> & { symbol: string; seq: number };
type Frame = { op: string; data?: Element[] };

/** Every quotes element a socket receives after its subscribe's ack, per symbol in order. */
function record(socket: TestClient): Map<string, Element[]> {
  const bySymbol = new Map<string, Element[]>();
  socket.ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as Frame;
    if (frame.op !== 'quotes') return;
    for (const element of frame.data ?? []) {
      const list = bySymbol.get(element.symbol) ?? [];
      list.push(element);
      bySymbol.set(element.symbol, list);
    }
  });
  return bySymbol;
}

describeRedis('sequence numbers and resume across two instances on one Redis', () => {
  let redis: PrivateRedis;
  const clients: Redis[] = [];
  const apps: FastifyInstance[] = [];
  const sockets: TestClient[] = [];
  const bases: string[] = [];

  async function instance(configure: (c: Config) => void): Promise<string> {
    const config = loadDefaultConfig();
    const vendor = fakeAdapter(createAdapters(config.routing, config.adapters, () => ({ now })).get('sim') as Adapter);
    const client = await connectedClient(redis.url, clients);
    const { app } = await buildTestApp({
      now, keys: streamKeyStore(), adapters: new Map([['sim', vendor]]), redis: client, cache: false,
      configure: (c) => { c.redis.instances = 3; c.stream.tickMs = 200; configure(c); },
    });
    apps.push(app);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    return `ws://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  }

  async function subscribed(base: string, message: Record<string, unknown>): Promise<{ socket: TestClient; seen: Map<string, Element[]> }> {
    const socket = await connect(base, '/v1/ws/stream', STREAM_KEYS.full);
    sockets.push(socket);
    // Recorded from the start: frames that follow the ack can arrive in the same read.
    const seen = record(socket);
    socket.send({ op: 'subscribe', channel: 'quotes', symbols: SYMBOLS, ...message });
    expect(await socket.next()).toMatchObject({ op: 'subscribed', total: SYMBOLS.length });
    return { socket, seen };
  }

  beforeAll(async () => {
    redis = await startPrivateRedis();
    bases.push(await instance(() => undefined));
    bases.push(await instance(() => undefined));
    // Reads a log of 1 s: a resume from further back is beyond it.
    bases.push(await instance((c) => { c.stream.replay = { maxLength: 600, maxAgeMs: 1000 }; }));
  });
  afterAll(async () => {
    for (const s of sockets) s.ws.terminate();
    for (const app of apps) await app.close().catch(() => undefined);
    for (const c of clients) c.disconnect();
    await redis?.kill();
  });

  let a: Map<string, Element[]>;
  let bBefore: Map<string, Element[]>;
  const lastSeqOfB = new Map<string, number>();

  it('B disconnects from instance 2 and resumes on instance 1 with its last seq: the same updates as A, in order, none missing or repeated', async () => {
    ({ seen: a } = await subscribed(bases[0], {}));
    const b = await subscribed(bases[1], {});
    bBefore = b.seen;
    await sleep(1500);
    b.socket.ws.terminate();
    await b.socket.closed;
    for (const symbol of SYMBOLS) {
      const list = bBefore.get(symbol) ?? [];
      // B got its snapshot and some updates (seq > 0) before it went.
      expect(list.length).toBeGreaterThan(2);
      lastSeqOfB.set(symbol, list.at(-1)!.seq);
    }
    await sleep(2500); // away for a dozen ticks
    const since = Object.fromEntries(lastSeqOfB);
    const b2 = await subscribed(bases[0], { since });
    await sleep(1500);
    const bAfter = b2.seen;

    for (const symbol of SYMBOLS) {
      const ofA = (a.get(symbol) ?? []).slice(1); // after A's snapshot
      // A's updates: consecutive seqs.
      for (let i = 1; i < ofA.length; i++) expect(ofA[i].seq, `${symbol} on A`).toBe(ofA[i - 1].seq + 1);
      const ofB = [...(bBefore.get(symbol) ?? []).slice(1), ...(bAfter.get(symbol) ?? [])];
      // The resume sent what B missed while away, not a snapshot of now.
      expect(bAfter.get(symbol)?.[0]?.seq, symbol).toBe(lastSeqOfB.get(symbol)! + 1);
      expect(ofB.some((e) => e.gap !== undefined)).toBe(false);
      // B's updates equal A's over the same span: the same elements, the same seqs, in order.
      const first = ofB[0].seq;
      const last = Math.min(ofB.at(-1)!.seq, ofA.at(-1)!.seq);
      const span = (list: Element[]) => list.filter((e) => e.seq >= first && e.seq <= last);
      expect(span(ofB).length, symbol).toBe(last - first + 1);
      expect(span(ofB)).toEqual(span(ofA));
    }
    const metrics = await apps[0].inject({ url: '/metrics' });
    expect(metrics.body).toMatch(/mdqs_stream_resumes_total\{outcome="replayed"\} 1/);
    // The replay log's cost in Redis (docs/streaming.md states it per symbol).
    const key = 'mdqs:v2:ws:log:{quotes:600519.SH}';
    const length = await clients[0].xlen(key);
    const bytes = Number(await clients[0].call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    expect(length).toBeGreaterThan(10);
    console.log(`FIGURE replay log: ${length} quotes updates of one symbol in ${bytes} bytes of Redis (${Math.round(bytes / length)} B an update)`);
  }, 20_000);

  it('beyond the replay log: the current value marked gap with the missed range, then live from the next seq', async () => {
    // B's last seqs are ~4 s old; instance 3 keeps 1 s.
    const since = Object.fromEntries(lastSeqOfB);
    const b3 = await subscribed(bases[2], { since });
    await sleep(1200);
    for (const symbol of SYMBOLS) {
      const list = b3.seen.get(symbol) ?? [];
      const [gap, ...live] = list;
      expect(gap, symbol).toMatchObject({ symbol, gap: true, gap_from: lastSeqOfB.get(symbol)! + 1 });
      expect(gap.gap_to).toBe(gap.seq);
      expect(gap.seq).toBeGreaterThan(lastSeqOfB.get(symbol)! + 5);
      // The gapped element is the symbol's current value: a whole quote, A's fields and the gap's.
      const fieldsOfA = Object.keys(a.get(symbol)?.[0] ?? {}).sort();
      expect(Object.keys(gap).filter((k) => !k.startsWith('gap')).sort()).toEqual(fieldsOfA);
      expect(live.length).toBeGreaterThan(0);
      live.forEach((e, i) => expect(e.seq).toBe(gap.seq + 1 + i));
    }
    const metrics = await apps[2].inject({ url: '/metrics' });
    expect(metrics.body).toMatch(/mdqs_stream_resumes_total\{outcome="gap"\} 1/);
  }, 20_000);
});
