// Sequence numbers and the replay log. Every update of a symbol on a channel gets `seq`, an
// integer increasing per channel and symbol, assigned once: by the instance that claimed the
// symbol's tick (fleet.ts), so clients on every instance see the same `seq` for the same update.
// Each update is also appended to a bounded replay log, from which a client that resubscribes
// with the last `seq` it saw gets what it missed (hub.ts).
//
// With Redis (shared): per channel and symbol one counter (`mdqs:v2:ws:seq:{<channel>:<symbol>}`,
// INCR) and one Redis Stream (`mdqs:v2:ws:log:{<channel>:<symbol>}`, XADD with MAXLEN ~ for
// length and XTRIM MINID ~ for age, XREVRANGE back to a resume's `since`), a tick's updates in
// one script call (one per update on a Cluster) so each number and its log entry go together.
// Without Redis, or while it does not answer: the same in process, numbering on from the last
// seq the instance saw; Redis's counters then go on after those numbers (the script's floor), and
// a replay on this instance reads both logs.
import { createHash } from 'node:crypto';
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

/**
 * KEYS: counter, log per update (pairs). ARGV: maxLength, maxAgeMs, counter idle ms, then json,
 * floor per update → the seq of each. One call per tick (on a Redis Cluster, where the symbols'
 * keys live in different slots, one call per update). `floor`: the last seq the calling instance
 * has seen of the symbol; the counter never numbers at or below it, so numbers given while Redis
 * did not answer (in process, from the floor on) are not given again to other values.
 */
const APPEND = `
local maxLength, maxAge, idle = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, #KEYS, 2 do
  local j = 4 + (i - 1)
  local floor = tonumber(ARGV[j + 1])
  local seq = redis.call('INCR', KEYS[i])
  if seq <= floor then
    seq = floor + 1
    redis.call('SET', KEYS[i], seq)
  end
  redis.call('PEXPIRE', KEYS[i], idle)
  redis.call('XADD', KEYS[i + 1], 'MAXLEN', '~', maxLength, '*', 's', seq, 'v', ARGV[j])
  redis.call('XTRIM', KEYS[i + 1], 'MINID', '~', now - maxAge)
  redis.call('PEXPIRE', KEYS[i + 1], maxAge * 2)
  out[#out + 1] = seq
end
return out
`;

/**
 * KEYS: counter, log per symbol (pairs). ARGV: age cutoff ms, then since per symbol → per symbol
 * {latest seq, seq, json, seq, json, …}: the log's updates after `since`, oldest first, read from
 * the newest back (a resume reads what it missed, not the whole log).
 */
