// JSON, CSV, Arrow and Parquet for one research-sized answer (issue 26): 100 symbols × 1,000 daily
// bars from /v1/klines/batch (sim, closed bars only, so every format is a 24 h response-cache hit),
// all measured in the same run against the same service process:
//   1. bytes on the wire, plain and gzip (the service's own gzip variant; Parquet is never gzipped:
//      its pages are ZSTD-compressed, and the local gzip of it is shown only to say why);
//   2. the client's time to a columnar table: Node (JSON.parse vs apache-arrow's tableFromIPC),
//      Python (pandas: pd.read_json, and json.loads + one DataFrame per symbol + concat, which is
//      what a long table from JSON takes, vs pd.read_csv), DuckDB (@duckdb/node-api: a table from
//      read_parquet, and from read_csv for comparison);
//   3. the server's cost per cached hit in each format against JSON: wrk against the service
//      (format in the URL, so the cache-hit fast path answers), requests/s and server CPU µs per
//      request, plain and gzip, the formats interleaved in each round.
//   node bench/suites/formats-wire.ts    (BENCH_ROUNDS=3, BENCH_SECONDS=4, BENCH_WARMUP=1, BENCH_CONNECTIONS=4, BENCH_PARSES=15)
//   BENCH_QUICK=1: 1 round of 1 s, 3 parses (~40 s)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { tableFromIPC } from 'apache-arrow';
import { DuckDBInstance } from '@duckdb/node-api';
import { get, header } from '../lib/capture.ts';
import { BENCH_KEY, startService } from '../lib/processes.ts';
import { envNumber, reportHeadlines, type Headline } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import { int, table } from '../lib/table.ts';
import { ensureWrk, runWrk, type WrkResult } from '../lib/wrk.ts';

process.env.BENCH_PIN ??= '1';
const ROUNDS = envNumber('BENCH_ROUNDS', 3, 1);
const SECONDS = envNumber('BENCH_SECONDS', 4, 1);
const WARMUP = envNumber('BENCH_WARMUP', 1, 1);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 4);
const PARSES = envNumber('BENCH_PARSES', 15, 3);
const log = (line: string) => process.stdout.write(`${line}\n`);
const headers = { 'x-api-key': BENCH_KEY };
const FORMATS = ['json', 'csv', 'arrow', 'parquet'] as const;
type Format = (typeof FORMATS)[number];

