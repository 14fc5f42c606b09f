// The load of the mixed memory soak (issue 30 item 3, bench/suites/memory-soak-mix.ts): variant A's
// random-key requests plus the work issues 25-30 added, all at once against one service:
//
//   random      variant A's requests as they are (randomPath: 40 % quotes of 1-20 symbols, 60 %
//               klines of random symbol, period, count, adjustment and window)
//   format      a klines request drawn the same way, answered as Arrow, Parquet or CSV (half by
//               `format=`, half by the Accept header)
//   store-fill  the first request for each of the store symbols: several years of daily bars,
//               filled from the vendor into the candle store once
//   store       a random window (20-500 bars, 1d or 1w) inside a filled store symbol's years: the
//               memory tier misses (a window not asked before), the store answers
//   financials  one of the five statements for 1-10 random symbols: plain, latest=true, as_of=<date>
//               or start_date/end_date; a quarter of them as CSV, Arrow or Parquet
//
// HTTP goes over `connections` keep-alive sockets, one request at a time each (no pipelining:
// cold requests cost tens of ms). Beside it `streamClients` WebSocket clients stay on
// /v1/ws/stream: each subscribes to random symbols of a pool (quotes; one in four also depth),
// swaps half of them every 5-15 s and closes and reconnects after 20-60 s; three in four negotiate
// per-message deflate, as the official client does. Requests are counted per kind and status by
// the client; stream frames by `op`.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { stringify } from 'yaml';
import { isMarketOpen, localDate, sessions } from '../../src/markets/calendar.ts';
import type { Region } from '../../src/domain.ts';
import { benchKeysFile, BENCH_KEY } from './bench-keys.ts';
import { coresUsed, foreignShare, snapshot } from './cpu.ts';
import type { LoadResult } from './load.ts';
import { sample, scrape, type Samples } from './metrics.ts';
import { randomPath } from './random-key-soak.ts';

export const MIX_KINDS = ['random', 'format', 'store-fill', 'store', 'financials'] as const;
export type MixKind = (typeof MIX_KINDS)[number];

export interface MixOptions {
  /** Synthetic symbols SIM0001.US … of the service (adapters.sim.syntheticUniverse). */
  universe: number;
  /** Concurrent HTTP requests. */
  connections: number;
  streamClients: number;
  /** Symbols the stream clients subscribe to: SIM0001.US … SIM<pool>.US. */
  streamPool: number;
  /** Symbols whose daily bars are filled into the store and then read back in windows. */
  storeSymbols: number;
  /** Years of daily bars each store symbol is filled with. */
  storeYears: number;
  /** Symbols the financials requests draw from: SIM0001.US … SIM<n>.US (the universe by default). */
  financialsSymbols: number;
  /** The service's clock minus the wall clock (bench/lib/shift-clock.ts); request times use it too. */
  clockOffsetMs: number;
  /** Shares of the HTTP requests (store-fill is not drawn: it is the first `store` of a symbol). */
  weights: { random: number; format: number; store: number; financials: number };
}

export interface KindStats {
  requests: number;
  /** By HTTP status; 0 = no answer (socket error or the client's 60 s timeout). */
  statuses: Map<number, number>;
  bytes: number;
  latenciesMs: number[];
  /** The first few 5xx answers: status, path and the start of the body. */
  serverErrorSamples: string[];
}

export interface StreamStats {
  connects: number;
  /** Connections opened after the client's previous one closed (every connect but the first of each client). */
  reconnects: number;
  /** Handshakes refused or failed. */
  failedHandshakes: number;
  subscribes: number;
  unsubscribes: number;
  /** Frames received by `op` (subscribed, quotes, depth, error, …). */
  frames: Map<string, number>;
  /** The first few `error` frames. */
  errorSamples: string[];
  bytes: number;
  /** Closes the client did not ask for, by code. */
  unexpectedCloses: Map<number, number>;
  /** The most open connections and subscribed (connection, symbol) pairs /metrics showed (read every 5 s). */
  peakConnections: number;
  peakSubscriptions: number;
}

export interface MixResult {
  load: LoadResult;
  kinds: Map<MixKind, KindStats>;
  stream: StreamStats;
  /** /metrics counters, end minus start of the load. */
  server: {
    wsFramesSent: number;
    wsConflations: number;
    wsSlowCloses: number;
    storeBars: number;
    upstreamBars: number;
    fills: number;
    storeErrors: number;
    corrupt: number;
  };
}

