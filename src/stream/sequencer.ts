// Sequence numbers and the replay log. Every update of a symbol on a channel gets `seq`, an
// integer increasing per channel and symbol, assigned once: by the instance that claimed the
// symbol's tick (fleet.ts), so clients on every instance see the same `seq` for the same update.
// Each update is also appended to a bounded replay log, from which a client that resubscribes
// with the last `seq` it saw gets what it missed (hub.ts).
//
// With Redis (shared): per channel and symbol one counter (`mdqs:v2:ws:seq:{<channel>:<symbol>}`,
// INCR) and one Redis Stream (`mdqs:v2:ws:log:{<channel>:<symbol>}`, XADD with MAXLEN ~ for
// length and XTRIM MINID ~ for age, XRANGE to replay), in one script per symbol so the number and
// the log entry go together. Without Redis, or while it is down: the same in process.
import type { Redis, Cluster } from 'ioredis';
import { softly, type RedisHealth } from '../redis/health.ts';
import { redisKey } from '../redis/keys.ts';
import type { Channel } from './protocol.ts';

export interface ReplaySettings {
  /** Updates kept per channel and symbol (approximately, with Redis: MAXLEN ~). */
  maxLength: number;
  /** Updates older than this are dropped, ms. */
  maxAgeMs: number;
}

export const DEFAULT_REPLAY: ReplaySettings = { maxLength: 600, maxAgeMs: 300_000 };

/** One logged update: its number and its value, serialised without `seq`. */
export interface Logged {
  seq: number;
  json: string;
}

/** What the log holds after `since`: every update, or (beyond the log) how far the symbol is. */
export type Replay = { complete: true; updates: Logged[] } | { complete: false; latest: number };

/** A counter of a symbol unused this long is forgotten (its next update is 1 again), ms. */
const SEQ_IDLE_MS = 7 * 24 * 3600_000;

/** KEYS: counter, log. ARGV: json, maxLength, maxAgeMs, counter idle ms → the update's seq. */
const APPEND = `
local seq = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 's', seq, 'v', ARGV[1])
redis.call('XTRIM', KEYS[2], 'MINID', '~', now - tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]) * 2)
return seq
`;

/** KEYS: counter, log. ARGV: age cutoff ms → {latest seq, entries…} of the log, oldest first. */
const READ = `
local latest = tonumber(redis.call('GET', KEYS[1]) or '0')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local entries = redis.call('XRANGE', KEYS[2], now - tonumber(ARGV[1]), '+')
return {latest, entries}
`;

/** In process: counters and logs of this process alone. */
class LocalLog {
  readonly #seq = new Map<string, number>();
  readonly #log = new Map<string, { seq: number; json: string; at: number }[]>();
  readonly #settings: ReplaySettings;
  readonly #now: () => number;

  constructor(settings: ReplaySettings, now: () => number) {
    this.#settings = settings;
    this.#now = now;
  }

  /** `floor`: the last seq this process has seen of the symbol (from Redis before it went down). */
  append(id: string, json: string, floor: number): number {
    const seq = Math.max(this.#seq.get(id) ?? 0, floor) + 1;
    this.#seq.set(id, seq);
    const at = this.#now();
    let log = this.#log.get(id);
    if (log === undefined) {
      log = [];
      this.#log.set(id, log);
    }
    log.push({ seq, json, at });
    this.#trim(log, at);
    return seq;
  }

  latest(id: string): number {
    return this.#seq.get(id) ?? 0;
  }

  read(id: string): { latest: number; updates: Logged[] } {
    const log = this.#log.get(id) ?? [];
    this.#trim(log, this.#now());
    return { latest: this.latest(id), updates: log.map(({ seq, json }) => ({ seq, json })) };
  }

  /** The log of a symbol nobody subscribes to any more goes (its counter stays). */
  forget(id: string): void {
    this.#log.delete(id);
  }

  #trim(log: { at: number }[], now: number): void {
    let drop = Math.max(0, log.length - this.#settings.maxLength);
    while (drop < log.length && now - log[drop].at > this.#settings.maxAgeMs) drop += 1;
    if (drop > 0) log.splice(0, drop);
  }
}

export interface SequencerOptions {
  settings: ReplaySettings;
  now: () => number;
  redis?: Redis | Cluster;
  health?: RedisHealth;
  timeoutMs?: number;
}

export class Sequencer {
  readonly #o: SequencerOptions;
  readonly #local: LocalLog;

  constructor(options: SequencerOptions) {
    this.#o = options;
    this.#local = new LocalLog(options.settings, options.now);
  }

  get settings(): ReplaySettings {
    return this.#o.settings;
  }

  #keys(channel: Channel, symbol: string): [string, string] {
    const id = `${channel}:${symbol}`;
    return [redisKey('mdqs:ws:seq:', id), redisKey('mdqs:ws:log:', id)];
  }

  #shared(): boolean {
    return this.#o.redis !== undefined && (this.#o.health?.up ?? true);
  }