ensureWrk();
const dir = mkdtempSync(join(tmpdir(), 'mdqs-formats-bench-'));
const svc = await startService({ env: { MDQS__history__enabled: 'false' } });
try {
  // 100 stocks (A-shares first, then HK and US) with 1,000 closed daily bars each before 2025-06-01.
  const pools = await (await fetch(`${svc.url}/v1/universes/batch`, {
    method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ ids: ['CN_Stock', 'HK_Stock', 'US_Stock'] }),
  })).json() as { data: Record<string, { symbols: string[] }> };
  const end = Date.parse('2025-06-01T00:00:00+08:00');
  const candidates = Object.values(pools.data).flatMap((p) => p.symbols);
  const symbols: string[] = [];
  for (let i = 0; i < candidates.length && symbols.length < 100; i += 50) {
    const chunk = candidates.slice(i, i + 50);
    const res = await fetch(`${svc.url}/v1/klines/batch?symbols=${chunk.join(',')}&count=1000&end_time=${end}`, { headers });
    const data = (await res.json() as { data: Record<string, { timestamp: number[] }> }).data;
    symbols.push(...chunk.filter((s) => data[s]?.timestamp.length === 1000));
  }
  if (symbols.length < 100) throw new Error(`only ${symbols.length} symbols with 1,000 daily bars`);
  const path = (format: Format) => `/v1/klines/batch?symbols=${symbols.slice(0, 100).join(',')}&period=1d&count=1000&end_time=${end}&format=${format}`;

  // 1. Bytes on the wire, and what the first answer in each format costs with the data cached
  // (adjust=none warms the raw bars; each format's first answer builds the adjusted series and
  // encodes it: the difference to JSON is the encoder's).
  await get(`${svc.url}${path('json')}&adjust=none`, headers);
  const bodies = new Map<Format, Buffer>();
  const sizes: string[][] = [];
  for (const format of FORMATS) {
    const t0 = performance.now();
    await get(`${svc.url}${path(format)}`, headers);
    const firstMs = performance.now() - t0;
    const plain = await get(`${svc.url}${path(format)}`, headers);
    if (plain.status !== 200 || header(plain, 'x-cache') !== 'HIT') throw new Error(`${format}: expected a 200 hit, got ${plain.status} ${plain.body.toString().slice(0, 200)}`);
    await get(`${svc.url}${path(format)}`, { ...headers, 'accept-encoding': 'gzip' });
    const zipped = await get(`${svc.url}${path(format)}`, { ...headers, 'accept-encoding': 'gzip' });
    const served = header(zipped, 'content-encoding') === 'gzip';
    bodies.set(format, plain.body);
    sizes.push([format, int(plain.body.length), served ? int(zipped.body.length) : `— (local gzip: ${int(gzipSync(plain.body, { level: 6 }).length)})`,
      (plain.body.length / bodies.get('json')!.length).toFixed(2), firstMs.toFixed(0)]);
  }
  const rows = bodies.get('json')!.length > 0 ? (JSON.parse(bodies.get('json')!.toString()) as { data: Record<string, { timestamp: number[] }> }) : undefined;
  const rowCount = Object.values(rows!.data).reduce((n, c) => n + c.timestamp.length, 0);
  log(`\n100 symbols × 1,000 daily bars (${int(rowCount)} rows), /v1/klines/batch, cached\n`);
  log(table(['format', 'bytes', 'gzip bytes (served)', '÷ JSON', 'first answer, ms (data cached)'], sizes));

  // 2. The client's time to a columnar table.
  const time = (fn: () => unknown) => {
    const samples: number[] = [];
    for (let i = 0; i < PARSES; i++) {
      const t0 = performance.now();
      fn();
      samples.push(performance.now() - t0);
    }
    return median(samples);
  };
  const nodeJson = time(() => JSON.parse(bodies.get('json')!.toString()));
  const nodeArrow = time(() => tableFromIPC(bodies.get('arrow')!));
  for (const format of FORMATS) writeFileSync(join(dir, `answer.${format}`), bodies.get(format)!);
  const python = await new Promise<string>((resolve, reject) => {
    const script = `
import io, json, sys, time
import pandas as pd
d, n = sys.argv[1], int(sys.argv[2])
def t(fn):
    s = []
    for _ in range(n):
        a = time.perf_counter(); fn(); s.append((time.perf_counter() - a) * 1000)
    s.sort(); return s[len(s) // 2]
raw_json = open(d + "/answer.json", "rb").read()
raw_csv = open(d + "/answer.csv", "rb").read()
def long_from_json():
    data = json.loads(raw_json)["data"]
    return pd.concat([pd.DataFrame(c).assign(symbol=s) for s, c in data.items()], ignore_index=True)
out = {
  "read_json": t(lambda: pd.read_json(io.BytesIO(raw_json))),
  "json_long": t(long_from_json),
  "read_csv": t(lambda: pd.read_csv(io.BytesIO(raw_csv))),
  "read_csv_rt": t(lambda: pd.read_csv(io.BytesIO(raw_csv), float_precision="round_trip")),
  "rows": len(long_from_json()), "csv_rows": len(pd.read_csv(io.BytesIO(raw_csv))),
}
print(json.dumps(out))
`;
    const child = spawn('/usr/bin/python3', ['-c', script, dir, String(PARSES)]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(err))));
  });
  const py = JSON.parse(python) as Record<string, number>;
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const duckTime = async (sql: string) => {
    const samples: number[] = [];
    for (let i = 0; i < PARSES; i++) {
      const t0 = performance.now();
      await duck.run(sql);
      samples.push(performance.now() - t0);
    }
    return median(samples);
  };
  const duckParquet = await duckTime(`CREATE OR REPLACE TABLE t AS SELECT * FROM read_parquet('${join(dir, 'answer.parquet')}')`);
  const duckRows = Number((await duck.runAndReadAll('SELECT count(*) AS n FROM t')).getRowObjectsJS()[0].n);
  const duckCsv = await duckTime(`CREATE OR REPLACE TABLE c AS SELECT * FROM read_csv('${join(dir, 'answer.csv')}')`);
  duck.closeSync();
  if (py.rows !== rowCount || py.csv_rows !== rowCount || duckRows !== rowCount) throw new Error(`row counts differ: ${JSON.stringify({ rowCount, py, duckRows })}`);
  const ms = (v: number) => v.toFixed(1);
  log(`\nclient's time to a columnar table, ms (median of ${PARSES})\n`);
  log(table(['client', 'from JSON', 'from the columnar format', 'JSON ÷ columnar'], [
    ['Node: JSON.parse vs apache-arrow tableFromIPC (Arrow)', ms(nodeJson), ms(nodeArrow), (nodeJson / nodeArrow).toFixed(0)],
    ['pandas: pd.read_json vs pd.read_csv (CSV)', ms(py.read_json), ms(py.read_csv), (py.read_json / py.read_csv).toFixed(1)],
    ['pandas: json.loads + DataFrame per symbol + concat (a long table) vs pd.read_csv', ms(py.json_long), ms(py.read_csv), (py.json_long / py.read_csv).toFixed(1)],
    ['pandas: read_csv(float_precision="round_trip")', '', ms(py.read_csv_rt), ''],
    ['DuckDB: CREATE TABLE AS read_parquet (Parquet); read_csv (CSV) for comparison', '', `${ms(duckParquet)} (CSV: ${ms(duckCsv)})`, ''],
  ]));

  // 3. The server's cost per cached hit, each format against JSON, interleaved per round.
  const runs = new Map<string, WrkResult[]>();
  const variants: [Format, 'plain' | 'gzip'][] = FORMATS.flatMap((f): [Format, 'plain' | 'gzip'][] => (f === 'parquet' ? [[f, 'plain']] : [[f, 'plain'], [f, 'gzip']]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [format, encoding] of variants) {
      const h = encoding === 'gzip' ? { ...headers, 'accept-encoding': 'gzip' } : headers;
      await runWrk(`${svc.url}${path(format)}`, { seconds: WARMUP, connections: CONNECTIONS, pipeline: 1, headers: h, serverPid: svc.pid });
      const result = await runWrk(`${svc.url}${path(format)}`, { seconds: SECONDS, connections: CONNECTIONS, pipeline: 1, headers: h, serverPid: svc.pid });
      if (result.non2xx > 0 || result.errors > 0) log(`  ! ${format} ${encoding}: ${result.non2xx} non-2xx, ${result.errors} socket errors`);
      runs.set(`${format} ${encoding}`, [...(runs.get(`${format} ${encoding}`) ?? []), result]);
    }
  }
  const jsonCpu = median(runs.get('json plain')!.map((r) => r.serverCpuUs));
  const hitRows = variants.map(([format, encoding]) => {
    const r = runs.get(`${format} ${encoding}`)!;
    const cpu = median(r.map((x) => x.serverCpuUs));
    return [`${format} ${encoding}`, int(median(r.map((x) => x.requestsPerSecond))), cpu.toFixed(0), (cpu / jsonCpu).toFixed(2),
      Math.max(...r.map((x) => x.generatorCores)).toFixed(2), Math.max(...r.map((x) => x.foreignCores)).toFixed(2)];
  });
  log(`\nserver's cost per cached hit (fast path), median of ${ROUNDS} rounds × ${SECONDS} s, wrk -t1 -c${CONNECTIONS}, formats interleaved\n`);
  log(table(['format', 'req/s', 'server CPU µs/req', '÷ JSON plain', 'wrk cores (max)', "other processes' cores (max)"], hitRows));

  const headlines: Headline[] = [
    ...sizes.map(([format, bytes, gz]) => ({ suite: 'formats', figure: `${format}: bytes (gzip) for 100 × 1,000 daily bars`, value: `${bytes} (${gz})` })),
    { suite: 'formats', figure: 'Node: JSON.parse ÷ tableFromIPC, ms', value: `${ms(nodeJson)} ÷ ${ms(nodeArrow)}` },
    { suite: 'formats', figure: 'pandas: long table from JSON ÷ read_csv, ms', value: `${ms(py.json_long)} ÷ ${ms(py.read_csv)}` },
    { suite: 'formats', figure: 'DuckDB: table from read_parquet, ms', value: ms(duckParquet) },
    ...hitRows.map((row) => ({ suite: 'formats', figure: `${row[0]}: server CPU µs per cached hit (÷ JSON plain)`, value: `${row[2]} (${row[3]})` })),
  ];
  reportHeadlines(headlines);
} finally {
  await svc.stop();
  rmSync(dir, { recursive: true, force: true });
}
