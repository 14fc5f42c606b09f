// One recorder runner per store. A fleet sharing a PostgreSQL store records with one instance: the
// holder of a Redis lease (with Redis configured), else of a PostgreSQL session advisory lock. A
// killed runner's lease expires within `leaseMs` (its advisory lock goes with its connection), and
// the next instance that tries takes over. An instance's own SQLite store has one runner: itself.
//
//   const lock = redisRunnerLock(redis, { leaseMs: 6000, now }) | postgresRunnerLock(url, schema) | localRunnerLock()
//   await lock.tryHold()   // true: this instance runs (renews a held lease)
//   lock.held()            // as of the last tryHold / renewal
//   await lock.release()
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { redisKey } from '../redis/keys.ts';

export interface RunnerLock {
  readonly mechanism: 'redis' | 'postgres' | 'local';
  tryHold(): Promise<boolean>;
  held(): boolean;
  release(): Promise<void>;
}

export function localRunnerLock(): RunnerLock {
  return { mechanism: 'local', tryHold: async () => true, held: () => true, release: async () => undefined };
}

// Extends the lease only if this instance still holds it.
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** `scope` names the store (its PostgreSQL schema): fleets on different stores each have a runner. */
export function redisRunnerLock(redis: Redis, options: { scope: string; leaseMs: number; now: () => number }): RunnerLock {
  const key = redisKey('mdqs:recorder:', `runner:${options.scope}`);
  const token = randomUUID();
  let heldUntil = 0;
  return {
    mechanism: 'redis',
    async tryHold() {
      try {
        const renewed = heldUntil > 0 ? Number(await redis.eval(RENEW, 1, key, token, String(options.leaseMs))) === 1 : false;
        const ok = renewed || (await redis.set(key, token, 'PX', options.leaseMs, 'NX')) === 'OK';
        heldUntil = ok ? options.now() + options.leaseMs : 0;
        return ok;
      } catch {
        // Redis unreachable: hold on only as long as the lease we know of lasts.
        return heldUntil > options.now();
      }
    },
    held: () => heldUntil > options.now(),
    async release() {
      if (heldUntil === 0) return;
      heldUntil = 0;
      await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
    },
  };
}

/** A session advisory lock on a connection of its own: PostgreSQL frees it when the runner dies. */
export async function postgresRunnerLock(databaseUrl: string, schema: string): Promise<RunnerLock> {
  const { default: pg } = await import('pg');
  let client: InstanceType<typeof pg.Client> | undefined;
  let holding = false;
  const name = `mdqs_recorder:${schema}`;
  const connect = async () => {
    const c = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
    c.on('error', () => {
      holding = false;
      client = undefined;
    });
    await c.connect();
    return c;
  };
  return {
    mechanism: 'postgres',
    async tryHold() {
      try {
        if (holding && client !== undefined) {
          await client.query('SELECT 1');
          return holding;
        }
        client ??= await connect();
        const r = await client.query('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [name]);
        holding = r.rows[0].ok === true;
        return holding;
      } catch {
        holding = false;
        const c = client;
        client = undefined;
        await c?.end().catch(() => undefined);
        return false;
      }
    },
    held: () => holding,
    async release() {
      const c = client;
      client = undefined;
      holding = false;
      // Ending the session frees the lock.
      await c?.end().catch(() => undefined);
    },
  };
}
