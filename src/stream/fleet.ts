// The stream as one service across instances and server.workers processes (issue 27.4), through
// the shared Redis:
//
// Caps. Each connection is a member `<process>:<connection id>` of its key's live set, a sorted
// set scored by when its entry expires (`mdqs:v2:ws:live:{<owner>}`), with its subscription count
// in a hash of the same tag (`mdqs:v2:ws:subs:{<owner>}`). A connection is admitted by a script
// that first drops expired members, then counts (`max_connections`); a subscribe adds its symbols
// by a script that sums the live members' counts (`max_subscriptions`). Every process rewrites its
// own members (expiry and count) every lease/3 (the heartbeat): a dead instance's connections
// expire within one lease, and entries lost while Redis was down come back with the next beat.
// Time is Redis's (TIME), so skewed hosts agree. While Redis is down each process admits its share
// of a cap: cap ÷ (redis.instances × server.workers), at least 1.
//
// Ticks. Ticks are aligned to the wall clock (slot = round(now / tickMs)), so every instance ticks
// at the same moments. At each tick an instance claims its live symbols for that slot in one
// script (SADD on `mdqs:v2:ws:tick:{<channel>:<slot>}`: a symbol is claimed once per slot across
// the fleet), refreshes only the symbols it won, and publishes their values on
// `mdqs:v2:ws:ticks`; every instance (the publisher at once, the others on the message) pushes
// those values to its own subscribers. One refresh per symbol per tick for the whole fleet, and
// every instance sends the same value at the same tick. The claiming instance numbers each changed
// value (`seq`, sequencer.ts) before it publishes, so every instance sends the same `seq` for the
// same update. Redis down: each instance ticks (and numbers) for itself.
//
// Upstream push (upstream-push.ts). Where a vendor pushes, one instance holds the upstream
// subscription of a symbol: a lease per channel and symbol in `mdqs:v2:ws:push:{<channel>}`,
// renewed by its holder at every tick while its push feed is connected and given up when the feed
// is lost; a dead holder's lease runs out within the lease (the fleet lease, at least three
// ticks). The holder numbers and publishes what the vendor pushes, as a claiming instance does a
// refresh; no instance polls a symbol someone holds.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { unsubscribeWithin } from '../redis/connection.ts';
import { softly, type RedisHealth } from '../redis/health.ts';
import { redisKey, versionedName } from '../redis/keys.ts';
import type { Channel } from './protocol.ts';

