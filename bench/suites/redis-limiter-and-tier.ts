// `node bench/suites/redis-limiter-and-tier.ts` (≤ 90 s): the scale-out figures against real Redis (REDIS_URL, default
// 127.0.0.1:6379, database 15, flushed).
//   1. Rate-limit accuracy across 3 instances: three clients, each with the limiter the app uses,
//      hammer one key concurrently; admitted ÷ limit (target 1.00). Then a sliding check: a 1 s
//      window under continuous load for 3 s, the most admissions seen in any 1 s interval.
//   2. Redis-tier get latency vs the in-process tier, same bytes (a 2 KiB and a 64 KiB response
//      entry with gzip), sequential p50/p99 and throughput at 32 concurrent gets.
import { gzipSync } from 'node:zlib';
import { Redis } from 'ioredis';
import { createRedisLimiter } from '../../src/access/rate-limit.ts';
import { createByteCache } from '../../src/cache/byte-cache.ts';
import { createRedisTier, responseCodec, type StoredResponse } from '../../src/cache/redis-tier.ts';
import { createRedisClient } from '../../src/redis/connection.ts';

const base = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
base.pathname = '/15';
const log = (line: string) => process.stdout.write(`${line}\n`);

async function connected(): Promise<Redis> {
  const client = createRedisClient(base.toString(), { commandTimeoutMs: 2000 });
  if (client.status !== 'ready') await new Promise((r) => client.once('ready', r));
  return client;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

async function rateLimitAccuracy(clients: Redis[]): Promise<void> {
  const limiters = clients.map((redis) => createRedisLimiter({ redis, prefix: 'bench:rl:', timeoutMs: 5000 }));
  log('\n## Rate-limit accuracy, 3 instances sharing Redis');
  log('| limit | requests | admitted | admitted ÷ limit |');
  log('|---:|---:|---:|---:|');
  for (const [limit, requests] of [[100, 1000], [1000, 5000], [5000, 15000]] as const) {
    await clients[0].del('bench:rl:{acc}');
    let admitted = 0;
    let next = 0;
    // 64 concurrent callers per instance, like 64 keep-alive connections each.
    await Promise.all(limiters.flatMap((limiter) => Array.from({ length: 64 }, async () => {
      while (next < requests) {
        next += 1;
        if ((await limiter.consume('acc', limit, 60_000))?.allowed) admitted += 1;
      }
    })));
    log(`| ${limit} | ${requests} | ${admitted} | ${(admitted / limit).toFixed(2)} |`);
  }
  // Sliding: limit 100 per 1 s, continuous load for 3 s; the densest 1 s interval of admissions.
  await clients[0].del('bench:rl:{slide}');
  const admittedAt: number[] = [];
  const end = Date.now() + 3000;
  await Promise.all(limiters.flatMap((limiter) => Array.from({ length: 8 }, async () => {
    while (Date.now() < end) {
      const d = await limiter.consume('slide', 100, 1000);
      if (d?.allowed) admittedAt.push(d.at);
      else await new Promise((r) => setTimeout(r, 2));
    }
  })));
  admittedAt.sort((a, b) => a - b);
  let densest = 0;
  for (let i = 0, j = 0; i < admittedAt.length; i += 1) {
    while (admittedAt[i] - admittedAt[j] >= 1000) j += 1;
    densest = Math.max(densest, i - j + 1);
  }
  log(`\nSliding window, limit 100/s for 3 s over 3 instances: ${admittedAt.length} admitted, densest 1 s interval (Redis clock): ${densest}`);
}

function entry(bytes: number): StoredResponse {
  const rows = Array.from({ length: Math.ceil(bytes / 64) }, (_, i) => ({ t: 1_700_000_000_000 + i * 60_000, c: 100 + (i % 17) }));
  const body = Buffer.from(JSON.stringify({ data: rows }).slice(0, bytes));
  return { body, gzip: gzipSync(body), etag: '"bench"', meta: { 'x-upstream': 'sim' } };
}

async function tierLatency(redis: Redis): Promise<void> {
  const now = () => Date.now();
  const tier = createRedisTier<StoredResponse>({ redis, prefix: 'bench:t:', codec: responseCodec, now, timeoutMs: 2000 });
  const memory = createByteCache<StoredResponse>({ maxSize: 64 * 1024 * 1024, now });
  log('\n## Tier get: Redis vs in-process, same entry');
  log('| entry | tier | p50 µs | p99 µs | gets/s (32 concurrent) |');
  log('|---|---|---:|---:|---:|');
  for (const size of [2048, 65_536]) {
    const value = entry(size);
    const windows = { ttlMs: 60_000, swrMs: 0, sieMs: 0, size: value.body.length + (value.gzip?.length ?? 0) };
    await tier.set('k', value, windows);
    memory.set('k', value, windows);
    for (const [name, get] of [['memory', async () => memory.get('k')], ['redis', () => tier.get('k')]] as const) {
      for (let i = 0; i < 500; i += 1) await get();
      const samples: number[] = [];
      for (let i = 0; i < 5000; i += 1) {
        const t = process.hrtime.bigint();
        const hit = await get();
        samples.push(Number(process.hrtime.bigint() - t) / 1000);
        if (hit === undefined) throw new Error('bench: miss');
      }
      samples.sort((a, b) => a - b);
      const total = 20_000;
      let done = 0;
      const started = performance.now();
      await Promise.all(Array.from({ length: 32 }, async () => {
        while (done < total) {
          done += 1;
          await get();
        }
      }));
      const rate = total / ((performance.now() - started) / 1000);
      log(`| ${size / 1024} KiB + gzip | ${name} | ${pct(samples, 0.5).toFixed(1)} | ${pct(samples, 0.99).toFixed(1)} | ${Math.round(rate)} |`);
    }
  }
}

const started = Date.now();
const clients = await Promise.all([connected(), connected(), connected()]);
try {
  await clients[0].flushdb();
  log(`# bench/suites/redis-limiter-and-tier.ts: Redis ${base.host}, db 15; node ${process.version}`);
  await rateLimitAccuracy(clients);
  await tierLatency(clients[0]);
  await clients[0].flushdb();
  log(`\n(${((Date.now() - started) / 1000).toFixed(1)} s)`);
} finally {
  for (const c of clients) c.disconnect();
}