const DAY_MS = 86_400_000;
const YEAR_MS = 365 * DAY_MS;
const FORMATS = [
  { name: 'arrow', mime: 'application/vnd.apache.arrow.stream' },
  { name: 'parquet', mime: 'application/vnd.apache.parquet' },
  { name: 'csv', mime: 'text/csv' },
] as const;
const STATEMENT_SEGMENTS = ['income', 'balance-sheet', 'cash-flow', 'metrics', 'shares'] as const;
const STORE_ADJUST = ['none', 'forward', 'backward'] as const;
/** The first year the sim reports statements for (adapters/sim/financials.ts FIRST_YEAR). */
const FINANCIALS_FROM = Date.UTC(2015, 0, 1);

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)];
const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));
const symbolName = (n: number) => `SIM${String(n).padStart(4, '0')}.US`;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * A keys file for the mixed soak: the bench plan (every feature of the checkout, a rate limit never
 * reached) with stream caps for `streamClients` connections of up to 100 symbols each (the
 * default plan allows 10 connections and 200 subscriptions per key). Returns its path.
 */
export function writeMixKeysFile(features: readonly string[]): string {
  const file = benchKeysFile({ features });
  const plan = file.plans.bench as Record<string, unknown>;
  plan.max_connections = 10_000;
  plan.max_subscriptions = 100_000;
  const path = join(mkdtempSync(join(tmpdir(), 'mdqs-mix-keys-')), 'keys.yaml');
  writeFileSync(path, stringify(file));
  return path;
}

/**
 * The clock offset that puts the service in `region`'s regular session for `needMs` from now:
 * 0 when it is in session already, else the start (+1 min) of the latest session that began
 * before now and lasts long enough, minus now. The stream refreshes only symbols in session.
 */
export function sessionClockOffset(region: Region, needMs: number, now = Date.now()): number {
  if (isMarketOpen(region, now) && isMarketOpen(region, now + needMs)) return 0;
  for (let d = 0; d < 15; d++) {
    for (const w of sessions(region, localDate(region, now - d * DAY_MS))) {
      const at = w.start + 60_000;
      if (at <= now && w.end - at >= needMs) return at - now;
    }
  }
  throw new Error(`no ${region} session of ${Math.round(needMs / 60_000)} min in the last 15 days`);
}

function emptyKind(): KindStats {
  return { requests: 0, statuses: new Map(), bytes: 0, latenciesMs: [], serverErrorSamples: [] };
}

interface PlannedRequest {
  kind: MixKind;
  path: string;
  accept?: string;
}

/** Draws the next request; `filled` are the store symbols whose years were asked for already. */
function planner(options: MixOptions) {
  const now = () => Date.now() + options.clockOffsetMs;
  const storeSymbol = (i: number) => symbolName(1 + Math.floor((i * options.universe) / options.storeSymbols));
  const filled = new Set<number>();
  const total = options.weights.random + options.weights.format + options.weights.store + options.weights.financials;
  const financialsSymbol = () => symbolName(between(1, Math.min(options.universe, options.financialsSymbols)));

  const format = (): PlannedRequest => {
    let path = randomPath(options.universe, now());
    while (!path.startsWith('/v1/klines')) path = randomPath(options.universe, now());
    const f = pick(FORMATS);
    return Math.random() < 0.5 ? { kind: 'format', path: `${path}&format=${f.name}` } : { kind: 'format', path, accept: f.mime };
  };

  const store = (): PlannedRequest => {
    const i = Math.floor(Math.random() * options.storeSymbols);
    const symbol = storeSymbol(i);
    const t = now();
    const from = t - options.storeYears * YEAR_MS;
    if (!filled.has(i)) {
      filled.add(i);
      return { kind: 'store-fill', path: `/v1/klines?symbol=${symbol}&period=1d&start_time=${from}&end_time=${t - DAY_MS}&count=10000&adjust=none` };
    }
    const spanMs = Math.round((between(20, 500) * 7 * DAY_MS) / 5);
    const end = from + spanMs + Math.floor(Math.random() * Math.max(1, t - 2 * DAY_MS - from - spanMs));
    const period = Math.random() < 0.8 ? '1d' : '1w';
    return { kind: 'store', path: `/v1/klines?symbol=${symbol}&period=${period}&start_time=${end - spanMs}&end_time=${end}&count=1000&adjust=${pick(STORE_ADJUST)}` };
  };

  const financials = (): PlannedRequest => {
    const symbols = Array.from({ length: between(1, 10) }, financialsSymbol).join(',');
    let path = `/v1/financials/${pick(STATEMENT_SEGMENTS)}?symbols=${symbols}`;
    const t = now();
    const r = Math.random();
    if (r < 0.25) path += '&latest=true';
    else if (r < 0.5) path += `&as_of=${isoDay(FINANCIALS_FROM + Math.random() * (t - FINANCIALS_FROM))}`;
    else if (r < 0.7) {
      const start = FINANCIALS_FROM + Math.random() * (t - FINANCIALS_FROM);
      path += `&start_date=${isoDay(start)}&end_date=${isoDay(start + Math.random() * 3 * YEAR_MS)}`;
    }
    if (Math.random() < 0.25) {
      const f = pick(FORMATS);
      return Math.random() < 0.5 ? { kind: 'financials', path: `${path}&format=${f.name}` } : { kind: 'financials', path, accept: f.mime };
    }
    return { kind: 'financials', path };
  };

  return (): PlannedRequest => {
    let r = Math.random() * total;
    if ((r -= options.weights.random) < 0) return { kind: 'random', path: randomPath(options.universe, now()) };
    if ((r -= options.weights.format) < 0) return format();
    if ((r -= options.weights.store) < 0) return store();
    return financials();
  };
}