/** Drops expired members of KEYS[1] (live) and their counts in KEYS[2] (subs); returns now (ms). */
const PURGE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
for i = 1, #dead, 500 do
  local part = {unpack(dead, i, math.min(i + 499, #dead))}
  redis.call('ZREM', KEYS[1], unpack(part))
  redis.call('HDEL', KEYS[2], unpack(part))
end
`;

/** ARGV: member, cap, lease ms → 1 admitted (or already a member), 0 refused. */
const CONNECT = `${PURGE}
local lease = tonumber(ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
  return 1
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], 0)
redis.call('PEXPIRE', KEYS[1], lease * 2)
redis.call('PEXPIRE', KEYS[2], lease * 2)
return 1
`;

/** ARGV: member, n, cap, lease ms → {1, held after} added, {0, held} refused (held: the key's subscriptions). */
const SUBSCRIBE = `${PURGE}
local lease = tonumber(ARGV[4])
local held = 0
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do held = held + tonumber(v) end
local n = tonumber(ARGV[2])
if held + n > tonumber(ARGV[3]) then return {0, held} end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('HINCRBY', KEYS[2], ARGV[1], n)
redis.call('PEXPIRE', KEYS[1], lease * 2)
redis.call('PEXPIRE', KEYS[2], lease * 2)
return {1, held + n}
`;

/** ARGV: member, n → subscriptions given back (only while the member is known). */
const RELEASE = `
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  local left = redis.call('HINCRBY', KEYS[2], ARGV[1], -tonumber(ARGV[2]))
  if left < 0 then redis.call('HSET', KEYS[2], ARGV[1], 0) end
end
return 1
`;

/** ARGV: member → the connection is gone. */
const DISCONNECT = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
`;

/** ARGV: lease ms, then member, count pairs: this process's members of the key, rewritten. */
const HEARTBEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
for i = 2, #ARGV, 2 do
  redis.call('ZADD', KEYS[1], now + lease, ARGV[i])
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[1], lease * 2)
redis.call('PEXPIRE', KEYS[2], lease * 2)
return 1
`;

/** ARGV: expiry ms, then symbols → the symbols newly claimed for this slot. */
const CLAIM = `
local out = {}
for i = 2, #ARGV do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then out[#out + 1] = ARGV[i] end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return out
`;

/**
 * Upstream push leases: KEYS[1] a hash per channel, symbol → "<process> <expires ms>". ARGV: the
 * process, lease ms, 1 claim (take free or expired symbols, renew own) or 0 release (drop own),
 * then symbols → {symbols this process holds, symbols another live process holds}.
 */
const PUSH_LEASE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local me = ARGV[1]
local lease = tonumber(ARGV[2])
local claim = ARGV[3] == '1'
local mine, taken = {}, {}
for i = 4, #ARGV do
  local symbol = ARGV[i]
  local held = redis.call('HGET', KEYS[1], symbol)
  local owner, expires = nil, 0
  if held then
    local space = string.find(held, ' ', 1, true)
    owner = string.sub(held, 1, space - 1)
    expires = tonumber(string.sub(held, space + 1))
  end
  if held and owner ~= me and expires > now then
    taken[#taken + 1] = symbol
  elseif claim then
    redis.call('HSET', KEYS[1], symbol, me .. ' ' .. (now + lease))
    mine[#mine + 1] = symbol
  elseif owner == me then
    redis.call('HDEL', KEYS[1], symbol)
  end
end
redis.call('PEXPIRE', KEYS[1], lease * 4)
return {mine, taken}
`;

/** One process's member of a key's live set, as the hub holds it (the heartbeat's input). */
export interface FleetMember {
  owner: string;
  member: string;
  /** Its subscriptions, reservations included. */
  subscriptions: number;
}

/** Updates one instance numbered for the fleet at a tick: [symbol, serialised value, seq]. */
export interface FleetValues {
  channel: Channel;
  slot: number;
  values: [string, string, number][];
}

export interface StreamFleetOptions {
  redis: Redis;
  /** A connection of its own for SUBSCRIBE. */
  subscriber: Redis;
  health: RedisHealth;
  /** Processes sharing the caps: redis.instances × server.workers (each one's share while Redis is down). */
  processes: number;
  /** How long a connection's entry lives without a heartbeat, ms (renewed every third of it). */
  leaseMs: number;
  /** The stream's tick, ms (claims expire after a few). */
  tickMs: number;
  /** Ceiling of one Redis command, ms. */
  timeoutMs: number;
  log?: { warn(obj: object, msg: string): void };
}

/**
 * A dead (SIGKILLed) instance's connections stop counting within this, ms: short enough that a
 * client at its key's cap gets back in on the official client's 3 s reconnect loop within two
 * tries; the heartbeat renews every third of it.
 */
export const DEFAULT_FLEET_LEASE_MS = 4_500;

export class StreamFleet {
  /** This process, unique across the fleet (host, pid, and a random part for restarts). */
  readonly tag = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  readonly leaseMs: number;
  readonly #o: StreamFleetOptions;
  readonly #channel = versionedName('mdqs:ws:ticks');
  readonly #listeners: ((values: FleetValues) => void)[] = [];
  #beat: NodeJS.Timeout | undefined;
  #closed = false;

  readonly #onMessage = (from: string, text: string) => {
    if (from !== this.#channel) return;
    let message: { p?: unknown; c?: unknown; s?: unknown; v?: unknown };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (message.p === this.tag || (message.c !== 'quotes' && message.c !== 'depth') || typeof message.s !== 'number' || !Array.isArray(message.v)) return;
    const values = (message.v as unknown[]).filter((x): x is [string, string, number] => Array.isArray(x) && typeof x[0] === 'string' && typeof x[1] === 'string' && Number.isInteger(x[2]));
    for (const listener of this.#listeners) listener({ channel: message.c, slot: message.s, values });
  };

  constructor(options: StreamFleetOptions) {
    this.#o = options;
    this.leaseMs = options.leaseMs;
    options.subscriber.on('message', this.#onMessage);
    void options.subscriber.subscribe(this.#channel).catch(() => undefined);
  }

  /** Whether Redis is up (caps fleet-wide, ticks shared); down: shares and own ticks. */
  get up(): boolean {
    return this.#o.health.up;
  }

  /** A process's share of `cap` while Redis is down. */
  share(cap: number): number {
    return Math.max(1, Math.floor(cap / Math.max(1, this.#o.processes)));
  }

  member(connectionId: number): string {
    return `${this.tag}:${connectionId}`;
  }

  #keys(owner: string): [string, string] {
    return [redisKey('mdqs:ws:live:', owner), redisKey('mdqs:ws:subs:', owner)];
  }

  #eval<T>(script: string, owner: string, args: (string | number)[]): Promise<T | undefined> {
    return softly(this.#o.health, this.#o.timeoutMs, () => this.#o.redis.eval(script, 2, ...this.#keys(owner), ...args) as Promise<T>);
  }

  /** One more connection of `owner` under `cap`, fleet-wide: true, false, or undefined (Redis unavailable). */
  async connect(owner: string, member: string, cap: number): Promise<boolean | undefined> {
    const r = await this.#eval<number>(CONNECT, owner, [member, cap, this.leaseMs]);
    return r === undefined ? undefined : r === 1;
  }

  disconnect(owner: string, member: string): void {
    void this.#eval(DISCONNECT, owner, [member]);
  }

  /** `n` more subscriptions of `owner` under `cap`, fleet-wide; undefined: Redis unavailable. */
  async subscribe(owner: string, member: string, n: number, cap: number): Promise<{ ok: boolean; held: number } | undefined> {
    const r = await this.#eval<[number, number]>(SUBSCRIBE, owner, [member, n, cap, this.leaseMs]);
    return r === undefined ? undefined : { ok: r[0] === 1, held: Number(r[1]) };
  }

  release(owner: string, member: string, n: number): void {
    if (n > 0) void this.#eval(RELEASE, owner, [member, n]);
  }

  /** Rewrites this process's members (expiry and counts); `members()` is read at each beat. */
  startHeartbeat(members: () => FleetMember[]): void {
    if (this.#beat !== undefined || this.#closed) return;
    const beat = async () => {
      const byOwner = new Map<string, (string | number)[]>();
      for (const m of members()) {
        const list = byOwner.get(m.owner) ?? [];
        list.push(m.member, m.subscriptions);
        byOwner.set(m.owner, list);
      }
      for (const [owner, pairs] of byOwner) await this.#eval(HEARTBEAT, owner, [this.leaseMs, ...pairs]);
    };
    this.#beat = setInterval(() => {
      beat().catch((error: unknown) => this.#o.log?.warn({ err: error }, 'stream: fleet heartbeat failed'));
    }, Math.max(100, Math.floor(this.leaseMs / 3)));
    this.#beat.unref();
  }

  /** Claims `symbols` of `channel` for tick `slot`: the ones this instance refreshes; undefined: Redis unavailable. */
  async claim(channel: Channel, slot: number, symbols: string[]): Promise<string[] | undefined> {
    if (symbols.length === 0) return [];
    const key = redisKey('mdqs:ws:tick:', `${channel}:${slot}`);
    const ttl = Math.max(5_000, this.#o.tickMs * 10);
    return softly(this.#o.health, this.#o.timeoutMs, () => this.#o.redis.eval(CLAIM, 1, key, ttl, ...symbols) as Promise<string[]>);
  }

  /**
   * Upstream push leases of `symbols` on `channel` (one holder per symbol fleet-wide, which alone
   * subscribes upstream): `claim` takes the free ones and renews this process's for `leaseMs`;
   * otherwise this process's are released. Undefined: Redis unavailable.
   */
  async pushLeases(channel: Channel, symbols: string[], claim: boolean, leaseMs: number): Promise<{ mine: string[]; taken: string[] } | undefined> {
    if (symbols.length === 0) return { mine: [], taken: [] };
    const key = redisKey('mdqs:ws:push:', channel);
    const r = await softly(this.#o.health, this.#o.timeoutMs, () => this.#o.redis.eval(PUSH_LEASE, 1, key, this.tag, leaseMs, claim ? 1 : 0, ...symbols) as Promise<[string[], string[]]>);
    return r === undefined ? undefined : { mine: r[0], taken: r[1] };
  }

  /** The values this instance refreshed at `slot`, to every other instance. */
  publish(values: FleetValues): void {
    if (values.values.length === 0) return;
    const text = JSON.stringify({ p: this.tag, c: values.channel, s: values.slot, v: values.values });
    // Values numbered through Redis while another command's timeout counted it as down
    // (sequencer.ts) are the fleet's: published while the connection is up.
    if (this.#o.redis.status === 'ready') void this.#o.redis.publish(this.#channel, text).catch(() => undefined);
    else void softly(this.#o.health, this.#o.timeoutMs, () => this.#o.redis.publish(this.#channel, text));
  }

  onValues(listener: (values: FleetValues) => void): void {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#beat !== undefined) clearInterval(this.#beat);
    this.#beat = undefined;
    this.#o.subscriber.off('message', this.#onMessage);
    this.#listeners.length = 0;
    // Bounded: a subscriber that never connected (sentinels without the master) keeps it queued.
    await unsubscribeWithin(this.#o.subscriber, this.#channel);
  }
}
