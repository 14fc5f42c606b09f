// Issue 14.8: failed authentications are limited per client address (30 a minute by default), in
// one process and shared through Redis, without locking a known valid key out of a shared address.
import { afterAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { addressBucket } from '../../src/access/auth-failures.ts';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildTestApp } from '../helpers/app.ts';
import { connectedClient, describeRedis, sharedUrl } from './support.ts';

const URL_DB = sharedUrl(12);
const clients: Redis[] = [];
afterAll(() => {
  for (const c of clients) c.disconnect();
});

const keys = () => new KeyStore(parseKeysFile({
  plans: { p: { markets: ['CN', 'HK', 'US'], features: ['quotes'], rate_limit: { max: 1000, window_ms: 60_000 }, max_symbols: 10 } },
  keys: [{ id: 'good', plan: 'p', sha256: sha256Hex('good-key') }, { id: 'other', plan: 'p', sha256: sha256Hex('other-key') }],
}));
const URL = '/v1/quotes?symbols=600519.SH';
const GUESSER = '203.0.113.7';

describeRedis('failed authentications per address', () => {
  it('30 wrong keys a minute get 401, then 429 with retry_after_ms; a known valid key still works', async () => {
    const { app } = await buildTestApp({ keys: keys() });
    try {
      const get = (key: string | undefined, remoteAddress = GUESSER) =>
        app.inject({ url: URL, remoteAddress, headers: key === undefined ? {} : { 'x-api-key': key } });
      // The valid key was used from this address (a NAT shared with the guesser) before the block.
      expect((await get('good-key')).statusCode).toBe(200);
      const statuses: number[] = [];
      for (let i = 0; i < 32; i += 1) statuses.push((await get(`wrong-${i}`)).statusCode);
      expect(statuses).toEqual([...Array(30).fill(401), 429, 429]);
      const blocked = await get('wrong-again');
      const body = blocked.json();
      expect(body).toMatchObject({ code: 429, error: 'RATE_LIMITED' });
      expect(body.retry_after_ms).toBe(60_000);
      expect(blocked.headers['retry-after']).toBe('60');
      // A missing key is not a guess: still 401.
      expect((await get(undefined)).statusCode).toBe(401);
      // Known from this address: served. A key never seen from it answers like a wrong one (429),
      // so a correct guess is indistinguishable while the address is blocked.
      expect((await get('good-key')).statusCode).toBe(200);
      expect((await get('other-key')).statusCode).toBe(429);
      // Other addresses are not affected at all.
      expect((await get('other-key', '198.51.100.1')).statusCode).toBe(200);
      expect((await get('wrong', '198.51.100.1')).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('shared through Redis: failures on one instance count on the other', async () => {
    const admin = await connectedClient(URL_DB, clients);
    await admin.flushdb();
    const ks = keys();
    const a = await buildTestApp({ keys: ks, redis: await connectedClient(URL_DB, clients) });
    const b = await buildTestApp({ keys: ks, redis: await connectedClient(URL_DB, clients) });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 31; i += 1) {
        const app = i % 2 === 0 ? a.app : b.app;
        statuses.push((await app.inject({ url: URL, remoteAddress: GUESSER, headers: { 'x-api-key': `wrong-${i}` } })).statusCode);
      }
      expect(statuses).toEqual([...Array(30).fill(401), 429]);
      expect(await admin.llen(`mdqs:v2:af:{ip:${GUESSER}}`)).toBe(30);
      // A valid key first seen on instance a from this address (before the block) is known on b too.
      await admin.del(`mdqs:v2:af:{ip:${GUESSER}}`);
      expect((await a.app.inject({ url: URL, remoteAddress: GUESSER, headers: { 'x-api-key': 'good-key' } })).statusCode).toBe(200);
      for (let i = 0; i < 30; i += 1) await a.app.inject({ url: URL, remoteAddress: GUESSER, headers: { 'x-api-key': `wrong-${i}` } });
      await new Promise((r) => setTimeout(r, 50));
      expect((await b.app.inject({ url: URL, remoteAddress: GUESSER, headers: { 'x-api-key': 'good-key' } })).statusCode).toBe(200);
      expect((await b.app.inject({ url: URL, remoteAddress: GUESSER, headers: { 'x-api-key': 'other-key' } })).statusCode).toBe(429);
    } finally {
      await a.app.close();
      await b.app.close();
    }
  });
});

describe('the budget unit', () => {
  it('IPv4 as is, IPv6 by /64, IPv4-mapped IPv6 as IPv4', () => {
    expect(addressBucket('203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucket('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:db8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
    expect(addressBucket('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressBucket('::ffff:198.51.100.1')).toBe('198.51.100.1');
  });
});