function httpGet(agent: Agent, port: number, request: PlannedRequest): Promise<{ status: number; bytes: number; head: string }> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { 'x-api-key': BENCH_KEY };
    if (request.accept !== undefined) headers.accept = request.accept;
    const req = get({ host: '127.0.0.1', port, path: request.path, agent, headers }, (res) => {
      let bytes = 0;
      let head = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if ((res.statusCode ?? 0) >= 500 && head.length < 300) head += chunk.toString('utf8', 0, 300);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, head }));
      res.on('error', () => resolve({ status: 0, bytes, head }));
    });
    req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolve({ status: 0, bytes: 0, head: error.message }));
  });
}

const sleep = (ms: number, stop: Promise<void>) => Promise.race([new Promise<void>((resolve) => setTimeout(resolve, ms).unref()), stop]);

/** One stream client for the whole soak: connect, subscribe, swap symbols, close and reconnect until `stop`. */
async function streamClient(url: string, index: number, options: MixOptions, stats: StreamStats, stop: Promise<void>, stopped: () => boolean): Promise<void> {
  const deflate = index % 4 !== 3;
  const withDepth = index % 4 === 0;
  const poolSymbol = () => symbolName(between(1, options.streamPool));
  let first = true;
  while (!stopped()) {
    const ws = new WebSocket(url, { perMessageDeflate: deflate, handshakeTimeout: 10_000 });
    let asked = false;
    let open = false;
    const closed = new Promise<void>((resolve) => ws.once('close', (code: number) => {
      if (open && !asked && !stopped()) stats.unexpectedCloses.set(code, (stats.unexpectedCloses.get(code) ?? 0) + 1);
      resolve();
    }));
    const opened = await new Promise<boolean>((resolve) => {
      ws.once('open', () => resolve(true));
      ws.once('error', () => resolve(false));
      ws.once('unexpected-response', (_req, res) => {
        res.resume();
        resolve(false);
      });
    });
    if (!opened) {
      stats.failedHandshakes += 1;
      ws.terminate();
      await sleep(1000, stop);
      continue;
    }
    ws.on('error', () => undefined);
    open = true;
    stats.connects += 1;
    if (!first) stats.reconnects += 1;
    first = false;
    ws.on('message', (data: WebSocket.RawData) => {
      const text = data.toString();
      stats.bytes += text.length;
      const op = /"op":"(\w+)"/.exec(text.slice(0, 40))?.[1] ?? 'other';
      stats.frames.set(op, (stats.frames.get(op) ?? 0) + 1);
      if (op === 'error' && stats.errorSamples.length < 5) stats.errorSamples.push(text.slice(0, 300));
    });
    const send = (op: 'subscribe' | 'unsubscribe', channel: 'quotes' | 'depth', symbols: string[]) => {
      if (symbols.length === 0 || ws.readyState !== WebSocket.OPEN) return;
      ws.send(JSON.stringify({ op, channel, symbols }));
      if (op === 'subscribe') stats.subscribes += 1;
      else stats.unsubscribes += 1;
    };
    const quotes = new Set(Array.from({ length: between(5, 30) }, poolSymbol));
    const depth = new Set(withDepth ? Array.from({ length: between(1, 5) }, poolSymbol) : []);
    send('subscribe', 'quotes', [...quotes]);
    send('subscribe', 'depth', [...depth]);
    const lifetimeEnds = performance.now() + between(20_000, 60_000);
    while (!stopped() && ws.readyState === WebSocket.OPEN) {
      const left = lifetimeEnds - performance.now();
      if (left <= 0) break;
      await sleep(Math.min(left, between(5_000, 15_000)), stop);
      if (stopped() || performance.now() >= lifetimeEnds) break;
      // Swap half the symbols: unsubscribe some, subscribe as many new ones.
      const drop = [...quotes].filter(() => Math.random() < 0.5);
      for (const s of drop) quotes.delete(s);
      send('unsubscribe', 'quotes', drop);
      const add = Array.from({ length: drop.length }, poolSymbol).filter((s) => !quotes.has(s));
      for (const s of add) quotes.add(s);
      send('subscribe', 'quotes', add);
    }
    asked = true;
    if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(1000, 'bye');
    const timer = setTimeout(() => ws.terminate(), 5000);
    await closed;
    clearTimeout(timer);
    if (!stopped()) await sleep(between(200, 1000), stop);
  }
}

