// The stream across real server processes (`node src/server.ts`, as `npm start` runs it), three
// instances on a redis-server of this test's own, the service's clock in a CN session
// (MDQS_CLOCK_START: Wednesday 2026-11-25 10:30 Asia/Shanghai, running at real speed), the sim
// behind them and the default stream settings (1 s ticks, the 4.5 s fleet lease):
//   - client B is away 10 s, then resumes on another instance with its last seq per symbol: its
//     updates, before and after, equal those of client A who stayed, in order, none missing or
//     repeated;
//   - an instance holding 50 clients at their key's max_connections (50) is SIGKILLed: each client
//     reconnects as the official client does (3 s, then again) to the other instances, all 50 are
//     back within two tries (the lease, 4.5 s, is shorter than the second try), and a 51st is
//     refused with 429.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sha256Hex } from '../../src/access/keys.ts';
import { DEFAULT_FLEET_LEASE_MS } from '../../src/stream/fleet.ts';
import { connect, refused, type TestClient } from '../stream/helpers.ts';
import { startServer, type ServerProcess } from '../e2e/server-process.ts';
import { fleetDir, writeKeysFile } from './processes.ts';
import { describeRedis, startPrivateRedis, type PrivateRedis } from './support.ts';

const SESSION = '2026-11-25T10:30:00+08:00';
const SYMBOLS = ['600519.SH', '000001.SZ', '600036.SH'];
const CAP = 50;
const RECONNECT_MS = 3000;
const KEYS = { full: 'process-stream-full', capped: 'process-stream-capped' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Element = Record<string, unknown> & { symbol: string; seq: number };

/** Every quotes element a socket receives, per symbol in order. */
function record(socket: TestClient): Map<string, Element[]> {
  const bySymbol = new Map<string, Element[]>();
  socket.ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as { op: string; data?: Element[] };
    if (frame.op !== 'quotes') return;
    for (const element of frame.data ?? []) bySymbol.set(element.symbol, [...(bySymbol.get(element.symbol) ?? []), element]);
  });
  return bySymbol;
}