const READ = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local oldest = tostring(now - tonumber(ARGV[1]))
local out = {}
for i = 1, #KEYS, 2 do
  local since = tonumber(ARGV[2 + (i - 1) / 2])
  local found = {}
  local upper = '+'
  local done = false
  while not done do
    local chunk = redis.call('XREVRANGE', KEYS[i + 1], upper, oldest, 'COUNT', 64)
    for _, entry in ipairs(chunk) do
      local seq = tonumber(entry[2][2])
      if seq <= since then
        done = true
        break
      end
      found[#found + 1] = {seq, entry[2][4]}
    end
    if #chunk < 64 then done = true end
    if not done then upper = '(' .. chunk[#chunk][1] end
  end
  local one = {tonumber(redis.call('GET', KEYS[i]) or '0')}
  for k = #found, 1, -1 do
    one[#one + 1] = found[k][1]
    one[#one + 1] = found[k][2]
  end
  out[#out + 1] = one
end
return out
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

/** One symbol of a resume: the last seq the client saw, and the seq the replay must reach at least. */
export interface ReplayRequest {
  symbol: string;
  since: number;
  /**
   * The last seq this instance has applied of the symbol when the resume starts (the updates
   * after it reach the client live): the replay must reach it, or it is not complete.
   */
  needed?: number;
}

type Evaluator = Pick<Redis, 'eval' | 'evalsha'> & { isCluster?: boolean; status?: string };

/** A script by its SHA1 (EVALSHA), loaded with EVAL when the server does not know it yet. */
async function run<T>(redis: Evaluator, script: { text: string; sha: string }, keys: string[], args: (string | number)[]): Promise<T> {
  try {
    return await (redis.evalsha(script.sha, keys.length, ...keys, ...args) as Promise<T>);
  } catch (error) {
    if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
    return redis.eval(script.text, keys.length, ...keys, ...args) as Promise<T>;
  }
}

/** Symbols per replay read: Redis serves ticks' appends between a big resume's reads. */
const READ_BATCH = 100;
/** A tick's numbering or a resume's read gives up after this (or 4 command ceilings), ms. */
const CEILING_MS = 2_000;

/** `promise`'s value, or undefined when it fails or takes longer than `ms` (told to `health`). */
async function within<T>(ms: number, promise: Promise<T>, health?: RedisHealth): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('redis timeout')), ms); })]);
  } catch (error) {
    health?.failed(error);
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

const script = (text: string) => ({ text, sha: createHash('sha1').update(text).digest('hex') });
const APPEND_SCRIPT = script(APPEND);
const READ_SCRIPT = script(READ);

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

  /**
   * Runs `script` over `items`: in calls of `batch` items (on a Cluster, where the symbols' keys
   * live in different slots, one per item); undefined: Redis unavailable, or a call failed or
   * passed its ceiling. Tried while the connection is up even when another command's timeout
   * counted Redis as down: a number from Redis is the fleet's, one given here may be given by
   * another instance too. The ceiling is longer than a command's (a tick waits for its numbers
   * rather than number alone); passing it counts Redis as down, except for a resume's read
   * (`read`), whose answer is the missed updates of every symbol.
   */
  async #call<T, I>(script: { text: string; sha: string }, items: readonly I[], keysOf: (item: I) => string[], head: (string | number)[], argsOf: (item: I) => (string | number)[], read = false): Promise<T[] | undefined> {
    const redis = this.#o.redis as Evaluator | undefined;
    if (redis === undefined || items.length === 0 || !(this.#shared() || redis.status === 'ready')) return undefined;
    const health = this.#o.health;
    const ceiling = Math.max(CEILING_MS, 4 * (this.#o.timeoutMs ?? 250));
    const batch = redis.isCluster === true ? 1 : read ? READ_BATCH : items.length;
    const groups: (readonly I[])[] = [];
    for (let i = 0; i < items.length; i += batch) groups.push(items.slice(i, i + batch));
    const call = (group: readonly I[]) => run<T[]>(redis, script, group.flatMap(keysOf), [...head, ...group.flatMap(argsOf)]);
    const answers = await Promise.all(groups.map((group) => within(ceiling, call(group), read ? undefined : health)));
    if (answers.some((a) => a === undefined)) return undefined;
    return (answers as T[][]).flat();
  }

  /**
   * Numbers and logs one update per [symbol, json, last seq seen]; the seq of each, in order. With
   * Redis one script call for the lot; Redis unavailable (or not answering in time): in process,
   * each from the last seq seen on, logged here (a resume on this instance reads it too).
   */
  async append(channel: Channel, values: readonly [string, string, number][]): Promise<number[]> {
    const { maxLength, maxAgeMs } = this.#o.settings;
    const seqs = await this.#call<number, readonly [string, string, number]>(APPEND_SCRIPT, values, ([symbol]) => this.#keys(channel, symbol), [maxLength, maxAgeMs, SEQ_IDLE_MS], ([, json, floor]) => [json, floor]);
    if (seqs !== undefined) return seqs.map(Number);
    return values.map(([symbol, json, floor]) => this.#local.append(`${channel}:${symbol}`, json, floor));
  }

  /** The last seq assigned per symbol (0: none yet). */
  async latest(channel: Channel, symbols: readonly string[]): Promise<number[]> {
    const redis = this.#o.redis;
    if (redis !== undefined && this.#shared() && symbols.length > 0) {
      const values = await softly(this.#o.health, this.#o.timeoutMs ?? 250, () => Promise.all(symbols.map((symbol) => redis.get(this.#keys(channel, symbol)[0]))));
      if (values !== undefined) return values.map((value, i) => Math.max(Number(value ?? 0), this.#local.latest(`${channel}:${symbols[i]}`)));
    }
    return symbols.map((symbol) => this.#local.latest(`${channel}:${symbol}`));
  }

  /** The updates after `since`, or (beyond the log, or the log unreadable) the latest seq. */
  async replay(channel: Channel, symbol: string, since: number, needed = 0): Promise<Replay> {
    return (await this.replayMany(channel, [{ symbol, since, needed }]))[0];
  }

  /**
   * Per symbol the updates after `since` (one Redis call for them all), complete only when they
   * run without a hole from `since + 1` to the latest seq (and to `needed`): the Redis log and,
   * for numbers given here while Redis did not answer, this process's log together. Otherwise
   * (beyond the log, or the log unreadable) the latest seq, never a silent jump.
   */
  async replayMany(channel: Channel, requests: readonly ReplayRequest[]): Promise<Replay[]> {
    const read = await this.#call<(number | string)[], ReplayRequest>(READ_SCRIPT, requests, (r) => this.#keys(channel, r.symbol), [this.#o.settings.maxAgeMs], (r) => [r.since], true);
    return requests.map(({ symbol, since, needed = 0 }, i) => {
      const local = this.#local.read(`${channel}:${symbol}`);
      const bySeq = new Map<number, string>();
      for (const u of local.updates) if (u.seq > since) bySeq.set(u.seq, u.json);
      let latest = Math.max(local.latest, needed);
      const shared = read?.[i];
      if (shared !== undefined) {
        latest = Math.max(latest, Number(shared[0]));
        for (let k = 1; k + 1 < shared.length; k += 2) bySeq.set(Number(shared[k]), String(shared[k + 1]));
      }
      if (since === latest) return { complete: true, updates: [] };
      // A `since` past the latest: the counter started again (idle for a week, or Redis lost it).
      if (since > latest) return { complete: false, latest };
      const updates: Logged[] = [];
      for (let seq = since + 1; seq <= latest; seq++) {
        const json = bySeq.get(seq);
        // A hole: the log no longer (or never) held that update.
        if (json === undefined) return { complete: false, latest };
        updates.push({ seq, json });
      }
      return { complete: true, updates };
    });
  }

  forget(channel: Channel, symbol: string): void {
    this.#local.forget(`${channel}:${symbol}`);
  }
}

/** An element with `seq` (and what else `extra` holds) added: `{…}` → `{…,"seq":N}`. */
export function withSeq(json: string, seq: number, extra = ''): string {
  return `${json.slice(0, -1)},"seq":${seq}${extra}}`;
}
