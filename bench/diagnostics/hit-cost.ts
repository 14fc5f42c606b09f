// What a cache hit costs the service's own code, in-process and without the network: the
// service's request listener (fast path included) against a bare listener that writes the same
// status, headers and body, both driven with node:http's own IncomingMessage and ServerResponse
// over a socket that discards what it is given. No kernel, no load generator, no other process:
// the figure moves by a few percent between runs, where `npm run bench:hit` moves by ±20 %.
// A developer tool to find and check a change; the issue's targets are `npm run bench:hit`'s ratios.
//   node bench/diagnostics/hit-cost.ts [quote|candles] [seconds=3] [rounds=3] >/dev/null   (LOG_LEVEL=info by default)
// Results go to stderr; the service's log lines go to stdout.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { IncomingMessage, ServerResponse, type RequestListener } from 'node:http';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../config/load.ts';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { KeyStore } from '../../src/access/keys.ts';
import { buildApp } from '../../src/app.ts';
import { createMetrics, upstreamSink } from '../../src/metrics.ts';
import { BENCH_KEY, benchKeysYaml } from '../lib/bench-keys.ts';

const [which = 'quote', secondsArg = '3', roundsArg = '3'] = process.argv.slice(2);
const path = which === 'quote' ? '/v1/quotes?symbols=AAPL.US' : '/v1/klines?symbol=AAPL.US&count=1000&adjust=none';
const KEY = BENCH_KEY;

const dir = mkdtempSync(join(tmpdir(), 'mdqs-hit-cost-'));
const keysFile = join(dir, 'keys.yaml');
// A one-hour window: the in-process rounds send more hits in a minute than the default limit.
writeFileSync(keysFile, benchKeysYaml({ windowMs: 3_600_000 }));

const { config } = loadConfig({ LOG_LEVEL: 'info', ...process.env, KEYS_FILE: keysFile, MDQS__history__enabled: 'false', HOST: '127.0.0.1', PORT: '0' });
const metrics = createMetrics({ processMetrics: true });
const deps = productionDeps(Date.now, upstreamSink(metrics), () => {});
const app = await buildApp({ config, keys: KeyStore.fromFile(keysFile), adapters: createAdapters(config.routing, config.adapters, deps), now: Date.now, metrics, upstreamClients: deps.clients });
await app.listen({ port: 0, host: '127.0.0.1' });
const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}${path}`;
for (let i = 0; i < 2; i++) await (await fetch(url, { headers: { 'x-api-key': KEY } })).arrayBuffer();
const serviceListener = app.server.listeners('request')[0] as RequestListener;

/** A connected-looking socket that swallows writes and remembers the last one. */
class SinkSocket extends Socket {
  last = '';
  keep = false;
  constructor() {
    super();
    Object.defineProperty(this, 'remoteAddress', { value: '127.0.0.1' });
  }
  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    if (this.keep) this.last += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('latin1');
    const cb = typeof encoding === 'function' ? encoding : callback;
    if (typeof cb === 'function') (cb as () => void)();
    return true;
  }
  override cork(): void {}
  override uncork(): void {}
}
const socket = new SinkSocket();

const rawHeaders = ['Host', '127.0.0.1', 'User-Agent', 'wrk', 'x-api-key', KEY];
function drive(listener: RequestListener): void {
  const req = new IncomingMessage(socket);
  req.method = 'GET';
  req.url = path;
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.httpVersion = '1.1';
  req.rawHeaders = rawHeaders;
  req.headers = { host: '127.0.0.1', 'user-agent': 'wrk', 'x-api-key': KEY };
  req.complete = true;
  req.push(null);
  const res = new ServerResponse(req);
  res.shouldKeepAlive = true;
  res.assignSocket(socket);
  listener(req, res);
  res.detachSocket(socket);
}

// The bare listener sends what the service sent (captured from one driven hit).
socket.keep = true;
drive(serviceListener);
socket.keep = false;
const captured = socket.last;
if (process.env.HIT_COST_SHOW === "1") process.stderr.write(`${captured.slice(0, captured.indexOf("\r\n\r\n"))}\n`);
if (!/x-cache: HIT/i.test(captured) || /x-request-id: [0-9a-f]{8}-/i.test(captured)) throw new Error(`the driven request was not a fast-path hit:\n${captured.slice(0, 600)}`);
const headEnd = captured.indexOf('\r\n\r\n');
const headerPairs = captured.slice(0, headEnd).split('\r\n').slice(1).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)])
  .filter(([name]) => !/^(date|connection|keep-alive)$/i.test(name)).flat();
const body = Buffer.from(captured.slice(headEnd + 4), 'latin1');
const bareListener: RequestListener = (_req, res) => {
  res.writeHead(200, headerPairs);
  res.end(body);
};

/** Drives hits for `seconds`, yielding to the event loop every 200 (so log writes complete as in a server). */
async function measure(listener: RequestListener, seconds: number): Promise<number> {
  const start = process.cpuUsage();
  const until = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < until) {
    for (let i = 0; i < 200; i++) drive(listener);
    n += 200;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

const seconds = Number(secondsArg);
await measure(bareListener, 1);
await measure(serviceListener, 1);
const rows: Array<{ bare: number; service: number }> = [];
for (let round = 0; round < Number(roundsArg); round++) {
  const bare = await measure(bareListener, seconds);
  const service = await measure(serviceListener, seconds);
  rows.push({ bare, service });
  process.stderr.write(`round ${round + 1}: bare ${bare.toFixed(2)} µs, service ${service.toFixed(2)} µs, service − bare ${(service - bare).toFixed(2)} µs\n`);
}
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
process.stderr.write(`${which} at ${process.env.LOG_LEVEL ?? 'info'}: median service − bare ${median(rows.map((r) => r.service - r.bare)).toFixed(2)} µs a hit (bare ${median(rows.map((r) => r.bare)).toFixed(2)} µs)\n`);
await app.close();
