// The binary COPY reader of the PostgreSQL store's bulk reads (src/store/pg-copy.ts), on streams
// PostgreSQL itself writes: integers of both widths (negative, up to 2^53 - 1), NULLs, blobs with
// every byte value and empty ones, answers larger than the first buffer; a failing statement
// rejects with PostgreSQL's error and its pool goes on answering; only integers go into the text.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CopyReader, copyOutBinary, sqlInt } from '../../src/store/pg-copy.ts';
import { PG_URL } from './harness.ts';

describe('binary COPY from PostgreSQL', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
  });
  afterAll(async () => {
    await pool.end();
  });

  it('reads int4, int8, NULL and bytea fields as PostgreSQL writes them', async () => {
    const bytes = await copyOutBinary(pool, `COPY (
        SELECT 7::int4, (-1)::int8, NULL::int8, '\\x00ff10'::bytea
        UNION ALL SELECT (-2147483648)::int4, 9007199254740991::int8, (-9007199254740991)::int8, ''::bytea
        UNION ALL SELECT NULL::int4, 0::int8, 4294967296::int8, NULL::bytea
      ) TO STDOUT (FORMAT binary)`);
    const rows = new CopyReader(bytes);
    const got: unknown[][] = [];
    while (rows.row(4)) got.push([rows.int4(), rows.int8(), rows.int8(), rows.bytes()?.toString('hex') ?? null]);
    expect(got).toEqual([
      [7, -1, null, '00ff10'],
      [-2147483648, 9007199254740991, -9007199254740991, ''],
      [null, 0, 4294967296, null],
    ]);
  });

  it('reads an answer many times larger than its first buffer, every blob intact', async () => {
    const bytes = await copyOutBinary(pool, `COPY (
        SELECT i, decode(repeat(lpad(to_hex(i % 256), 2, '0'), 300), 'hex') FROM generate_series(1, 2000) i ORDER BY i
      ) TO STDOUT (FORMAT binary)`);
    expect(bytes.length).toBeGreaterThan(4 * 65536);
    const rows = new CopyReader(bytes);
    let n = 0;
    const wrong: number[] = [];
    while (rows.row(2)) {
      n += 1;
      if (rows.int4() !== n || !rows.bytes()!.equals(Buffer.alloc(300, n % 256))) wrong.push(n);
    }
    expect(n).toBe(2000);
    expect(wrong).toEqual([]);
  });

  it('rejects a failing statement with PostgreSQL\'s error, and the pool answers the next one', async () => {
    await expect(copyOutBinary(pool, 'COPY (SELECT 1 / (random() * 0)::int) TO STDOUT (FORMAT binary)')).rejects.toThrow(/division by zero/);
    await expect(copyOutBinary(pool, 'COPY (SELECT * FROM no_such_table_mdqs) TO STDOUT (FORMAT binary)')).rejects.toThrow(/no_such_table_mdqs/);
    const rows = new CopyReader(await copyOutBinary(pool, 'COPY (SELECT 42::int4) TO STDOUT (FORMAT binary)'));
    expect(rows.row(1)).toBe(true);
    expect(rows.int4()).toBe(42);
    expect(rows.row(1)).toBe(false);
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('refuses a stream that is not binary COPY, a row of another width and a field of another size', async () => {
    expect(() => new CopyReader(Buffer.from('1\t2\n'))).toThrow(/not a binary COPY stream/);
    const bytes = await copyOutBinary(pool, 'COPY (SELECT 1::int4, 2::int8) TO STDOUT (FORMAT binary)');
    expect(() => new CopyReader(bytes).row(3)).toThrow(/2 fields, expected 3/);
    const rows = new CopyReader(bytes);
    rows.row(2);
    expect(() => rows.int8()).toThrow(/4 bytes, expected 8/);
  });

  it('puts only integers into a statement', () => {
    expect(sqlInt(-12)).toBe('-12');
    expect(sqlInt(1_792_252_800_000)).toBe('1792252800000');
    for (const bad of [1.5, Number.NaN, Infinity, 2 ** 53]) expect(() => sqlInt(bad)).toThrow(TypeError);
    expect(() => sqlInt('1); DROP TABLE x; --' as unknown as number)).toThrow(TypeError);
  });
});
