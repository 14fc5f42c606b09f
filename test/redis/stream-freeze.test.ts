// Sequence numbers through a Redis that stops answering (issue 41): a redis-server of this test's
// own is frozen (SIGSTOP: its socket stays open, nothing answers) for a few ticks, then thawed,
// while an instance numbers the sim's quotes in session (tickMs 200, the production 250 ms command
// ceiling). A tick waits up to 2 s for its numbers; while Redis does not answer past that the
// instance numbers in process from the last seq it saw;
// when Redis answers again its counters go on after those numbers, not from where Redis stopped,
// and a client that resumes from before the freeze gets what the others got: the same updates
// under the same seqs, in order, none missing or repeated, no gap.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Adapter } from '../../adapters/types.ts';
import { createAdapters } from '../../src/upstream/registry.ts';
import { loadDefaultConfig } from '../../config/load.ts';
import { buildTestApp, CN_MORNING } from '../helpers/app.ts';
import { fakeAdapter } from '../helpers/fake-adapter.ts';
import { connect, STREAM_KEYS, streamKeyStore, type TestClient } from '../stream/helpers.ts';
import { connectedClient, describeRedis, startPrivateRedis, waitUntil, type PrivateRedis } from './support.ts';

const started = Date.now();
const now = () => CN_MORNING + (Date.now() - started);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SYMBOLS = ['600519.SH', '000001.SZ', '600036.SH'];

type Element = Record<string, unknown> & { symbol: string; seq: number };

function record(socket: TestClient): Map<string, Element[]> {
  const bySymbol = new Map<string, Element[]>();
  socket.ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as { op: string; data?: Element[] };
    if (frame.op !== 'quotes') return;
    for (const element of frame.data ?? []) bySymbol.set(element.symbol, [...(bySymbol.get(element.symbol) ?? []), element]);
  });
  return bySymbol;
}

describeRedis('sequence numbers through a frozen Redis', () => {
  let redis: PrivateRedis;
  const clients: Redis[] = [];
  let app: FastifyInstance;
  let base: string;
  const sockets: TestClient[] = [];

  async function subscribed(message: Record<string, unknown>): Promise<Map<string, Element[]>> {
    const socket = await connect(base, '/v1/ws/stream', STREAM_KEYS.full);
    sockets.push(socket);
    const seen = record(socket);
    socket.send({ op: 'subscribe', channel: 'quotes', symbols: SYMBOLS, ...message });
    expect(await socket.next()).toMatchObject({ op: 'subscribed', total: SYMBOLS.length });
    return seen;
  }

  beforeAll(async () => {
    redis = await startPrivateRedis();
    const config = loadDefaultConfig();
    const vendor = fakeAdapter(createAdapters(config.routing, config.adapters, () => ({ now })).get('sim') as Adapter);
    // The client's own ceiling is far above the freeze: commands sent meanwhile run when it thaws.
    const client = await connectedClient(redis.url, clients);
    ({ app } = await buildTestApp({
      now, keys: streamKeyStore(), adapters: new Map([['sim', vendor]]), redis: client, cache: false,
      configure: (c) => { c.stream.tickMs = 200; c.redis.commandTimeoutMs = 250; },
    }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    base = `ws://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  });
  afterAll(async () => {
    for (const s of sockets) s.ws.terminate();
    redis?.thaw();
    await app?.close().catch(() => undefined);
    for (const c of clients) c.disconnect();
    await redis?.kill();
  });

  it('after Redis thaws, numbers go on after those given meanwhile, and a resume from before the freeze equals what A got', async () => {
    const a = await subscribed({});
    const bSocketIndex = sockets.length;
    const b = await subscribed({});
    await sleep(1000);
    sockets[bSocketIndex].ws.terminate();
    await sockets[bSocketIndex].closed;
    const since = new Map(SYMBOLS.map((s) => [s, (b.get(s) ?? []).at(-1)?.seq ?? 0]));
    for (const seq of since.values()) expect(seq).toBeGreaterThan(0);
    const beforeFreeze = new Map(SYMBOLS.map((s) => [s, (a.get(s) ?? []).at(-1)!.seq]));

    // Longer than a tick waits for its numbers (2 s): the instance numbers some in process.
    redis.freeze();
    await sleep(3000);
    redis.thaw();
    // Redis answers again, and A gets updates numbered through it for a while.
    await waitUntil(async () => SYMBOLS.every((s) => (a.get(s) ?? []).at(-1)!.seq >= beforeFreeze.get(s)! + 12), 'A to get a dozen updates', 10_000);

    const b2 = await subscribed({ since: Object.fromEntries(since) });
    await sleep(1200);
    for (const symbol of SYMBOLS) {
      const ofA = (a.get(symbol) ?? []).slice(1); // after A's snapshot
      // A's updates: consecutive seqs, through the freeze and after it (no number given twice, none skipped).
      for (let i = 1; i < ofA.length; i++) expect(ofA[i].seq, `${symbol} on A`).toBe(ofA[i - 1].seq + 1);
      const ofB = b2.get(symbol) ?? [];
      expect(ofB.some((e) => e.gap !== undefined), `${symbol}: no gap`).toBe(false);
      expect(ofB[0]?.seq, symbol).toBe(since.get(symbol)! + 1);
      // B's updates after its since equal A's under the same seqs: the values numbered while Redis
      // was frozen (logged in process) and those after (in Redis).
      const last = Math.min(ofB.at(-1)!.seq, ofA.at(-1)!.seq);
      const span = (list: Element[]) => list.filter((e) => e.seq > since.get(symbol)! && e.seq <= last);
      expect(span(ofB).length, symbol).toBe(last - since.get(symbol)!);
      expect(span(ofB)).toEqual(span(ofA));
    }
  }, 30_000);
});
