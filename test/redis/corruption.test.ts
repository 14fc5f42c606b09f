// Issue 28, item 4, through real processes: two instances (`node src/server.ts`) share a Redis of
// their own. Instance A answers a request and fills the Redis tier (the finished response under
// mdqs:resp:, the data entry under mdqs:data:); the test then corrupts those values in Redis as
// a fault would (16 bytes flipped in the middle; one digit of the listing date changed, which
// still parses as JSON); instance B, cold, gets the same request. Every entry is verified before
// use, so B never serves the corrupted bytes: it answers what the vendor answers, counts each bad
// entry in mdqs_cache_corrupt_total{layer="redis"} and logs it.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ServerProcess } from '../e2e/server-process.ts';
import { fleetDir, startFleet, writeOneKey, type Fleet } from './processes.ts';
import { describeRedis, waitUntil } from './support.ts';

const { dir, keysFile } = fleetDir('mdqs-corrupt-');
const KEY = 'corruption-test-key';

let fleet: Fleet;
let admin: Redis;
let servers: ServerProcess[] = [];

beforeAll(async () => {
  writeOneKey(keysFile, 'corruption', KEY, ['instruments', 'quotes']);
  fleet = await startFleet(2, { dir, keysFile });
  ({ servers, admin } = fleet);
}, 60_000);

afterAll(() => fleet?.stop());

async function get(server: ServerProcess, path: string): Promise<{ status: number; body: string; cache: string | null; tier: string | null }> {
  const res = await fetch(`${server.base}${path}`, { headers: { 'x-api-key': KEY } });
  return { status: res.status, body: await res.text(), cache: res.headers.get('x-cache'), tier: res.headers.get('x-cache-tier') };
}

async function corruptCount(server: ServerProcess): Promise<number> {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('mdqs_cache_corrupt_total{layer="redis"}'));
  return line === undefined ? Number.NaN : Number(line.split(' ').pop());
}

/** The Redis keys of one instrument request (its finished response and its data entry). */
async function entriesFor(symbol: string): Promise<string[]> {
  const keys = [...await admin.keys('mdqs:v2:resp:*'), ...await admin.keys('mdqs:v2:data:*')];
  const mine = keys.filter((k) => k.includes(symbol));
  expect(mine.some((k) => k.startsWith('mdqs:v2:resp:{'))).toBe(true);
  expect(mine.some((k) => k.startsWith('mdqs:v2:data:{'))).toBe(true);
  return mine;
}

describeRedis('corrupted Redis entries are never served', () => {
  for (const [what, symbol, corrupt] of [
    ['16 bytes flipped in the middle of the value', '600519.SH', (value: Buffer) => {
      const at = Math.floor(value.length / 2) - 8;
      for (let i = at; i < at + 16; i += 1) value[i] ^= 0xff;
    }],
    ['one digit of the listing date changed (still valid JSON)', '000001.SZ', (value: Buffer) => {
      const at = value.indexOf('"listing_date":"');
      expect(at).toBeGreaterThan(0);
      const digit = at + '"listing_date":"'.length + 2; // the decade: 1991 → 1981
      value[digit] = value[digit] === 0x39 ? 0x30 : value[digit] + 1;
    }],
  ] as const) {
    it(`${what}: the other instance answers the vendor's value, counts and logs the bad entries`, async () => {
      const path = `/v1/instruments?symbols=${symbol}`;
      const first = await get(servers[0], path);
      expect(first.status).toBe(200);
      const before = await corruptCount(servers[1]);
      const keys = await entriesFor(symbol);
      for (const key of keys) {
        const value = (await admin.getBuffer(key))!;
        corrupt(value);
        await admin.set(key, value, 'KEEPTTL');
      }
      const second = await get(servers[1], path);
      expect(second.status).toBe(200);
      expect(() => JSON.parse(second.body)).not.toThrow();
      expect(second.body).toBe(first.body);
      expect(second.tier).not.toBe('redis');
      // Each bad entry counted at least once (the data entry is read again under the fill lock).
      expect(await corruptCount(servers[1])).toBeGreaterThanOrEqual(before + keys.length);
      await servers[1].waitFor((line) => line.msg.startsWith('corrupted cache entry ignored') && line.layer === 'redis', 'the corruption log line');
      // The good value written back by the refill is served from Redis again by the first instance's peers.
      await waitUntil(async () => (await get(servers[1], path)).body === first.body, 'a good answer again', 2000);
    });
  }
});
