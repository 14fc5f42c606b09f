// Whether the shared Redis is up and usable as configured: the health tracker, its metric and
// /readyz check, and the guarded call every user of Redis makes.
//
//   trackRedisHealth(redis, options?): RedisHealth   up/down/unusable + since, probed in the background
//   redisHealth(redis): RedisHealth | undefined      the tracker attached to a client
//   attachRedisLog(redis, log)                       where an unusable Redis is logged (at error)
//   registerRedisMetric(registry, health)            gauges mdqs_redis_up, mdqs_redis_unusable
//   redisReadiness(health)                           a /readyz check: 'ok' | 'down since …' | 'unusable …'
//   softly(health, timeoutMs, call)                  a Redis call with a hard ceiling; undefined on failure
//
// Unusable as configured (issue 27): a Redis that answers but cannot serve this topology (a node of
// a Redis Cluster given as redis.url: MOVED replies; CROSSSLOT; a cluster with a slot without a
// master: CLUSTERDOWN; a read-only replica: READONLY; sentinels that know no master of that name;
// a wrong or missing password: WRONGPASS, NOAUTH)
// is `unusable`: the tracker says down (every caller degrades as for Redis down: own tiers,
// per-instance shares of the limits), /readyz names the problem (never "ok"), and it is logged at
// error once per problem. The probe re-checks the topology (INFO cluster and role of a single node,
// CLUSTER INFO of a cluster) on each connection, every 5 s, and every probe while a problem stands,
// so a fixed Redis is used again without a restart.
import type { Cluster, Redis } from 'ioredis';
import { Gauge, type Registry } from 'prom-client';
import type { ReadinessCheck } from '../health.ts';
import { describeTopology, topologyOfClient, type RedisTopology } from './connection.ts';

const logs = new WeakMap<Redis, RedisLog>();

export interface RedisLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Where an unusable Redis is logged (the app's logger; main.ts). A problem found before a logger
 * was attached is logged when one is.
 */
export function attachRedisLog(redis: Redis, log: RedisLog): void {
  logs.set(redis, log);
  (trackers.get(redis) as Tracker | undefined)?.flushLog();
}

export interface RedisHealth {
  /** Whether Redis answered the last probe or command and is usable as configured. */
  readonly up: boolean;
  /** Clock time of the last up/down change (or of tracking start). */
  readonly since: number;
  /** Set while Redis answers but cannot be used as configured (MOVED, CLUSTERDOWN, …). */
  readonly problem: { text: string; since: number } | undefined;
  /** A command failed or timed out: treat Redis as down until a probe answers. */
  markDown(): void;
  /** A command failed with `error`: unusable (a reply naming a topology problem) or down. */
  failed(error: unknown): void;
  /** Called on every change. */
  onChange(listener: (up: boolean) => void): void;
  /** Probe now (also runs every `probeIntervalMs`). */
  probe(): Promise<boolean>;
  /** Resolves once Redis is up, or after `timeoutMs` (boot waits for the first connection). */
  settled(timeoutMs: number): Promise<boolean>;
  stop(): void;
}

interface Tracker extends RedisHealth {
  flushLog(): void;
}

export interface RedisHealthOptions {
  now?: () => number;
  /** How often a PING checks the connection, ms (default 500). */
  probeIntervalMs?: number;
  /** A problem seen in a command's reply is held this long before commands try again, ms (default 30 000). */
  problemHoldMs?: number;
}

/**
 * The problem a command's error names, if it is one of a Redis that answers but cannot be used as
 * configured; undefined for "down" (timeouts, refused connections, closed sockets).
 */
export function unusableReason(error: unknown, topology: RedisTopology | undefined): string | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const where = topology === undefined ? 'Redis' : describeTopology(topology);
  if (/(^|: )(MOVED|ASK) \d+ /.test(message)) {
    return topology?.kind === 'cluster'
      ? `MOVED replies beyond the redirections followed: the cluster's slots keep moving (${where})`
      : clusterNodeProblem(where);
  }
  if (/(^|: )CROSSSLOT/.test(message)) return `CROSSSLOT replies: a command over several keys spans hash slots (${where})`;
  if (/(^|: )CLUSTERDOWN/.test(message)) return `CLUSTERDOWN: the Redis Cluster is down, a hash slot has no master (${where})`;
  if (/(^|: )READONLY/.test(message)) return replicaProblem(where);
  if (/(^|: )MASTERDOWN/.test(message)) return `MASTERDOWN: the replica at ${where} lost its master`;
  if (/(^|: )(NOAUTH|WRONGPASS)/.test(message)) {
    return `${/WRONGPASS/.test(message) ? 'WRONGPASS' : 'NOAUTH'}: ${where} refuses these credentials; set the password (redis.password for a cluster or sentinel, in the URL for redis.url)`;
  }
  return undefined;
}

