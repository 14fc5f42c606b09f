// Instructions a cache hit costs, service against bare node:http, counted by valgrind's callgrind
// (issue 30): repeatable whatever else the machine runs, where CPU time and req/s are not. Each side
// runs in a child under `valgrind --tool=callgrind --instr-atstart=no`, which builds the service,
// warms up (2,000 hits, uncounted), then drives N hits in-process (bench/diagnostics/hit-cost.ts's
// way: node:http's own request and response objects over a socket that discards writes; the
// service's request listener with its fast path, or a bare listener writing the very bytes the
// service sent) while callgrind_control has instrumentation on; twice, with N and 2N hits:
// (instructions of 2N − instructions of N) ÷ N is a hit's. Every thread is counted (the main
// thread, V8's GC and compile helpers, libuv's pool): callgrind runs them one at a time.
//   node bench/diagnostics/hit-instructions.ts [quote|candles] [n=4000]      (~3 min)
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { IncomingMessage, ServerResponse, type RequestListener } from 'node:http';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CHILD = process.argv[2] === '--child';
const [which = 'quote', nArg = '4000'] = process.argv.slice(CHILD ? 3 : 2);
const n = Number(nArg);

if (!CHILD) {
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-hit-instructions-'));
  const count = async (side: string, hits: number): Promise<number> => {
    const out = join(dir, `${side}-${hits}.out`);
    const child = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`, process.execPath, fileURLToPath(import.meta.url), '--child', which, String(hits), side], {
      env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' }, stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const instrument = (on: boolean) => spawnSync('callgrind_control', ['-i', on ? 'on' : 'off', String(child.pid)], { stdio: 'ignore' });
    for await (const line of createInterface({ input: child.stdout })) {
      if (line === 'ready') {
        instrument(true);
        child.stdin.write('go\n');
      } else if (line === 'done') {
        instrument(false);
        child.stdin.end('exit\n');
      }
    }
    const status = await exited;
    const collected = /Collected : (\d+)/.exec(stderr);
    if (status !== 0 || collected === null) throw new Error(`valgrind ${side} ${hits}: exit ${status}\n${stderr.slice(-2000)}`);
    return Number(collected[1]);
  };
  const rows: string[] = [];
  const per: Record<string, number> = {};
  for (const side of ['bare', 'service']) {
    const one = await count(side, n);
    const two = await count(side, 2 * n);
    per[side] = (two - one) / n;
    rows.push(`${side}: ${one} instructions for ${n} hits, ${two} for ${2 * n}: ${Math.round(per[side])} a hit from the difference, ${Math.round(two / (2 * n))} a hit over the ${2 * n}`);
  }
  rmSync(dir, { recursive: true, force: true });
  console.log(`${which} at ${process.env.LOG_LEVEL ?? 'info'} (callgrind, every thread)\n${rows.join('\n')}\nservice ÷ bare: ${(per.service / per.bare).toFixed(2)}`);
  process.exit(0);
}

// The child: build the service in-process, drive `n` hits through one side, exit.
const side = process.argv[5];
const { loadConfig } = await import('../../config/load.ts');
const { createAdapters, productionDeps } = await import('../../src/upstream/registry.ts');
const { KeyStore } = await import('../../src/access/keys.ts');
const { buildApp } = await import('../../src/app.ts');
const { createMetrics, upstreamSink } = await import('../../src/metrics.ts');
const { BENCH_KEY, benchKeysYaml } = await import('../lib/bench-keys.ts');

const path = which === 'quote' ? '/v1/quotes?symbols=600519.SH' : '/v1/klines?symbol=600519.SH&count=1000&adjust=none';
const dir = mkdtempSync(join(tmpdir(), 'mdqs-hit-instructions-child-'));
const keysFile = join(dir, 'keys.yaml');
writeFileSync(keysFile, benchKeysYaml({ windowMs: 3_600_000 }));
const { config } = loadConfig({ LOG_LEVEL: 'info', ...process.env, KEYS_FILE: keysFile, MDQS__history__enabled: 'false', HOST: '127.0.0.1', PORT: '0' });
const metrics = createMetrics({ processMetrics: true });
const deps = productionDeps(Date.now, upstreamSink(metrics), () => {});
const app = await buildApp({ config, keys: KeyStore.fromFile(keysFile), adapters: createAdapters(config.routing, config.adapters, deps), now: Date.now, metrics, upstreamClients: deps.clients });
await app.listen({ port: 0, host: '127.0.0.1' });
const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}${path}`;
for (let i = 0; i < 2; i++) await (await fetch(url, { headers: { 'x-api-key': BENCH_KEY } })).arrayBuffer();
const serviceListener = app.server.listeners('request')[0] as RequestListener;

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
const headers = { host: '127.0.0.1', 'user-agent': 'wrk', 'x-api-key': BENCH_KEY };
const rawHeaders = Object.entries(headers).flat();
function drive(listener: RequestListener): void {
  const req = new IncomingMessage(socket);
  req.method = 'GET';
  req.url = path;
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.httpVersion = '1.1';
  req.rawHeaders = rawHeaders;
  req.headers = { ...headers };
  req.complete = true;
  req.push(null);
  const res = new ServerResponse(req);
  res.shouldKeepAlive = true;
  res.assignSocket(socket);
  listener(req, res);
  res.detachSocket(socket);
}
socket.keep = true;
drive(serviceListener);
socket.keep = false;
const captured = socket.last;
if (!/x-cache: HIT/i.test(captured)) throw new Error(`not a cache hit:\n${captured.slice(0, 600)}`);
const headEnd = captured.indexOf('\r\n\r\n');
const headerPairs = captured.slice(0, headEnd).split('\r\n').slice(1).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)])
  .filter(([name]) => !/^(date|connection|keep-alive)$/i.test(name)).flat();
const body = Buffer.from(captured.slice(headEnd + 4), 'latin1');
const bareListener: RequestListener = (_req, res) => {
  res.writeHead(200, headerPairs);
  res.end(body);
};
const listener = side === 'service' ? serviceListener : bareListener;
async function hits(count: number): Promise<void> {
  for (let done = 0; done < count; done += 200) {
    for (let i = 0; i < 200; i++) drive(listener);
    // A turn of the event loop every 200, so log writes complete as in a server.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
await hits(2000);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
process.stdout.write('ready\n');
await lines.next();
await hits(n);
process.stdout.write('done\n');
await lines.next();
rmSync(dir, { recursive: true, force: true });
process.exit(0);

