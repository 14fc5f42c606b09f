// The examples of docs/formats.md run as written (issue 26): each code block marked
// `<!-- doc-test: python | sh | sql -->` is taken from docs/formats.md, pointed at a test server instead
// of localhost:8080, and run: Python blocks by Debian's python3 with pandas, the shell block by
// bash (curl), the SQL block by DuckDB (@duckdb/node-api) on the file the shell block wrote.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { DuckDBInstance } from '@duckdb/node-api';
import { buildTestApp, KEYS } from '../helpers/app.ts';

const FORMATS_DOC = readFileSync(new URL('../../docs/formats.md', import.meta.url), 'utf8');
const blocks = [...FORMATS_DOC.matchAll(/<!-- doc-test: (\w+) -->\n```\w+\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], code: m[2] }));

let app: FastifyInstance;
let base: string;
const dir = mkdtempSync(join(tmpdir(), 'mdqs-readme-'));
beforeAll(async () => {
  ({ app } = await buildTestApp());
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

const pointed = (code: string) => code.replaceAll('http://localhost:8080', base);

function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: dir });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('docs/formats.md examples', () => {
  it('docs/formats.md marks two pandas blocks, a shell block and a DuckDB query', () => {
    expect(blocks.map((b) => b.lang)).toEqual(['python', 'python', 'sh', 'sql']);
    expect(blocks[0].code).toContain('pd.read_csv(url');
    expect(blocks[3].code).toContain("read_parquet('klines.parquet')");
  });

  it('pd.read_csv(url) loads a batch as one long table', async () => {
    const { code, stdout, stderr } = await run('/usr/bin/python3', ['-c', pointed(blocks[0].code)]);
    expect(code, stderr).toBe(0);
    for (const symbol of ['600519.SH', '00700.HK', 'AAPL.US']) expect(stdout).toContain(symbol);
  });

  it('the paging loop follows Link to the start of the range: every bar once, ascending', async () => {
    const { code, stdout, stderr } = await run('/usr/bin/python3', ['-c', pointed(blocks[1].code)]);
    expect(code, stderr).toBe(0);
    const whole = await app.inject({ url: '/v1/klines?symbol=600519.SH&period=1d&count=10000&start_time=1546272000000', headers: { 'x-api-key': KEYS.demo } });
    const bars = (whole.json().data as { timestamp: number[] }).timestamp.length;
    expect(bars).toBeGreaterThan(1000);
    expect(stdout.trim()).toBe(`${bars} True`);
  });

  it('curl writes the Parquet file and DuckDB reads it with read_parquet', async () => {
    const { code, stderr } = await run('bash', ['-c', pointed(blocks[2].code)]);
    expect(code, stderr).toBe(0);
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    try {
      await duck.run(`SET file_search_path = '${dir}'`);
      const rows = (await duck.runAndReadAll(blocks[3].code)).getRowObjectsJS();
      expect(rows.map((r) => [r.symbol, r.bars])).toEqual([['00700.HK', 1000n], ['600519.SH', 1000n], ['AAPL.US', 1000n]]);
      for (const row of rows) expect(row.first).toBeInstanceOf(Date);
    } finally {
      duck.closeSync();
    }
  });
});