const clusterNodeProblem = (where: string) =>
  `MOVED replies: ${where} is a node of a Redis Cluster (cluster_enabled:1), so keys held by other nodes are refused; list the cluster's nodes in redis.cluster instead`;
const replicaProblem = (where: string) => `READONLY: ${where} is a read-only replica, writes are refused`;

const trackers = new WeakMap<Redis, Tracker>();
const users = new WeakMap<Redis, number>();

/** What the probe finds wrong with a Redis that answers, for the topology; undefined: usable. */
async function topologyCheck(redis: Redis, topology: RedisTopology | undefined): Promise<string | undefined> {
  if (topology?.kind === 'cluster') {
    const info = String(await (redis as unknown as Cluster).cluster('INFO'));
    const state = /cluster_state:(\w+)/.exec(info)?.[1];
    return state === undefined || state === 'ok'
      ? undefined
      : `CLUSTERDOWN: cluster_state:${state}, a hash slot has no master (${describeTopology(topology)})`;
  }
  const where = topology === undefined ? 'Redis' : describeTopology(topology);
  const cluster = await redis.info('cluster');
  if (/cluster_enabled:1/.test(cluster)) return clusterNodeProblem(where);
  const replication = await redis.info('replication');
  if (/role:slave/.test(replication)) return replicaProblem(where);
  return undefined;
}

/** The health tracker of a client: one per client, shared; call stop() once per call of this. */
export function trackRedisHealth(redis: Redis, options: RedisHealthOptions = {}): RedisHealth {
  const existing = trackers.get(redis);
  if (existing !== undefined) {
    users.set(redis, (users.get(redis) ?? 0) + 1);
    return existing;
  }
  users.set(redis, 1);
  const now = options.now ?? Date.now;
  const holdMs = options.problemHoldMs ?? 30_000;
  const topology = topologyOfClient(redis);
  let connected = redis.status === 'ready';
  let problem: { text: string; since: number; until: number; fromReply: boolean; logged: boolean } | undefined;
  let up = connected;
  let since = now();
  const listeners: Array<(up: boolean) => void> = [];
  const update = () => {
    const next = connected && problem === undefined;
    if (next === up) return;
    up = next;
    since = now();
    for (const listener of listeners) listener(up);
  };
  const flushLog = () => {
    const log = logs.get(redis);
    if (problem === undefined || problem.logged || log === undefined) return;
    problem.logged = true;
    log.error({ redis: topology === undefined ? undefined : describeTopology(topology), problem: problem.text },
      `Redis answers but cannot be used as configured: ${problem.text}; degrading as for Redis down (own caches, per-instance shares of the limits and vendor budgets)`);
  };
  const raise = (text: string, fromReply: boolean) => {
    const t = now();
    if (problem === undefined || problem.text !== text) problem = { text, since: t, until: t + holdMs, fromReply, logged: false };
    else {
      problem.until = Math.max(problem.until, t + holdMs);
      // Seen by the probe too: it, not the hold, decides when the problem is over.
      problem.fromReply = problem.fromReply && fromReply;
    }
    update();
    flushLog();
  };
  const clear = () => {
    if (problem === undefined) return;
    if (problem.fromReply && now() < problem.until) return;
    const was = problem;
    problem = undefined;
    if (was.logged) logs.get(redis)?.warn({ redis: topology === undefined ? undefined : describeTopology(topology), problem: was.text }, 'Redis is usable again');
    update();
  };
  const setConnected = (next: boolean) => {
    connected = next;
    update();
  };
  let probing: Promise<boolean> | undefined;
  // The topology is checked on every (re)connection, while a problem stands, and every tenth
  // probe (5 s) otherwise: a PING alone would not tell a cluster that lost a master.
  let checkTopology = true;
  let probes = 0;
  const health: Tracker = {
    get up() {
      return up;
    },
    get since() {
      return problem?.since ?? since;
    },
    get problem() {
      return problem === undefined ? undefined : { text: problem.text, since: problem.since };
    },
    markDown: () => setConnected(false),
    failed(error) {
      const reason = unusableReason(error, topology);
      if (reason !== undefined) raise(reason, true);
      else setConnected(false);
    },
    flushLog,
    onChange: (listener) => {
      listeners.push(listener);
    },
    probe() {
      // A frozen Redis would stack one PING per interval; one outstanding probe is enough.
      if (probing !== undefined) return probing;
      const run = async () => {
        try {
          const ok = redis.status === 'ready' && (await redis.ping()) === 'PONG';
          probes += 1;
          if (ok && (checkTopology || problem !== undefined || probes % 10 === 0)) {
            const found = await topologyCheck(redis, topology);
            if (found !== undefined) raise(found, false);
            else clear();
            checkTopology = false;
          }
          setConnected(ok);
        } catch (error) {
          const reason = unusableReason(error, topology);
          if (reason !== undefined) raise(reason, true);
          else setConnected(false);
        }
        return up;
      };
      probing = run().finally(() => {
        probing = undefined;
      });
      return probing;
    },
    settled(timeoutMs) {
      if (up) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timeout = setTimeout(() => resolve(up), timeoutMs);
        timeout.unref();
        listeners.push((next) => {
          if (next) {
            clearTimeout(timeout);
            resolve(true);
          }
        });
      });
    },
    stop() {
      // One stop per trackRedisHealth call: the tracker lives while anyone still uses it.
      const left = (users.get(redis) ?? 1) - 1;
      users.set(redis, left);
      if (left > 0) return;
      trackers.delete(redis);
      clearInterval(timer);
      redis.off('ready', onReady);
      redis.off('close', onClose);
      redis.off('sentinelError', onSentinelError);
      redis.off('error', onError);
      redis.off('node error', onError);
    },
  };
  const onReady = () => {
    checkTopology = true;
    void health.probe();
  };
  const onClose = () => setConnected(false);
  // Sentinels that answer but know no master of this name: ioredis retries forever, quietly.
  const onSentinelError = (error: Error) => {
    if (topology?.kind === 'sentinel' && /invalid reply: null|No such master with that name/.test(error.message)) {
      raise(`no master: the sentinels know no master named "${topology.name}" (${describeTopology(topology)})`, true);
    }
  };
  // Connection-level errors that name a configuration problem (a wrong or missing password).
  const onError = (error: Error) => {
    const reason = unusableReason(error, topology);
    if (reason !== undefined && /^(NOAUTH|WRONGPASS)/.test(reason)) raise(reason, false);
  };
  redis.on('ready', onReady);
  redis.on('close', onClose);
  redis.on('sentinelError', onSentinelError);
  redis.on('error', onError);
  redis.on('node error', onError);
  const timer = setInterval(() => void health.probe(), options.probeIntervalMs ?? 500);
  timer.unref();
  trackers.set(redis, health);
  void health.probe();
  return health;
}