function counterDelta(before: Samples, after: Samples, name: string, labels: Record<string, string> = {}): number {
  return sample(after, name, labels) - sample(before, name, labels);
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Runs the mix against `service` for `seconds`; every stream client is closed before it returns. */
export async function runMix(service: { url: string; port: number; pid: number }, seconds: number, options: MixOptions): Promise<MixResult> {
  const kinds = new Map<MixKind, KindStats>(MIX_KINDS.map((k) => [k, emptyKind()]));
  const stream: StreamStats = {
    connects: 0, reconnects: 0, failedHandshakes: 0, subscribes: 0, unsubscribes: 0, frames: new Map(), errorSamples: [], bytes: 0, unexpectedCloses: new Map(),
    peakConnections: 0, peakSubscriptions: 0,
  };
  const next = planner(options);
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  let stopNow: () => void = () => undefined;
  const stop = new Promise<void>((resolve) => {
    stopNow = resolve;
  });
  let isStopped = false;
  const stopped = () => isStopped;
  const metricsBefore = await scrape(service.url);
  const cpuBefore = snapshot([service.pid]);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const wsUrl = `${service.url.replace(/^http/, 'ws')}/v1/ws/stream?api_key=${BENCH_KEY}`;
  const clients = Array.from({ length: options.streamClients }, async (_, i) => {
    // Spread the first connections over the first seconds rather than all at once.
    await sleep(Math.floor((i * 2000) / Math.max(1, options.streamClients)), stop);
    await streamClient(wsUrl, i, options, stream, stop, stopped);
  });
  const timer = setTimeout(() => {
    isStopped = true;
    stopNow();
  }, seconds * 1000);
  const gauges = setInterval(() => {
    void scrape(service.url).then((m) => {
      stream.peakConnections = Math.max(stream.peakConnections, sample(m, 'mdqs_ws_connections', {}));
      stream.peakSubscriptions = Math.max(stream.peakSubscriptions, sample(m, 'mdqs_ws_subscriptions', {}));
    }, () => undefined);
  }, 5000);
  const loops = Array.from({ length: options.connections }, async () => {
    while (performance.now() < deadline) {
      const request = next();
      const at = performance.now();
      const { status, bytes, head } = await httpGet(agent, service.port, request);
      const k = kinds.get(request.kind)!;
      if ((status >= 500 || status === 0) && k.serverErrorSamples.length < 3) k.serverErrorSamples.push(`${status} ${request.path} ${head.slice(0, 200)}`);
      k.requests += 1;
      k.statuses.set(status, (k.statuses.get(status) ?? 0) + 1);
      k.bytes += bytes;
      k.latenciesMs.push(performance.now() - at);
    }
  });
  await Promise.all(loops);
  clearTimeout(timer);
  clearInterval(gauges);
  isStopped = true;
  stopNow();
  await Promise.all(clients);
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = snapshot([service.pid]);
  agent.destroy();
  const metricsAfter = await scrape(service.url);

  const all = [...kinds.values()];
  const latencies = all.flatMap((k) => k.latenciesMs).sort((a, b) => a - b);
  const total = all.reduce((n, k) => n + k.requests, 0);
  const count = (test: (status: number) => boolean) => all.reduce((n, k) => n + [...k.statuses].filter(([s]) => test(s)).reduce((m, [, c]) => m + c, 0), 0);
  const cores = coresUsed(cpuBefore, cpuAfter);
  const load: LoadResult = {
    reqPerSec: total / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    total,
    non2xx: count((s) => s !== 0 && (s < 200 || s >= 300)),
    errors: count((s) => s === 0),
    bytesPerResponse: total > 0 ? Math.round(all.reduce((n, k) => n + k.bytes, 0) / total) : 0,
    foreignCpu: foreignShare(cpuBefore, cpuAfter),
    generatorCores: cores.self,
    serverCores: cores.each,
  };
  const delta = (name: string, labels: Record<string, string> = {}) => counterDelta(metricsBefore, metricsAfter, name, labels);
  return {
    load, kinds, stream,
    server: {
      wsFramesSent: delta('mdqs_ws_messages_sent_total'),
      wsConflations: delta('mdqs_ws_conflations_total'),
      wsSlowCloses: delta('mdqs_ws_slow_client_closes_total'),
      storeBars: delta('mdqs_history_bars_total', { source: 'store' }),
      upstreamBars: delta('mdqs_history_bars_total', { source: 'upstream' }),
      fills: delta('mdqs_history_fill_requests_total'),
      storeErrors: delta('mdqs_history_store_errors_total'),
      corrupt: delta('mdqs_cache_corrupt_total'),
    },
  };
}
