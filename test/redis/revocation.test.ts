// Issue 10.4: a key revoked through one instance is refused by the others within a second
// (keys file rewritten, reload published on Redis, every subscriber re-reads its file).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { stringify } from 'yaml';
import { KeyStore, sha256Hex } from '../../src/access/keys.ts';
import { publishKeyReload, publishKeyReloadTo, subscribeKeyReloads } from '../../src/access/revocation.ts';
import { createSubscriber } from '../../src/redis/connection.ts';
import { buildTestApp } from '../helpers/app.ts';
import { connectedClient, describeRedis, sharedUrl, waitUntil } from './support.ts';

const URL_DB = sharedUrl(13);
const clients: Redis[] = [];
afterAll(() => {
  for (const c of clients) c.disconnect();
});

const plan = { markets: ['CN'], features: ['quotes'], rate_limit: { max: 1000, window_ms: 60_000 }, max_symbols: 10 };
const fileWith = (ids: string[]) => stringify({ plans: { p: plan }, keys: ids.map((id) => ({ id, plan: 'p', sha256: sha256Hex(`${id}-secret`) })) });
const silent = { info: () => undefined, error: () => undefined };

describeRedis('key revocation across instances', () => {
  it('revoked on one instance: refused on the other within one second', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mdqs-keys-'));
    const file = join(dir, 'keys.yaml');
    writeFileSync(file, fileWith(['alice', 'bob']));
    // Two instances, each with its own KeyStore over the same file and its own subscriber.
    const stores = [KeyStore.fromFile(file), KeyStore.fromFile(file)];
    const subscribers = stores.map(() => {
      const s = createSubscriber(URL_DB);
      clients.push(s);
      return s;
    });
    const unsubscribe = stores.map((keys, i) => subscribeKeyReloads({ subscriber: subscribers[i], keys, log: silent }));
    await Promise.all(subscribers.map((s) => (s.status === 'ready' ? undefined : new Promise((r) => s.once('ready', r)))));
    const apps = await Promise.all(stores.map(async (keys) => (await buildTestApp({ keys })).app));
    const publisher = await connectedClient(URL_DB, clients);
    try {
      const get = (i: number, id: string) => apps[i].inject({ url: '/v1/quotes?symbols=600519.SH', headers: { 'x-api-key': `${id}-secret` } });
      expect((await get(1, 'bob')).statusCode).toBe(200);
      // Wait until both subscriptions are live: a publish reaches 2 receivers.
      for (let i = 0; i < 100 && (await publisher.pubsub('NUMSUB', 'mdqs:keys:reload') as [string, number])[1] < 2; i += 1) await new Promise((r) => setTimeout(r, 10));
      // Instance 0 revokes bob (what `cli revoke-key` does): rewrite the file, publish.
      writeFileSync(file, fileWith(['alice']));
      stores[0].reload();
      const revokedAt = Date.now();
      expect(await publishKeyReload(publisher)).toBe(2);
      let status = 200;
      while (status !== 401 && Date.now() - revokedAt < 1000) {
        status = (await get(1, 'bob')).statusCode;
        if (status !== 401) await new Promise((r) => setTimeout(r, 10));
      }
      expect(status).toBe(401);
      expect(Date.now() - revokedAt).toBeLessThan(1000);
      expect((await get(1, 'alice')).statusCode).toBe(200);
      expect((await get(0, 'bob')).statusCode).toBe(401);
      // The CLI's way: a connection of its own, one publish; both instances reload again.
      writeFileSync(file, fileWith(['alice', 'bob']));
      expect(await publishKeyReloadTo(URL_DB)).toBe(2);
      await waitUntil(async () => (await get(0, 'bob')).statusCode === 200 && (await get(1, 'bob')).statusCode === 200, 'bob back', 1000);
      await expect(publishKeyReloadTo('redis://127.0.0.1:1', 300)).rejects.toThrow();
    } finally {
      for (const u of unsubscribe) await u();
      for (const app of apps) await app.close();
    }
  });
});
