// The shared Redis client (scale-out) and its pub/sub twin, for the configured topology.
//
//   redisTopology(settings): RedisTopology | undefined   redis.url | redis.cluster | redis.sentinel (one)
//   createRedisClient(target, options?): Redis       fail-fast client (see below); target: a URL or the
//                                                    redis settings (one node, a Cluster or Sentinel)
//   createSubscriber(target, options?): Redis        a second connection for SUBSCRIBE
//   unsubscribeWithin(subscriber, channel, ms?)      a subscriber's UNSUBSCRIBE, bounded
//
// Topologies (ioredis): one node (redis.url), a Redis Cluster (redis.cluster: its startup nodes;
// slots are discovered and MOVED/ASK followed by ioredis) or Sentinel (redis.sentinel: the master's
// name and the sentinels; ioredis asks them for the master and follows a failover). A Cluster is
// handed out typed as Redis: it has the same command surface, and its duplicate() here takes a
// single node's options like Redis's does (a subscriber: createSubscriber or redis.duplicate).
//
// Fail fast (issue 14.1): no offline queue (a command while disconnected fails at once instead of
// waiting for a reconnect and replaying into the wrong rate-limit window), one attempt per command,
// a short connect timeout, and a command timeout so a frozen Redis (SIGSTOP: the socket stays open
// and never answers) fails a command after `commandTimeoutMs` instead of hanging the request.
// Reconnection runs in the background forever with a capped back-off, so a Redis that comes back is
// used again without a restart. Callers also consult the health tracker first (health.ts): while
// Redis is known down they skip it without paying even the command timeout.
import { createRequire } from 'node:module';
import type { Cluster, ClusterNode, Redis, RedisOptions } from 'ioredis';

// ioredis (~45 ms to load) only when a Redis is configured: most starts never need it.
const load = createRequire(import.meta.url);
const ioredis = (): typeof import('ioredis') => load('ioredis') as typeof import('ioredis');

/** The redis.* settings that choose the topology (config/schema.ts). */
export interface RedisTopologySettings {
  url: string;
  cluster?: string[];
  sentinel?: { name: string; nodes: string[]; password?: string };
  /** The data nodes' ACL user and password (cluster, sentinel; a url carries its own). */
  username?: string;
  password?: string;
}

/** Credentials of the data nodes (and of the sentinels), when set. */
interface Auth {
  username?: string;
  password?: string;
  sentinelPassword?: string;
}

export type RedisTopology =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: ClusterNode[]; auth?: Auth }
  | { kind: 'sentinel'; name: string; nodes: Array<{ host: string; port: number }>; auth?: Auth };

/** "host:port" or "[v6]:port" → { host, port } (config/load.ts has checked the shape). */
export function parseHostPort(text: string): { host: string; port: number } {
  const at = text.lastIndexOf(':');
  const host = text.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(text.slice(at + 1)) };
}

/** The configured topology, or undefined without Redis (an empty url counts as unset). */
export function redisTopology(settings: RedisTopologySettings): RedisTopology | undefined {
  const auth: Auth = {
    ...(settings.username ? { username: settings.username } : {}),
    ...(settings.password ? { password: settings.password } : {}),
    ...(settings.sentinel?.password ? { sentinelPassword: settings.sentinel.password } : {}),
  };
  const withAuth = Object.keys(auth).length > 0 ? { auth } : {};
  if (settings.cluster !== undefined && settings.cluster.length > 0) return { kind: 'cluster', nodes: settings.cluster.map(parseHostPort), ...withAuth };
  if (settings.sentinel !== undefined) return { kind: 'sentinel', name: settings.sentinel.name, nodes: settings.sentinel.nodes.map(parseHostPort), ...withAuth };
  if (settings.url !== '') return { kind: 'single', url: settings.url };
  return undefined;
}

/** Whether any Redis is configured. */
export function redisConfigured(settings: RedisTopologySettings): boolean {
  return redisTopology(settings) !== undefined;
}

const nodeList = (nodes: ClusterNode[]) => nodes.map((n) => (typeof n === 'object' ? `${n.host}:${n.port}` : String(n))).join(', ');

/** For messages: which Redis, by setting (a URL's password masked). */
export function describeTopology(topology: RedisTopology): string {
  switch (topology.kind) {
    case 'single': return `redis.url ${topology.url.replace(/^([a-z]+:\/\/[^/:@]*:)[^/@]+@/i, '$1***@')}`;
    case 'cluster': return `redis.cluster [${nodeList(topology.nodes)}]`;
    case 'sentinel': return `redis.sentinel ${topology.name} via [${nodeList(topology.nodes)}]`;
  }
}

export interface RedisClientOptions {
  /** A command not answered within this many ms fails (default 250). */
  commandTimeoutMs?: number;
  /** TCP connect + handshake budget, ms (default 500). */
  connectTimeoutMs?: number;
  /** Longest pause between reconnect attempts, ms (default 1000). */
  maxReconnectDelayMs?: number;
}

const backoff = (options: RedisClientOptions) => {
  const maxDelay = options.maxReconnectDelayMs ?? 1000;
  // Never give up: null would stop reconnecting for good.
  return (times: number) => Math.min(maxDelay, 50 * 2 ** Math.min(times, 5));
};

function baseOptions(options: RedisClientOptions) {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: options.connectTimeoutMs ?? 500,
    commandTimeout: options.commandTimeoutMs ?? 250,
    retryStrategy: backoff(options),
  };
}