describeRedis('the stream across real server processes', () => {
  const { dir, keysFile } = fleetDir('mdqs-stream-processes-');
  let redis: PrivateRedis;
  const servers: ServerProcess[] = [];
  const sockets: TestClient[] = [];
  const ws = (i: number) => servers[i].base.replace(/^http/, 'ws');

  beforeAll(async () => {
    writeKeysFile(keysFile, {
      full: { markets: ['CN', 'HK', 'US'], features: ['quotes', 'depth'], rate_limit: { max: 10_000, window_ms: 60_000 }, max_symbols: 10, max_connections: 100 },
      capped: { markets: ['CN', 'HK', 'US'], features: ['quotes', 'depth'], rate_limit: { max: 10_000, window_ms: 60_000 }, max_symbols: 10, max_connections: CAP },
    }, [
      { id: 'full', plan: 'full', sha256: sha256Hex(KEYS.full) },
      { id: 'capped', plan: 'capped', sha256: sha256Hex(KEYS.capped) },
    ]);
    redis = await startPrivateRedis();
    // One after the other: three booting at once on a busy machine can outlast the boot guard.
    for (let i = 0; i < 3; i++) {
      servers.push(await startServer({
        REDIS_URL: redis.url, KEYS_FILE: keysFile, MDQS__history__enabled: 'false', MDQS__redis__commandTimeoutMs: '2000',
        MDQS__redis__instances: '3', MDQS__server__pidFile: join(dir, `mdqs-${i}.pid`), MDQS_CLOCK_START: SESSION,
      }));
    }
  }, 90_000);
  afterAll(async () => {
    for (const s of sockets) s.ws.terminate();
    await Promise.all(servers.map((s) => s.stop()));
    await redis?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  async function subscribed(i: number, message: Record<string, unknown> = {}): Promise<{ socket: TestClient; seen: Map<string, Element[]> }> {
    const socket = await connect(ws(i), '/v1/ws/stream', KEYS.full);
    sockets.push(socket);
    const seen = record(socket);
    socket.send({ op: 'subscribe', channel: 'quotes', symbols: SYMBOLS, ...message });
    const until = Date.now() + 10_000;
    while (!SYMBOLS.every((s) => seen.has(s)) && Date.now() < until) await sleep(50);
    return { socket, seen };
  }

  it('B away 10 s resumes on another instance: the same updates as A, in order, none missing or repeated', async () => {
    const { seen: a } = await subscribed(0);
    const b = await subscribed(1);
    await sleep(4000);
    b.socket.ws.terminate();
    await b.socket.closed;
    const since = new Map(SYMBOLS.map((s) => [s, b.seen.get(s)!.at(-1)!.seq]));
    await sleep(10_000);
    const b2 = await subscribed(2, { since: Object.fromEntries(since) });
    await sleep(3000);
    let missed = 0;
    for (const symbol of SYMBOLS) {
      const ofA = a.get(symbol)!.slice(1); // after A's snapshot
      missed += ofA.filter((e) => e.seq > since.get(symbol)!).length;
      for (let i = 1; i < ofA.length; i++) expect(ofA[i].seq, `${symbol} on A`).toBe(ofA[i - 1].seq + 1);
      const after = b2.seen.get(symbol)!;
      // What B missed first, not a snapshot of now; never a gap.
      expect(after[0].seq, symbol).toBe(since.get(symbol)! + 1);
      const ofB = [...b.seen.get(symbol)!.slice(1), ...after];
      expect(ofB.some((e) => e.gap !== undefined)).toBe(false);
      const first = ofB[0].seq;
      const last = Math.min(ofB.at(-1)!.seq, ofA.at(-1)!.seq);
      const span = (list: Element[]) => list.filter((e) => e.seq >= first && e.seq <= last);
      expect(span(ofB).length, symbol).toBe(last - first + 1);
      expect(span(ofB)).toEqual(span(ofA));
    }
    // B really missed updates (the sim's quotes change every few seconds through the 2 s cache).
    expect(missed).toBeGreaterThanOrEqual(SYMBOLS.length * 2);
    for (const s of sockets.splice(0)) s.ws.terminate();
  }, 60_000);

  it(`SIGKILL of an instance holding ${CAP} clients at max_connections: all back on the others within two 3 s tries; a ${CAP + 1}st is refused`, async () => {
    const held: TestClient[] = [];
    for (let i = 0; i < CAP; i++) held.push(await connect(ws(0), '/v1/ws/stream', KEYS.capped));
    expect((await refused(`${ws(1)}/v1/ws/stream?api_key=${KEYS.capped}`)).status).toBe(429);
    // A fleet heartbeat renews the entries: their whole lease lies ahead at the kill.
    await sleep(DEFAULT_FLEET_LEASE_MS / 3 + 300);
    const dropped = Promise.all(held.map((c) => c.closed));
    const killedAt = performance.now();
    servers[0].proc.kill('SIGKILL');
    expect((await servers[0].exited).signal).toBe('SIGKILL');
    await dropped;

    const tries: number[] = [];
    await Promise.all(Array.from({ length: CAP }, async (_, i) => {
      for (let attempt = 1; attempt <= 2; attempt++) {
        await sleep(RECONNECT_MS);
        try {
          sockets.push(await connect(ws(1 + (i % 2)), '/v1/ws/stream', KEYS.capped));
          tries.push(attempt);
          return;
        } catch {
          // Refused (429): the official client tries again after 3 s.
        }
      }
    }));
    const took = performance.now() - killedAt;
    console.log(`FIGURE SIGKILL: ${tries.length}/${CAP} clients back within ${Math.round(took)} ms; first try ${tries.filter((t) => t === 1).length}, second ${tries.filter((t) => t === 2).length} (lease ${DEFAULT_FLEET_LEASE_MS} ms)`);
    expect(tries.length).toBe(CAP);
    expect((await refused(`${ws(2)}/v1/ws/stream?api_key=${KEYS.capped}`)).status).toBe(429);
  }, 60_000);
});
