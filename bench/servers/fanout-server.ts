// One side of the fan-out benchmark, run as a child so it owns its event loop and CPU account.
//   node bench/servers/fanout-server.ts app    the service: sim with 200 synthetic US symbols, the stream hub
//                                      ticked back to back with the sim clock +60 s per tick, so
//                                      every symbol changes on every tick
//   node bench/servers/fanout-server.ts app-unsequenced   the same with stream.sequence off (no
//                                      `seq`, no replay log)
//   node bench/servers/fanout-server.ts bare   a bare `ws` server broadcasting one pre-serialised frame
//                                      (captured from the service) to every client per tick
// Both wait for every socket's send buffer to drain before the next tick (so neither queues
// without bound). IPC: → {port}; ← {cmd:'start', frame?}; ← {cmd:'stop'} → {sent, ticks, cpuMs, ms}.
// With FANOUT_REDIS_URL set, the service runs on that Redis (the replay log a Redis Stream per symbol).
import { Redis } from 'ioredis';
import { WebSocketServer, type WebSocket } from 'ws';
import { createAdapters } from '../../src/upstream/registry.ts';
import { loadDefaultConfig } from '../../config/load.ts';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildApp } from '../../src/app.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { streamHub } from '../../src/stream/index.ts';

export const FANOUT_KEY = 'fanout-bench-key';
export const SYMBOLS = 200;

const mode = process.argv[2];
const send = (message: unknown) => process.send?.(message);

async function drained(buffered: () => number): Promise<void> {
  while (buffered() > 0) await new Promise((resolve) => setImmediate(resolve));
}

function bufferedOf(clients: Set<WebSocket>): () => number {
  return () => {
    let total = 0;
    for (const c of clients) total += c.bufferedAmount;
    return total;
  };
}

function keyStore(): KeyStore {
  const store = new KeyStore(parseKeysFile({
    plans: { bench: { markets: ['CN', 'HK', 'US'], features: ['quotes', 'depth'], rate_limit: { max: 10_000_000, window_ms: 60_000 }, max_symbols: 1000 } },
    keys: [{ id: 'bench', plan: 'bench', sha256: sha256Hex(FANOUT_KEY) }],
  }));
  const plan = store.lookup(FANOUT_KEY)?.plan as unknown as Record<string, unknown>;
  plan.maxSubscriptions = 1_000_000;
  plan.maxConnections = 100_000;
  return store;
}

/** Tick slots far from the wall clock's (round(now / tickMs)), so none was claimed before. */
const SLOT_BASE = 1_000_000_000_000;

let running = false;
let sent = 0;
let ticks = 0;

async function main(): Promise<void> {
  if (mode === 'app' || mode === 'app-unsequenced') {
    const clock = { t: Date.UTC(2025, 5, 18, 13, 35) }; // 09:35 in New York, a Wednesday
    const now = () => clock.t;
    const config = loadDefaultConfig();
    config.adapters.sim = { ...config.adapters.sim, syntheticUniverse: SYMBOLS };
    config.log.level = 'warn';
    config.stream.sequence = mode === 'app';
    const url = process.env.FANOUT_REDIS_URL;
    const redis = url === undefined || url === '' ? undefined : new Redis(url, { maxRetriesPerRequest: 1 });
    if (redis !== undefined) await redis.flushdb();
    const adapters = createAdapters(config.routing, config.adapters, () => ({ now }));
    // Warmed before the clients come: the sim's first answer builds every symbol's history.
    const refs = Array.from({ length: SYMBOLS }, (_, i) => parseSymbol(`SIM${String(i + 1).padStart(4, '0')}.US`)).filter((r) => r !== undefined);
    await adapters.get('sim')?.getQuotes?.(refs);
    const app = await buildApp({ config, keys: keyStore(), adapters, now, logger: false, redis });
    await app.ready();
    const hub = streamHub(app);
    hub.manual();
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    send({ port: typeof address === 'object' && address !== null ? address.port : 0 });
    process.on('message', async (m: { cmd: string }) => {
      if (m.cmd === 'start') {
        running = true;
        const cpu = process.cpuUsage();
        const started = performance.now();
        const sentBefore = await sentTotal(app);
        while (running) {
          clock.t += 60_000;
          // A slot of its own per tick: with Redis, a fleet slot is claimed once (the wall clock's would repeat).
          await hub.tick(SLOT_BASE + ticks);
          ticks += 1;
          await drained(() => hub.bufferedBytes());
          await new Promise((resolve) => setImmediate(resolve));
        }
        sent = (await sentTotal(app)) - sentBefore;
        const used = process.cpuUsage(cpu);
        send({ sent, ticks, cpuMs: (used.user + used.system) / 1000, ms: performance.now() - started });
      } else if (m.cmd === 'stop') {
        running = false;
      } else if (m.cmd === 'exit') {
        await app.close();
        redis?.disconnect();
        process.exit(0);
      }
    });
  } else {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
    await new Promise((resolve) => wss.once('listening', resolve));
    send({ port: (wss.address() as { port: number }).port });
    process.on('message', async (m: { cmd: string; frame?: string }) => {
      if (m.cmd === 'start') {
        const frame = Buffer.from(m.frame ?? '{}');
        running = true;
        const cpu = process.cpuUsage();
        const started = performance.now();
        while (running) {
          for (const c of wss.clients) c.send(frame, { binary: false });
          sent += wss.clients.size;
          ticks += 1;
          await drained(bufferedOf(wss.clients));
          // Yield to the event loop between ticks, as the service loop does.
          await new Promise((resolve) => setImmediate(resolve));
        }
        const used = process.cpuUsage(cpu);
        send({ sent, ticks, cpuMs: (used.user + used.system) / 1000, ms: performance.now() - started });
      } else if (m.cmd === 'stop') {
        running = false;
      } else if (m.cmd === 'exit') {
        for (const c of wss.clients) c.terminate();
        wss.close(() => process.exit(0));
      }
    });
  }
}

async function sentTotal(app: { inject(o: { url: string }): Promise<{ body: string }> }): Promise<number> {
  const text = (await app.inject({ url: '/metrics' })).body;
  return text.split('\n').filter((l) => l.startsWith('mdqs_ws_messages_sent_total{')).reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