export function redisHealth(redis: Redis): RedisHealth | undefined {
  return trackers.get(redis);
}

/** mdqs_redis_up: 1 while the shared Redis answers and is usable; mdqs_redis_unusable: 1 while it answers but is not. */
export function registerRedisMetric(registry: Registry, health: RedisHealth): void {
  if (registry.getSingleMetric('mdqs_redis_up') !== undefined) return;
  new Gauge({
    name: 'mdqs_redis_up',
    help: 'Whether the shared Redis answers and is usable as configured (1) or the instance runs on its own tiers and per-instance limits (0).',
    registers: [registry],
    collect() {
      this.set(health.up ? 1 : 0);
    },
  });
  new Gauge({
    name: 'mdqs_redis_unusable',
    help: 'Whether the shared Redis answers but cannot be used as configured (1: a cluster node given as redis.url, CLUSTERDOWN, READONLY, no master; /readyz names it).',
    registers: [registry],
    collect() {
      this.set(health.problem === undefined ? 0 : 1);
    },
  });
}

/**
 * A /readyz check (routes/ops.ts ReadinessCheck shape): detail 'ok', 'down since <ISO time>' or
 * 'unusable since <ISO time>: <problem>'. Never sends a command, so it never waits. A Redis that is
 * down or unusable does not make the instance unready: it keeps serving from its own tiers with
 * per-instance limits (the readiness policy: a shared fault degrades).
 */
export function redisReadiness(health: RedisHealth): ReadinessCheck {
  return {
    name: 'redis',
    run: async () => {
      const problem = health.problem;
      if (problem !== undefined) {
        return {
          ready: true,
          detail: `unusable since ${new Date(problem.since).toISOString()}: ${problem.text}`,
          degraded: { problem: `unusable as configured: ${problem.text}; limits per instance, no shared cache`, since: problem.since },
        };
      }
      return health.up
        ? { ready: true, detail: 'ok' }
        : { ready: true, detail: `down since ${new Date(health.since).toISOString()}`, degraded: { problem: 'down: limits per instance, no shared cache', since: health.since } };
    },
  };
}


/** Run a Redis call with a hard ceiling; undefined on error, timeout or known-down Redis. */
export async function softly<T>(health: RedisHealth | undefined, timeoutMs: number, call: () => Promise<T>): Promise<T | undefined> {
  if (health !== undefined && !health.up) return undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      call(),
      new Promise<undefined>((_, reject) => {
        // Timers run before I/O in an event-loop turn: after a stall the reply may already be in
        // the socket. setImmediate runs after that I/O, so only a reply that truly is not there
        // yet counts as a timeout.
        timer = setTimeout(() => setImmediate(() => reject(new Error('redis timeout'))), timeoutMs);
      }),
    ]);
  } catch (error) {
    health?.failed(error);
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
