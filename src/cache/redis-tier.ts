// The Redis tier (docs/architecture.md#scale-out-through-redis): the shared second tier behind the in-process one.
//
//   createRedisTier<V>({ redis, prefix, codec, now, timeoutMs, health?, name? }): Tier<V>
//   responseCodec: Codec<StoredResponse>     finished responses, compact binary layout
//   jsonCodec<V>(): Codec<V>                 data entries (JSON once per Redis hit; the hit then
//                                            fills the memory tier, so later hits cost nothing)
//
// One key per entry, redisKey(prefix, key) (e.g. `mdqs:v2:data:{<key>}`: versioned and hash-tagged,
// redis/keys.ts), one GET or one SET: the value is a 37-byte header followed by the codec's
// bytes. Header: version (u8 = 2), CRC-32 (u32 LE, zlib.crc32 of every byte after it), storedAt,
// ttl, swr, sie (f64 LE each, ms). Redis expires the key at ttl + max(swr, sie) after storedAt
// (PX), so Redis never holds an entry past its last window, and the state (fresh / stale /
// expired) is computed here from the header, on our clock.
// Every entry read is verified before use: a checksum that does not match (bytes flipped or
// changed in Redis, a truncated value) is counted in mdqs_cache_corrupt_total{layer="redis"},
// logged, and read as a miss, so corrupted bytes are never served. Entries of another version
// (version 1 had no checksum) are plain misses and are overwritten by the next fill. A checksum
// stops corruption, not an attacker: whoever can write to Redis can write a valid entry, so
// Redis needs a password or ACLs (docs/fleet.md#verified-entries-and-who-may-write).
// Any error, timeout or known-down Redis is a miss (get) or a no-op (set, delete): nothing throws,
// nothing waits past `timeoutMs`.
//
// Memory is bounded by Redis itself: run it with `maxmemory <bytes>` and
// `maxmemory-policy allkeys-lru` (docs/fleet.md#redis-memory).
import { crc32 } from 'node:zlib';
import type { Redis } from 'ioredis';
import { softly, type RedisHealth } from '../redis/health.ts';
import { redisKey } from '../redis/keys.ts';
import { countCorrupt } from './corruption.ts';
import { tierState, type Tier, type TierHit, type TierSetOptions } from './tier.ts';

export interface Codec<V> {
  encode(value: V): Buffer;
  decode(bytes: Buffer): V;
}

export interface RedisTierOptions<V> {
  redis: Redis;
  /** Key prefix, e.g. 'mdqs:resp:' or 'mdqs:data:'. */
  prefix: string;
  codec: Codec<V>;
  now: () => number;
  /** Hard ceiling of one GET/SET, ms. */
  timeoutMs: number;
  /** Skip Redis at once while it is known down (see redis/health.ts). */
  health?: RedisHealth;
  name?: string;
  /** Where a corrupted entry is logged (rate-limited: cache/corruption.ts). */
  log?: { warn(obj: object, msg: string): void };
}

const VERSION = 2;
/** Where the checksummed bytes start: after the version and the CRC. */
const SUMMED_FROM = 1 + 4;
const HEADER_BYTES = SUMMED_FROM + 4 * 8;

export function encodeEntry(payload: Buffer, storedAt: number, ttlMs: number, swrMs: number, sieMs: number): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  out.writeUInt8(VERSION, 0);
  out.writeDoubleLE(storedAt, SUMMED_FROM);
  out.writeDoubleLE(ttlMs, SUMMED_FROM + 8);
  out.writeDoubleLE(swrMs, SUMMED_FROM + 16);
  out.writeDoubleLE(sieMs, SUMMED_FROM + 24);
  payload.copy(out, HEADER_BYTES);
  out.writeUInt32LE(crc32(out.subarray(SUMMED_FROM)), 1);
  return out;
}

/** Whether an entry of this version is intact: its CRC-32 matches every byte after it. */
export function entryIntact(raw: Buffer): boolean {
  return raw.length >= HEADER_BYTES && raw.readUInt32LE(1) === crc32(raw.subarray(SUMMED_FROM));
}

