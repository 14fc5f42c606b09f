// Issue 15 item 4 through the real app: raw candles sit in the data cache packed into typed arrays
// (src/cache/candle-codec.ts), and a response built from a data-cache hit is byte for byte the
// response built from the vendor's own arrays.
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildCountingApp, getWithKey, metricValue } from '../helpers/cache-app.ts';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function app() {
  const built = await buildCountingApp();
  apps.push(built.app);
  return built;
}

describe('candles packed in the data cache', () => {
  const cases = [
    ['daily, forward-adjusted', '/v1/klines?symbol=600519.SH&period=1d&count=10&adjust=forward', '/v1/klines?symbol=600519.SH&period=1d&count=40&adjust=forward'],
    ['weekly from daily', '/v1/klines?symbol=00700.HK&period=1d&count=5', '/v1/klines?symbol=00700.HK&period=1w&count=12'],
    ['one-minute bars', '/v1/klines?symbol=AAPL.US&period=1m&count=30', '/v1/klines?symbol=AAPL.US&period=1m&count=90'],
    ['5m bars, another adjustment', '/v1/klines?symbol=600519.SH&period=5m&count=20', '/v1/klines?symbol=600519.SH&period=5m&count=30&adjust=backward'],
  ] as const;

  for (const [name, first, second] of cases) {
    it(`${name}: the answer from a data-cache hit equals the answer from the vendor's arrays`, async () => {
      const warm = await app();
      expect((await getWithKey(warm.app, first)).statusCode).toBe(200);
      const calls = warm.adapter.count('getCandles');
      const fromCache = await getWithKey(warm.app, second);
      expect(fromCache.statusCode).toBe(200);
      // The second URL shares the first one's raw fetch: no new vendor call, a data-cache hit.
      expect(warm.adapter.count('getCandles')).toBe(calls);

      const cold = await app();
      const fromVendor = await getWithKey(cold.app, second);
      expect(fromVendor.statusCode).toBe(200);
      expect(fromCache.body).toBe(fromVendor.body);
      expect(fromCache.json().data.timestamp.length).toBeGreaterThan(0);
    });
  }

  it('the data cache accounts packed bytes: a 256-bar daily fetch costs 15.2 KB, not the old 33 KB estimate', async () => {
    const { app: a } = await app();
    const before = (await metricValue(a, 'mdqs_cache_bytes', { layer: 'data' })) ?? 0;
    expect((await getWithKey(a, '/v1/klines?symbol=600519.SH&period=1d&count=10&adjust=none')).statusCode).toBe(200);
    const after = (await metricValue(a, 'mdqs_cache_bytes', { layer: 'data' })) ?? 0;
    // 256 bars with the sim's prev_close: 272 header + 6 float64 × 2048 + 2 int32 × 1024 = 14,608
    // packed, + 472 overhead + the key. (estimateBytes charged 8 × (32 + 16 × 256) = 33,024.)
    const key = 'candles|sim|600519.SH|1d|||256';
    expect(after - before).toBe(14_608 + 472 + 2 * key.length + 64);
  });
});
