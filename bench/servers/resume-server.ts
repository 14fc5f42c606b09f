// The server side of the stream resume benchmark, run as a child so it owns its event loop: the
// service on the sim with 500 synthetic US symbols, the clock in a New York session, the stream
// hub in manual mode. Each tick moves the clock 1 s (the default stream.tickMs); the sim is warmed
// first (its first answer for 500 symbols builds their histories, seconds of CPU).
// With RESUME_REDIS_URL set, it runs on that Redis (its database flushed): the replay log is a
// Redis Stream per symbol, as in a fleet. IPC: → {port}; ← {cmd:'tick', n} → {ticked}; ← {cmd:'exit'}.
import { Redis } from 'ioredis';
import { loadDefaultConfig } from '../../config/load.ts';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildApp } from '../../src/app.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { streamHub } from '../../src/stream/index.ts';
import { createAdapters } from '../../src/upstream/registry.ts';

export const RESUME_KEY = 'resume-bench-key';
export const RESUME_SYMBOLS = 500;

const send = (message: unknown) => process.send?.(message);

function keyStore(): KeyStore {
  const store = new KeyStore(parseKeysFile({
    plans: { bench: { markets: ['CN', 'HK', 'US'], features: ['quotes', 'depth'], rate_limit: { max: 10_000_000, window_ms: 60_000 }, max_symbols: 1000 } },
    keys: [{ id: 'bench', plan: 'bench', sha256: sha256Hex(RESUME_KEY) }],
  }));
  const plan = store.lookup(RESUME_KEY)?.plan as unknown as Record<string, unknown>;
  plan.maxSubscriptions = 1_000_000;
  plan.maxConnections = 100_000;
  return store;
}

async function main(): Promise<void> {
  const clock = { t: Date.UTC(2025, 5, 18, 13, 35) }; // 09:35 in New York, a Wednesday
  const now = () => clock.t;
  const config = loadDefaultConfig();
  config.adapters.sim = { ...config.adapters.sim, syntheticUniverse: RESUME_SYMBOLS, memoMaxBytes: 64 * 1024 * 1024 };
  config.log.level = 'warn';
  // A replay of 10 s of 500 symbols is ~0.7 MB, more than half the default 1 MiB bound at which a
  // client counts as behind and is conflated until the next tick (which this server only runs when
  // asked): 8 MiB, so that back-pressure never shortens the replay being measured.
  config.stream.sendBufferBytes = 8 * 1024 * 1024;
  const url = process.env.RESUME_REDIS_URL;
  const redis = url === undefined || url === '' ? undefined : new Redis(url, { maxRetriesPerRequest: 1 });
  if (redis !== undefined) await redis.flushdb();
  const adapters = createAdapters(config.routing, config.adapters, () => ({ now }));
  const refs = Array.from({ length: RESUME_SYMBOLS }, (_, i) => parseSymbol(`SIM${String(i + 1).padStart(4, '0')}.US`)).filter((r) => r !== undefined);
  await adapters.get('sim')?.getQuotes?.(refs);
  const app = await buildApp({ config, keys: keyStore(), adapters, now, logger: false, redis });
  await app.ready();
  const hub = streamHub(app);
  hub.manual();
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  send({ port: typeof address === 'object' && address !== null ? address.port : 0 });
  /** Tick slots far from the wall clock's (round(now / tickMs)), so none was claimed before. */
  let slot = 1_000_000_000_000;
  process.on('message', async (m: { cmd: string; n?: number }) => {
    if (m.cmd === 'tick') {
      for (let i = 0; i < (m.n ?? 1); i++) {
        clock.t += 1000;
        // A slot of its own per tick: with Redis, a fleet slot is claimed once (the wall clock's would repeat).
        slot += 1;
        await hub.tick(slot);
        while (hub.bufferedBytes() > 0) await new Promise((resolve) => setImmediate(resolve));
      }
      send({ ticked: m.n ?? 1 });
    } else if (m.cmd === 'exit') {
      await app.close();
      // The benchmark's keys go with it.
      await redis?.flushdb().catch(() => undefined);
      redis?.disconnect();
      process.exit(0);
    }
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