export function createRedisTier<V>(options: RedisTierOptions<V>): Tier<V> {
  const { redis, prefix, codec, now, timeoutMs, health } = options;
  return {
    name: options.name ?? 'redis',
    async get(key): Promise<TierHit<V> | undefined> {
      const raw = await softly(health, timeoutMs, () => redis.getBuffer(redisKey(prefix, key)));
      if (raw === undefined || raw === null || raw.length < 1 || raw.readUInt8(0) !== VERSION) return undefined;
      if (!entryIntact(raw)) {
        countCorrupt('redis', options.log, { key: redisKey(prefix, key), bytes: raw.length });
        return undefined;
      }
      const storedAt = raw.readDoubleLE(SUMMED_FROM);
      const windows = { ttlMs: raw.readDoubleLE(SUMMED_FROM + 8), swrMs: raw.readDoubleLE(SUMMED_FROM + 16), sieMs: raw.readDoubleLE(SUMMED_FROM + 24) };
      const at = now();
      const state = tierState(windows, storedAt, at);
      if (state === undefined) return undefined;
      let value: V;
      try {
        value = codec.decode(raw.subarray(HEADER_BYTES));
      } catch {
        return undefined;
      }
      return { value, state, age: Math.max(0, at - storedAt), storedAt, windows };
    },
    async set(key, value, set: TierSetOptions) {
      const storedAt = set.storedAt ?? now();
      const ttlMs = Math.max(0, set.ttlMs);
      const swrMs = Math.max(0, set.swrMs);
      const sieMs = Math.max(0, set.sieMs);
      // A value refilled from below keeps its age: Redis drops it when its last window ends.
      const lifeMs = Math.ceil(storedAt + ttlMs + Math.max(swrMs, sieMs) - now());
      if (lifeMs <= 0) return;
      let payload: Buffer;
      try {
        payload = codec.encode(value);
      } catch {
        return;
      }
      await softly(health, timeoutMs, () => redis.set(redisKey(prefix, key), encodeEntry(payload, storedAt, ttlMs, swrMs, sieMs), 'PX', lifeMs));
    },
    async delete(key) {
      await softly(health, timeoutMs, () => redis.del(redisKey(prefix, key)));
    },
  };
}

/** A finished response as the Redis tier stores it. */
export interface StoredResponse {
  body: Buffer;
  gzip?: Buffer;
  etag: string;
  /** Headers and small facts (x-upstream, x-missing, data age…), strings only. */
  meta: Record<string, string>;
}

const NO_GZIP = 0xffffffff;

// An exact-size, unpooled copy: a view into the reply buffer would pin it whole in the memory tier.
function own(view: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(view.length);
  view.copy(copy);
  return copy;
}

/**
 * Layout: u32 body length, body, u32 gzip length (0xffffffff: none), gzip, u16 etag length, etag,
 * u16 meta count, then per entry u16 name length, name, u32 value length, value (UTF-8, LE).
 */
export const responseCodec: Codec<StoredResponse> = {
  encode(response) {
    const etag = Buffer.from(response.etag, 'utf8');
    const meta = Object.entries(response.meta).map(([k, v]) => [Buffer.from(k, 'utf8'), Buffer.from(v, 'utf8')] as const);
    const gzipLength = response.gzip?.length ?? 0;
    let size = 4 + response.body.length + 4 + gzipLength + 2 + etag.length + 2;
    for (const [k, v] of meta) size += 2 + k.length + 4 + v.length;
    const out = Buffer.allocUnsafe(size);
    let at = out.writeUInt32LE(response.body.length, 0);
    at += response.body.copy(out, at);
    at = out.writeUInt32LE(response.gzip === undefined ? NO_GZIP : gzipLength, at);
    if (response.gzip !== undefined) at += response.gzip.copy(out, at);
    at = out.writeUInt16LE(etag.length, at);
    at += etag.copy(out, at);
    at = out.writeUInt16LE(meta.length, at);
    for (const [k, v] of meta) {
      at = out.writeUInt16LE(k.length, at);
      at += k.copy(out, at);
      at = out.writeUInt32LE(v.length, at);
      at += v.copy(out, at);
    }
    return out;
  },
  decode(bytes) {
    let at = 0;
    const take = (length: number) => {
      if (at + length > bytes.length) throw new RangeError('truncated response entry');
      const view = bytes.subarray(at, at + length);
      at += length;
      return view;
    };
    const u32 = () => take(4).readUInt32LE(0);
    const u16 = () => take(2).readUInt16LE(0);
    const body = own(take(u32()));
    const gzipLength = u32();
    const gzip = gzipLength === NO_GZIP ? undefined : own(take(gzipLength));
    const etag = take(u16()).toString('utf8');
    const count = u16();
    const meta: Record<string, string> = {};
    for (let i = 0; i < count; i += 1) {
      const name = take(u16()).toString('utf8');
      meta[name] = take(u32()).toString('utf8');
    }
    return gzip === undefined ? { body, etag, meta } : { body, gzip, etag, meta };
  },
};

/** JSON for data entries; `undefined` (a negative entry) round-trips as an empty payload. */
export function jsonCodec<V>(): Codec<V> {
  return {
    encode: (value) => (value === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(value), 'utf8')),
    decode: (bytes) => (bytes.length === 0 ? undefined : JSON.parse(bytes.toString('utf8'))) as V,
  };
}