const commandTimeouts = new WeakMap<Redis, number>();
const topologies = new WeakMap<Redis, RedisTopology>();

type Target = string | RedisTopologySettings | RedisTopology;

function topologyOf(target: Target): RedisTopology {
  if (typeof target === 'string') return { kind: 'single', url: target };
  if ('kind' in target) return target;
  const topology = redisTopology(target);
  if (topology === undefined) throw new Error('no Redis configured (redis.url, redis.cluster and redis.sentinel are all unset)');
  return topology;
}

/** A READONLY reply (a replica, or a master demoted by a failover): reconnect, so Sentinel is asked again. */
const reconnectOnReadonly = (error: Error) => (error.message.startsWith('READONLY') ? 2 : false);

function open(topology: RedisTopology, nodeOptions: RedisOptions, clusterQueue: boolean, options: RedisClientOptions): Redis {
  const { Redis: RedisClient, Cluster: ClusterClient } = ioredis();
  switch (topology.kind) {
    case 'single':
      return new RedisClient(topology.url, nodeOptions);
    case 'sentinel':
      return new RedisClient({
        ...nodeOptions,
        ...topology.auth,
        sentinels: topology.nodes,
        name: topology.name,
        // Retried for good (null would end the client: ioredis does not reconnect after a failed
        // pass over the sentinels). Meanwhile queued commands wait: a subscriber's UNSUBSCRIBE on
        // close is bounded (unsubscribeWithin).
        sentinelRetryStrategy: backoff(options),
        sentinelCommandTimeout: nodeOptions.connectTimeout,
        // A failover is followed through the connection: a killed master closes it and the
        // reconnect asks the sentinels again; a demoted one answers READONLY (reconnect below) and
        // the probe sees role:slave. (ioredis's failoverDetector, which disconnects on the
        // sentinels' +switch-master, left clients reconnecting for good in 2 of 10 test runs.)
        reconnectOnError: reconnectOnReadonly,
      });
    case 'cluster': {
      // Node connections keep ioredis's own offline queue (they connect lazily, on the first
      // command routed to them); the cluster-level queue is off, so nothing waits for a cluster
      // that is not ready.
      const { enableOfflineQueue: _queue, retryStrategy: _retry, ...perNode } = nodeOptions;
      const cluster = new ClusterClient(topology.nodes, {
        enableOfflineQueue: clusterQueue,
        clusterRetryStrategy: backoff(options),
        slotsRefreshTimeout: Math.max(1000, nodeOptions.connectTimeout ?? 500),
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 100,
        redisOptions: { ...perNode, ...topology.auth, reconnectOnError: reconnectOnReadonly },
      });
      return asRedis(cluster, topology, options);
    }
  }
}

/**
 * A Cluster typed as Redis: the same commands; duplicate() takes a node's options (as
 * Redis.duplicate does) and gives a Cluster with them, its own offline queue as asked.
 */
function asRedis(cluster: Cluster, topology: RedisTopology, options: RedisClientOptions): Redis {
  const clusterDuplicate = cluster.duplicate.bind(cluster);
  Object.defineProperty(cluster, 'duplicate', {
    value: (override?: RedisOptions | ClusterNode[], clusterOverride?: object) => {
      if (Array.isArray(override)) return clusterDuplicate(override, clusterOverride);
      const copy = open(topology, { ...baseOptions(options), ...(override ?? {}) }, override?.enableOfflineQueue ?? false, options);
      return copy;
    },
  });
  return cluster as unknown as Redis;
}

export function createRedisClient(target: Target, options: RedisClientOptions = {}): Redis {
  const commandTimeoutMs = options.commandTimeoutMs ?? 250;
  const topology = topologyOf(target);
  // The client's own timeout is a backstop at twice ours: our calls go through softly(), which
  // does not count a reply that arrived during an event-loop stall as a timeout.
  const redis = open(topology, { ...baseOptions(options), commandTimeout: 2 * commandTimeoutMs }, false, options);
  // Errors surface through command rejections and the health tracker; an unhandled 'error'
  // event would crash the process.
  redis.on('error', () => undefined);
  commandTimeouts.set(redis, commandTimeoutMs);
  topologies.set(redis, topology);
  return redis;
}

/** The command timeout a client was created with (createRedisClient), if any. */
export function commandTimeoutOf(redis: Redis): number | undefined {
  return commandTimeouts.get(redis);
}

/** The topology a client was created for (createRedisClient), if any. */
export function topologyOfClient(redis: Redis): RedisTopology | undefined {
  return topologies.get(redis);
}

/** A subscriber needs its own connection (a subscribed connection runs no other command). */
export function createSubscriber(target: Target, options: RedisClientOptions = {}): Redis {
  // SUBSCRIBE may queue until connected (nothing waits on it), and no command timeout: a
  // subscribed connection only receives. Subscriptions are renewed on every reconnect (on a
  // Cluster, on another node when the one it used goes: PUBLISH reaches every node).
  const redis = open(topologyOf(target), { ...baseOptions(options), enableOfflineQueue: true, commandTimeout: undefined, autoResubscribe: true }, true, options);
  redis.on('error', () => undefined);
  return redis;
}
/**
 * A subscriber's UNSUBSCRIBE on close, bounded: a subscriber that never connected (Redis down since
 * boot, sentinels without the master) keeps the command in its offline queue for good, and a
 * shutdown must not wait for it.
 */
export async function unsubscribeWithin(subscriber: Redis, channel: string, ms = 500): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    subscriber.unsubscribe(channel).catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}