  /** Numbers and logs one update per [symbol, json, last seq seen]; the seq of each, in order. */
  async append(channel: Channel, values: readonly [string, string, number][]): Promise<number[]> {
    const redis = this.#o.redis;
    const { maxLength, maxAgeMs } = this.#o.settings;
    return Promise.all(values.map(async ([symbol, json, floor]) => {
      if (redis !== undefined && this.#shared()) {
        const seq = await softly(this.#o.health, this.#o.timeoutMs ?? 250, () => redis.eval(APPEND, 2, ...this.#keys(channel, symbol), json, maxLength, maxAgeMs, SEQ_IDLE_MS) as Promise<number>);
        if (seq !== undefined) return Number(seq);
      }
      return this.#local.append(`${channel}:${symbol}`, json, floor);
    }));
  }

  /** The last seq assigned per symbol (0: none yet). */
  async latest(channel: Channel, symbols: readonly string[]): Promise<number[]> {
    const redis = this.#o.redis;
    return Promise.all(symbols.map(async (symbol) => {
      if (redis !== undefined && this.#shared()) {
        const value = await softly(this.#o.health, this.#o.timeoutMs ?? 250, () => redis.get(this.#keys(channel, symbol)[0]));
        if (value !== undefined) return Number(value ?? 0);
      }
      return this.#local.latest(`${channel}:${symbol}`);
    }));
  }

  /** The updates after `since`, or (beyond the log, or the log unreadable) the latest seq. */
  async replay(channel: Channel, symbol: string, since: number): Promise<Replay> {
    let latest: number;
    let updates: Logged[];
    const redis = this.#o.redis;
    const read = redis !== undefined && this.#shared()
      ? await softly(this.#o.health, this.#o.timeoutMs ?? 250, () => redis.eval(READ, 2, ...this.#keys(channel, symbol), this.#o.settings.maxAgeMs) as Promise<[number, [string, string[]][]]>)
      : undefined;
    if (read !== undefined) {
      latest = Number(read[0]);
      updates = read[1].map(([, fields]) => ({ seq: Number(fields[1]), json: fields[3] }));
    } else {
      ({ latest, updates } = this.#local.read(`${channel}:${symbol}`));
    }
    if (since === latest) return { complete: true, updates: [] };
    // A `since` past the latest: the counter started again (idle for a week, or Redis lost it).
    if (since > latest) return { complete: false, latest };
    const after = updates.filter((u) => u.seq > since);
    // Complete only when the log still holds the first update the client missed.
    if (after.length > 0 && after[0].seq === since + 1 && after[after.length - 1].seq === latest) return { complete: true, updates: after };
    return { complete: false, latest };
  }

  forget(channel: Channel, symbol: string): void {
    this.#local.forget(`${channel}:${symbol}`);
  }
}

/** An element with `seq` (and what else `extra` holds) added: `{…}` → `{…,"seq":N}`. */
export function withSeq(json: string, seq: number, extra = ''): string {
  return `${json.slice(0, -1)},"seq":${seq}${extra}}`;
}
