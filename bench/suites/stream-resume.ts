// Resume cost: the time from a reconnect to live for a client that missed 10 s of 500 symbols.
// The server (bench/servers/resume-server.ts, a child process) ticks on demand, its clock moving
// 1 s a tick (the default stream.tickMs): 10 ticks are 10 s missed, every update of which the
// client gets back (the count is printed). An observer client
// stays subscribed throughout and tells the latest seq of each symbol. Each round, the resuming
// client disconnects, the server ticks 10 times, and the client reconnects and subscribes with
// `since` (its last seq per symbol); it is live when it holds the latest seq of every symbol.
// Measured from before the new socket opens (connect, handshake, subscribe, replay) to that
// moment. `--redis <url>`: the server on that Redis (its database is flushed), the replay log a
// Redis Stream per symbol as in a fleet; default in process.
//   node bench/suites/stream-resume.ts [--rounds 60] [--missed 10] [--redis redis://127.0.0.1:6379/9]
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { QUICK, reportHeadlines } from '../lib/report.ts';

const SERVER = fileURLToPath(new URL('../servers/resume-server.ts', import.meta.url));
const KEY = 'resume-bench-key';
const SYMBOLS = Array.from({ length: 500 }, (_, i) => `SIM${String(i + 1).padStart(4, '0')}.US`);

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}
const ROUNDS = arg('rounds', QUICK ? 10 : 60);
const MISSED = arg('missed', 10);
const redisAt = process.argv.indexOf('--redis');
const REDIS_URL = redisAt === -1 ? '' : process.argv[redisAt + 1];
/** A resume not live after this has lost something, ms. */
const STALL_MS = 10_000;

type Element = { symbol: string; seq: number; gap?: boolean };

function start(): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(SERVER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, RESUME_REDIS_URL: REDIS_URL } });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve({ child, port: m.port }));
    child.once('exit', (code) => reject(new Error(`resume server exited with ${code}`)));
  });
}

/** A subscribed client tracking the highest seq seen per symbol; `live` resolves once it holds `target`. */
function subscriber(url: string, since?: Map<string, number>) {
  const latest = new Map<string, number>();
  let gaps = 0;
  let elements = 0;
  let waiting: { target: Map<string, number>; resolve: () => void } | undefined;
  const reached = (target: Map<string, number>) => [...target].every(([s, seq]) => (latest.get(s) ?? -1) >= seq);
  const ws = new WebSocket(url, { perMessageDeflate: false });
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as { op: string; data?: Element[] };
    if (frame.op !== 'quotes') return;
    for (const e of frame.data ?? []) {
      elements += 1;
      if (e.gap === true) gaps += 1;
      if (e.seq > (latest.get(e.symbol) ?? -1)) latest.set(e.symbol, e.seq);
    }
    if (waiting !== undefined && reached(waiting.target)) {
      waiting.resolve();
      waiting = undefined;
    }
  });
  ws.once('open', () => {
    ws.send(JSON.stringify({ op: 'subscribe', channel: 'quotes', symbols: SYMBOLS, ...(since === undefined ? {} : { since: Object.fromEntries(since) }) }));
  });
  return {
    ws, latest,
    get gaps() { return gaps; },
    get elements() { return elements; },
    live(target: Map<string, number>): Promise<void> {
      if (reached(target)) return Promise.resolve();
      return new Promise((resolve) => { waiting = { target, resolve }; });
    },
  };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

const { child, port } = await start();
const url = `ws://127.0.0.1:${port}/v1/ws/stream?api_key=${KEY}`;
const tick = (n: number) => new Promise<void>((resolve) => {
  child.once('message', () => resolve());
  child.send({ cmd: 'tick', n });
});
const snapshot = new Map(SYMBOLS.map((s) => [s, 0]));
const observer = subscriber(url);
await observer.live(snapshot);
let client = subscriber(url);
await client.live(snapshot);
await tick(1);
await Promise.all([observer.live(new Map(observer.latest)), client.live(new Map(observer.latest))]);

const times: number[] = [];
let gaps = 0;
let replayed = 0;
let missed = 0;
for (let round = 0; round < ROUNDS; round++) {
  const since = new Map(client.latest);
  client.ws.terminate();
  await tick(MISSED);
  // The observer has every update: its seqs are the latest.
  const target = new Map(observer.latest);
  const before = [...target].reduce((n, [s, seq]) => n + seq - (since.get(s) ?? 0), 0);
  await observer.live(target);
  const started = performance.now();
  client = subscriber(url, since);
  // Bounded: a resume that never gets live (a lost update) fails the run, naming what it lacks.
  const stalled = await Promise.race([client.live(target).then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), STALL_MS))]);
  if (stalled) {
    const short = [...target].filter(([s, seq]) => (client.latest.get(s) ?? -1) < seq);
    for (const [s, seq] of short.slice(0, 5)) console.log(`round ${round}: ${s} resumed after ${since.get(s)}, got to ${client.latest.get(s)}, latest ${seq}`);
    console.log(`round ${round}: ${short.length} symbols short of their latest seq after ${STALL_MS / 1000} s`);
    child.send({ cmd: 'exit' });
    await new Promise((resolve) => child.once('exit', resolve));
    process.exit(1);
  }
  times.push(performance.now() - started);
  gaps += client.gaps;
  replayed += client.elements;
  missed += before;
}
client.ws.terminate();
observer.ws.terminate();
child.send({ cmd: 'exit' });
await new Promise((resolve) => child.once('exit', resolve));

const sorted = [...times].sort((a, b) => a - b);
const where = REDIS_URL === '' ? 'replay log in process' : `replay log in Redis (${REDIS_URL})`;
const p50 = percentile(sorted, 50);
const p99 = percentile(sorted, 99);
console.log(`resume: ${SYMBOLS.length} symbols, ${MISSED} missed ticks of 1 s, ${ROUNDS} rounds, ${where}`);
console.log(`reconnect → live: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, min ${sorted[0].toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms`);
console.log(`updates missed per resume: ${(missed / ROUNDS).toFixed(0)}; elements received per resume: ${(replayed / ROUNDS).toFixed(0)}; gap elements: ${gaps}`);
reportHeadlines([
  { suite: 'stream-resume', figure: `reconnect → live after ${MISSED} s of ${SYMBOLS.length} symbols missed, p50 (${where})`, value: `${p50.toFixed(1)} ms` },
  { suite: 'stream-resume', figure: `reconnect → live after ${MISSED} s of ${SYMBOLS.length} symbols missed, p99 (${where})`, value: `${p99.toFixed(1)} ms` },
  { suite: 'stream-resume', figure: 'gap elements (a resume beyond the log)', value: String(gaps), target: '0', pass: gaps === 0 },
]);
console.log(JSON.stringify({ symbols: SYMBOLS.length, missed: MISSED, rounds: ROUNDS, redis: REDIS_URL !== '', p50, p99, times }));
