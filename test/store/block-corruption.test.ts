// Issue 28, item 4, for the history store: every block read is verified by its CRC-32.
//   - Both backends (real SQLite file, real PostgreSQL): a block whose bytes were flipped, or whose
//     one price was changed (still a well-formed block), in the database is never decoded into
//     bars: reads and counts reject with CorruptBlockError, counted per process.
//   - A real server process on SQLite: a block corrupted in its file between two runs; the
//     restarted server answers the same candles as before (from the vendor), says so in its log
//     and counts it in mdqs_cache_corrupt_total{layer="history"}.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { sha256Hex } from '../../src/access/keys.ts';
import { corruptCount } from '../../src/cache/corruption.ts';
import type { Backend, SeriesKey } from '../../src/store/backend.ts';
import { CorruptBlockError } from '../../src/store/blocks.ts';
import { startServer } from '../e2e/server-process.ts';
import { directBackends, minuteBars, PG_URL } from './harness.ts';

const backends = directBackends('corrupt');
const { dir } = backends;

type Damage = (data: Buffer) => void;
const flip16: Damage = (data) => {
  const at = Math.floor(data.length / 2) - 8;
  for (let i = at; i < at + 16; i += 1) data[i] ^= 0xff;
};
// The first close price one thousandth higher: columns after the 28-byte header are labels, open,
// high, low, close (int32 each when they fit, as here).
const onePrice: Damage = (data) => {
  const n = data.readUInt32LE(4);
  const at = 28 + 4 * n * 4;
  data.writeInt32LE(data.readInt32LE(at) + 1, at);
};

interface Place {
  backend: Backend;
  /** Rewrite one stored block of the series through the database's own client. */
  damage(block: number, how: Damage): Promise<void>;
}

async function open(kind: 'sqlite' | 'postgres', name: string): Promise<Place> {
  const { backend, sqliteFile: file, schema } = await backends.open(kind, name);
  if (file !== undefined) {
    return {
      backend,
      async damage(block, how) {
        const db = new DatabaseSync(file);
        try {
          const row = db.prepare('SELECT series, block, data FROM blocks ORDER BY block LIMIT 1 OFFSET ?').get(block) as { series: number; block: number; data: Uint8Array };
          const data = Buffer.from(row.data);
          how(data);
          db.prepare('UPDATE blocks SET data = ? WHERE series = ? AND block = ?').run(data, row.series, row.block);
        } finally {
          db.close();
        }
      },
    };
  }
  return {
    backend,
    async damage(block, how) {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT series, block, data FROM "${schema}".blocks ORDER BY block LIMIT 1 OFFSET $1`, [block]);
        const data = Buffer.from(rows[0].data as Buffer);
        how(data);
        await client.query(`UPDATE "${schema}".blocks SET data = $1 WHERE series = $2 AND block = $3`, [data, rows[0].series, rows[0].block]);
      } finally {
        await client.end();
      }
    },
  };
}

describe.each(['sqlite', 'postgres'] as const)('corrupted blocks on %s', (kind) => {
  const key: SeriesKey = { adapter: 'x', symbol: 'CRC.US', period: '1m' };

  it('flipped bytes, or one price changed, in the database: CorruptBlockError on read and count, never bars', async () => {
    const place = await open(kind, 'damage');
    const all = minuteBars(3, 240);
    const lo = all.timestamp[0];
    const hi = all.timestamp[all.timestamp.length - 1];
    await place.backend.fill({ key, bars: all, covers: [{ lo, hi, recheckAt: null }] });
    expect(await place.backend.read(key, lo, hi)).toEqual(all);
    const before = corruptCount('history');

    await place.damage(0, flip16);
    await expect(place.backend.read(key, lo, hi)).rejects.toBeInstanceOf(CorruptBlockError);
    await expect(place.backend.countBars(key, lo + 10 * 60_000, hi)).rejects.toBeInstanceOf(CorruptBlockError);
    // The other days' blocks are intact and still read.
    const day2 = all.timestamp[240];
    expect((await place.backend.read(key, day2, hi)).timestamp).toEqual(all.timestamp.slice(240));

    await place.damage(1, onePrice);
    await expect(place.backend.read(key, day2, hi)).rejects.toThrow("a block's checksum does not match");
    expect(corruptCount('history') - before).toBeGreaterThanOrEqual(3);
    await place.backend.close();
  });
});

describe('a server process on a SQLite store corrupted between two runs', () => {
  it('serves the vendor\'s candles, logs the store failure and counts the corrupt block', async () => {
    const sqlitePath = join(dir, 'server.sqlite');
    const keysFile = join(dir, 'keys.yaml');
    const KEY = 'block-corruption-key';
    writeFileSync(keysFile, stringify({
      plans: { p: { markets: ['CN', 'HK', 'US'], features: ['klines_daily', 'klines_minute'], rate_limit: { max: 10_000, window_ms: 60_000 }, max_symbols: 10 } },
      keys: [{ id: 'blocks', plan: 'p', sha256: sha256Hex(KEY) }],
    }));
    const env = { KEYS_FILE: keysFile, MDQS__history__sqlitePath: sqlitePath, MDQS__server__pidFile: join(dir, 'mdqs.pid') };
    const path = `/v1/klines?symbol=600519.SH&period=1d&adjust=none&start_time=${Date.UTC(2024, 0, 1)}&end_time=${Date.UTC(2024, 5, 28)}`;
    const get = async (base: string) => {
      const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': KEY } });
      return { status: res.status, body: await res.text() };
    };

    const first = await startServer(env);
    let original: { status: number; body: string };
    try {
      original = await get(first.base);
      expect(original.status).toBe(200);
      expect(JSON.parse(original.body).data.timestamp.length).toBeGreaterThan(50);
    } finally {
      await first.stop();
    }
    // A block of the stored series, flipped in the file while the server is down.
    const db = new DatabaseSync(sqlitePath);
    try {
      const rows = db.prepare("SELECT b.series, b.block, b.data FROM blocks b JOIN series s ON s.id = b.series WHERE s.symbol = '600519.SH' AND s.period = '1d'").all() as { series: number; block: number; data: Uint8Array }[];
      expect(rows.length).toBeGreaterThan(0);
      const data = Buffer.from(rows[0].data);
      flip16(data);
      db.prepare('UPDATE blocks SET data = ? WHERE series = ? AND block = ?').run(data, rows[0].series, rows[0].block);
    } finally {
      db.close();
    }

    const second = await startServer(env);
    try {
      const again = await get(second.base);
      expect(again.status).toBe(200);
      expect(again.body).toBe(original.body);
      const metrics = await (await fetch(`${second.base}/metrics`)).text();
      const line = metrics.split('\n').find((l) => l.startsWith('mdqs_cache_corrupt_total{layer="history"}'));
      expect(Number(line?.split(' ').pop())).toBeGreaterThanOrEqual(1);
      const logged = await second.waitFor((l) => /checksum does not match/.test(JSON.stringify(l)), 'the store failure in the log');
      expect(logged.level).toBeGreaterThanOrEqual(40);
    } finally {
      await second.stop();
    }
  }, 60_000);
});
