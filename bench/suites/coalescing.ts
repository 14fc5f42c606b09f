// Scenarios 3 and 4: how many upstream calls cold requests cause. The real app (buildApp) runs
// in-process with the sim adapter wrapped to count calls; requests go over real sockets (undici,
// one connection per request). The sim answers after a fixed latency so concurrent requests
// overlap the upstream call instead of arriving after it settled.
//   node bench/suites/coalescing.ts     (also part of bench/suites/design-scenarios.ts)
import { Agent, request } from 'undici';
import { loadDefaultConfig } from '../../config/load.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { AdapterCapabilities } from '../../adapters/types.ts';
import { KeyStore, parseKeysFile } from '../../src/access/keys.ts';
import { buildApp } from '../../src/app.ts';
import { fakeAdapter, type FakeAdapter } from '../../test/helpers/fake-adapter.ts';
import { BENCH_KEY, benchKeysFile } from '../lib/bench-keys.ts';
import { reportHeadlines } from '../lib/report.ts';
import { table } from '../lib/table.ts';

export interface CoalescingRow {
  name: string;
  /** Upstream calls observed, and what the design promises. */
  calls: number;
  expected: number;
  detail: string;
  pass: boolean;
}

export interface CoalescingOptions {
  latencyMs: number;
  log: (line: string) => void;
}

function benchKeys(): KeyStore {
  return new KeyStore(parseKeysFile(benchKeysFile()));
}

interface InProcess {
  url: string;
  counter: FakeAdapter;
  /** performance.now() of every request the server received. */
  arrivals: number[];
  close(): Promise<void>;
}

async function startInProcess(latencyMs: number, capabilities: Partial<AdapterCapabilities> = {}): Promise<InProcess> {
  // logger: false below: the service logs nothing here.
  const config = loadDefaultConfig();
  const now = () => Date.now();
  const sim = createSimAdapter({ latency: { fixedMs: latencyMs }, syntheticUniverse: 5000 }, { now });
  const counter = fakeAdapter(sim, { caps: capabilities });
  const app = await buildApp({ config, keys: benchKeys(), adapters: new Map([['sim', counter]]), now, logger: false });
  const arrivals: number[] = [];
  app.server.on('request', () => arrivals.push(performance.now()));
  // A backlog above 1000 so the kernel queues every simultaneous connect instead of dropping SYNs.
  await app.listen({ host: '127.0.0.1', port: 0, backlog: 2048 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, counter, arrivals, close: () => app.close() };
}

interface Fired {
  statuses: Map<number, number>;
  xCache: Map<string, number>;
}

/** Send `paths` all at once, one socket each, and wait for every answer. */
async function fire(url: string, paths: string[]): Promise<Fired> {
  const agent = new Agent({ connections: null, pipelining: 1, connectTimeout: 30_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
  try {
    const responses = await Promise.all(paths.map(async (path) => {
      const response = await request(`${url}${path}`, { dispatcher: agent, headers: { 'x-api-key': BENCH_KEY } });
      await response.body.dump();
      return { status: response.statusCode, xCache: String(response.headers['x-cache']) };
    }));
    const statuses = new Map<number, number>();
    const xCache = new Map<string, number>();
    for (const r of responses) {
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      xCache.set(r.xCache, (xCache.get(r.xCache) ?? 0) + 1);
    }
    return { statuses, xCache };
  } finally {
    await agent.close();
  }
}

function describe(map: Map<string | number, number>): string {
  return [...map].map(([k, v]) => `${k}×${v}`).join(' ');
}

/** The methods called, in order of first call. */
const called = (counter: FakeAdapter) => [...new Set(counter.log.map((c) => c.method))];

function nonZero(counter: FakeAdapter): string {
  return called(counter).map((method) => `${method}=${counter.count(method)}`).join(' ') || 'none';
}

/** Scenario 3: N identical cold requests at once. */
async function identical(name: string, path: string, n: number, options: CoalescingOptions, expected: (c: FakeAdapter) => number): Promise<CoalescingRow> {
  const server = await startInProcess(options.latencyMs);
  try {
    const fired = await fire(server.url, Array.from({ length: n }, () => path));
    const firstSettled = Math.min(...server.counter.log.map((c) => c.settledAt ?? Infinity));
    const overlapped = server.arrivals.filter((t) => t < firstSettled).length;
    const calls = server.counter.count();
    const want = expected(server.counter);
    const detail = `${nonZero(server.counter)}; status ${describe(fired.statuses)}; X-Cache ${describe(fired.xCache)}; ${overlapped}/${n} requests arrived before the upstream call settled`;
    options.log(`  ${name}: ${detail}`);
    const pass = calls === want && fired.statuses.get(200) === n && overlapped === n;
    return { name, calls, expected: want, detail, pass };
  } finally {
    await server.close();
  }
}

const synthetic = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `SIM${String(from + i).padStart(4, '0')}.US`).join(',');

/** Scenario 4: cold batches against an adapter whose native batch holds 50 symbols. */
async function batches(name: string, paths: string[], expected: number, options: CoalescingOptions): Promise<CoalescingRow> {
  const server = await startInProcess(options.latencyMs, { maxBatch: 50 });
  try {
    const fired = await fire(server.url, paths);
    const calls = server.counter.count('getQuotes');
    const detail = `getQuotes batch sizes [${server.counter.callsOf('getQuotes').map((s) => s.length).join(', ')}]; other calls: ${server.counter.count() - calls}; status ${describe(fired.statuses)}`;
    options.log(`  ${name}: ${detail}`);
    return { name, calls, expected, detail, pass: calls === expected && fired.statuses.get(200) === paths.length };
  } finally {
    await server.close();
  }
}

export async function runCoalescing(options: CoalescingOptions): Promise<CoalescingRow[]> {
  return [
    await identical('1000 identical cold quote requests', '/v1/quotes?symbols=600519.SH', 1000, options, () => 1),
    // A forward-adjusted window needs the raw bars and the ex-factors: one call of each at most.
    await identical('1000 identical cold 1000-candle requests', '/v1/klines?symbol=600519.SH&count=1000', 1000, options,
      (c) => called(c).length),
    await batches('100-symbol cold batch, maxBatch 50', [`/v1/quotes?symbols=${synthetic(1, 100)}`], 2, options),
    await batches('2 overlapping cold batches (1-100, 51-150)', [`/v1/quotes?symbols=${synthetic(1, 100)}`, `/v1/quotes?symbols=${synthetic(51, 150)}`], 3, options),
  ];
}

if (import.meta.main) {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  log('coalescing and batching (in-process buildApp, sim latency 200 ms, counted at the adapter):');
  const rows = await runCoalescing({ latencyMs: 200, log });
  log(`\n${table(['scenario', 'upstream calls', 'expected', 'result'], rows.map((r) => [r.name, String(r.calls), String(r.expected), r.pass ? 'PASS' : 'FAIL']))}`);
  // The identical-request rows pass only if every request arrived while the upstream call was in flight.
  const overlap = (r: CoalescingRow) => /(\d+\/\d+) requests arrived before/.exec(r.detail)?.[1];
  reportHeadlines(rows.map((r) => ({
    suite: 'coalescing', figure: `${r.name}: upstream calls${overlap(r) === undefined ? '' : ' (requests that arrived before it settled)'}`,
    value: `${r.calls}${overlap(r) === undefined ? '' : ` (${overlap(r)})`}`, target: `= ${r.expected}${overlap(r) === undefined ? '' : ', all'}`, pass: r.pass,
  })));
}
