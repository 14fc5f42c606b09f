// Scale-out: two instances sharing Redis count one key against one bucket (real Redis).
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { buildTestApp, KEYS } from '../helpers/app.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('rate limits shared through Redis', () => {
  const clients: Redis[] = [];
  afterAll(() => {
    for (const c of clients) c.disconnect();
  });

  it('a key spends one bucket across instances, whichever way the key comes', async () => {
    const make = () => {
      const client = new Redis(REDIS_URL, { enableOfflineQueue: true, maxRetriesPerRequest: 1 });
      clients.push(client);
      return client;
    };
    const admin = make();
    for (const key of await admin.keys('mdqs:v2:rl:*')) await admin.del(key);
    const a = await buildTestApp({ redis: make() });
    const b = await buildTestApp({ redis: make() });
    try {
      const url = '/v1/quotes?symbols=600519.SH';
      const statuses: number[] = [];
      const remaining: string[] = [];
      for (const [app, viaQuery] of [[a.app, false], [b.app, true], [a.app, true], [b.app, false]] as const) {
        const res = viaQuery
          ? await app.inject({ url: `${url}&api_key=${KEYS.tiny}` })
          : await app.inject({ url, headers: { 'x-api-key': KEYS.tiny } });
        statuses.push(res.statusCode);
        remaining.push(String(res.headers['x-ratelimit-remaining']));
      }
      // The tiny plan allows 3 per minute: the 4th request, on either instance, is refused.
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(remaining).toEqual(['2', '1', '0', '0']);
      const keys = await admin.keys('mdqs:v2:rl:*');
      expect(keys).toEqual(['mdqs:v2:rl:{key:tiny}']);
      // The key itself never reaches Redis: only its id.
      expect(keys.join()).not.toContain(KEYS.tiny);
      const ready = await a.app.inject({ url: '/readyz' });
      expect(ready.json()).toMatchObject({ redis: 'ok' });
    } finally {
      await a.app.close();
      await b.app.close();
    }
  });
});
