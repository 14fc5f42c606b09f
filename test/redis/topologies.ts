// Real Redis topologies for the tests (issue 27), started by the test on free ports and stopped by
// PID: a Redis Cluster of three masters (redis-server --cluster-enabled yes ×3, then
// `redis-cli --cluster create`), and Sentinel (a master, a replica and one sentinel).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { freePort, waitUntil } from './support.ts';

export interface RedisProcess {
  port: number;
  readonly pid: number;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free port whose cluster bus port (+10 000) is free too. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port > 55_000 || taken.has(port)) continue;
    if (await portFree(port + 10_000)) {
      taken.add(port);
      return port;
    }
  }
}

async function answers(port: number, check: (redis: Redis) => Promise<boolean> = async (r) => (await r.ping()) === 'PONG', password?: string): Promise<boolean> {
  const client = new Redis({ port, host: '127.0.0.1', password, lazyConnect: true, connectTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await check(client);
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

function launch(args: string[], port: number, dir: string, password?: string): Promise<RedisProcess> {
  const proc: ChildProcess = spawn('redis-server', args, { stdio: 'ignore', cwd: dir });
  const handle: RedisProcess = {
    port,
    get pid() {
      return proc.pid!;
    },
    async kill() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      process.kill(proc.pid!, 'SIGKILL');
      await exited;
    },
  };
  return waitUntil(() => answers(port, undefined, password), `redis-server on ${port}`).then(() => handle);
}

export interface RedisClusterHandle {
  nodes: RedisProcess[];
  /** "127.0.0.1:port" of each master: the startup nodes (redis.cluster). */
  addresses: string[];
  stop(): Promise<void>;
}

/** Three masters, all slots assigned, cluster_state:ok on every node; with `password`, requirepass on each. */
export async function startRedisCluster(masters = 3, password?: string): Promise<RedisClusterHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-cluster-'));
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < masters; i += 1) ports.push(await clusterPort(taken));
  const nodes = await Promise.all(ports.map((port) => launch([
    '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
    '--cluster-node-timeout', '2000', '--save', '', '--appendonly', 'no', '--dir', dir,
    ...(password === undefined ? [] : ['--requirepass', password, '--masterauth', password]),
  ], port, dir, password)));
  const addresses = ports.map((port) => `127.0.0.1:${port}`);
  const created = spawnSync('redis-cli', [
    '--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes', ...(password === undefined ? [] : ['-a', password, '--no-auth-warning']),
  ], { encoding: 'utf8', timeout: 30_000 });
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
  for (const port of ports) {
    await waitUntil(() => answers(port, async (r) => /cluster_state:ok/.test(String(await r.cluster('INFO'))), password), `cluster_state:ok on ${port}`, 15_000);
  }
  return {
    nodes,
    addresses,
    async stop() {
      await Promise.all(nodes.map((n) => n.kill()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface SentinelHandle {
  master: RedisProcess;
  replica: RedisProcess;
  sentinel: RedisProcess;
  /** The master's name the sentinel monitors. */
  name: string;
  /** "127.0.0.1:port" of the sentinel (redis.sentinel.nodes). */
  sentinelAddress: string;
  /** The port of the master the sentinel names now. */
  masterPort(): Promise<number | undefined>;
  stop(): Promise<void>;
}

/** A master, a replica of it and one sentinel (quorum 1, down after 1 s). */
export async function startSentinelSet(name = 'mdqs-test'): Promise<SentinelHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-sentinel-'));
  const masterPort = await freePort();
  const master = await launch(['--port', String(masterPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], masterPort, dir);
  const replicaPort = await freePort();
  const replica = await launch([
    '--port', String(replicaPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--replicaof', '127.0.0.1', String(masterPort),
  ], replicaPort, dir);
  await waitUntil(() => answers(replicaPort, async (r) => /master_link_status:up/.test(await r.info('replication'))), 'the replica in sync', 10_000);
  const sentinelPort = await freePort();
  const conf = join(dir, 'sentinel.conf');
  // The sentinel rewrites its config file: it must be its own and writable.
  writeFileSync(conf, [
    `port ${sentinelPort}`, 'bind 127.0.0.1', `dir ${dir}`,
    `sentinel monitor ${name} 127.0.0.1 ${masterPort} 1`,
    `sentinel down-after-milliseconds ${name} 1000`,
    `sentinel failover-timeout ${name} 5000`,
    `sentinel parallel-syncs ${name} 1`,
    '',
  ].join('\n'));
  const sentinel = await launch([conf, '--sentinel'], sentinelPort, dir);
  const askSentinel = async (): Promise<number | undefined> => {
    const client = new Redis({ port: sentinelPort, host: '127.0.0.1', connectTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      const reply = await client.call('SENTINEL', 'get-master-addr-by-name', name) as [string, string] | null;
      return reply === null ? undefined : Number(reply[1]);
    } catch {
      return undefined;
    } finally {
      client.disconnect();
    }
  };
  // The sentinel has found the replica (it learns it from the master's INFO).
  await waitUntil(async () => {
    const client = new Redis({ port: sentinelPort, host: '127.0.0.1', connectTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      const replicas = await client.call('SENTINEL', 'replicas', name) as unknown[];
      return replicas.length > 0;
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  }, 'the sentinel to see the replica', 15_000);
  return {
    master, replica, sentinel, name,
    sentinelAddress: `127.0.0.1:${sentinelPort}`,
    masterPort: askSentinel,
    async stop() {
      await Promise.all([master.kill(), replica.kill(), sentinel.kill()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
