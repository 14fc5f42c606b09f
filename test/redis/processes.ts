// Gateway instances as real processes (`node src/server.ts`) sharing a private Redis of their own
// (support.ts), for the tests of what happens between instances: a temp directory with the keys
// file, the instances' environment, and one stop for everything.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { stringify } from 'yaml';
import { sha256Hex } from '../../src/access/keys.ts';
import { startServer, type ServerProcess } from '../e2e/server-process.ts';
import { connectedClient, startPrivateRedis, type PrivateRedis } from './support.ts';

/** A fresh temp directory for a fleet's files, and the path of its keys file. */
export function fleetDir(prefix: string): { dir: string; keysFile: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, keysFile: join(dir, 'keys.yaml') };
}

export function writeKeysFile(keysFile: string, plans: object, keys: object[]): void {
  writeFileSync(keysFile, stringify({ plans, keys }));
}

/** One plan, every market with `features` and room enough for a test, and the one key `secret` (id `id`) on it. */
export function writeOneKey(keysFile: string, id: string, secret: string, features: string[]): void {
  writeKeysFile(keysFile,
    { p: { markets: ['CN', 'HK', 'US'], features, rate_limit: { max: 10_000, window_ms: 60_000 }, max_symbols: 10 } },
    [{ id, plan: 'p', sha256: sha256Hex(secret) }]);
}

export interface Fleet {
  redis: PrivateRedis;
  servers: ServerProcess[];
  /** A fail-fast client of the fleet's Redis, for the test to look at or damage what the instances keep there. */
  admin: Redis;
  /** Stops every instance, then the Redis. */
  stop(): Promise<void>;
}

/**
 * A private Redis and `instances` gateway processes on it (history off, a 2 s Redis command
 * timeout for a loaded machine, redis.instances set, a pid file each in `dir`); `env` adds to or
 * overrides their environment. If one fails to start, what did start is stopped.
 */
export async function startFleet(instances: number, options: { dir: string; keysFile: string; env?: Record<string, string> }): Promise<Fleet> {
  const redis = await startPrivateRedis();
  const servers: ServerProcess[] = [];
  let admin: Redis | undefined;
  const stop = async () => {
    admin?.disconnect();
    await Promise.all(servers.map((s) => s.stop()));
    await redis.kill();
  };
  const started = await Promise.allSettled(Array.from({ length: instances }, (_, i) => startServer({
    REDIS_URL: redis.url, KEYS_FILE: options.keysFile, MDQS__history__enabled: 'false', MDQS__redis__commandTimeoutMs: '2000',
    MDQS__redis__instances: String(instances), MDQS__server__pidFile: join(options.dir, `mdqs-${i}.pid`),
    ...options.env,
  })));
  for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed !== undefined) {
    await stop();
    throw failed.reason;
  }
  try {
    admin = await connectedClient(redis.url);
  } catch (error) {
    await stop();
    throw error;
  }
  return { redis, servers, admin, stop };
}
