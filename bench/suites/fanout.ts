// Fan-out benchmark: 1,000 WebSocket connections subscribed to the same 200 symbols, every symbol
// changing on every tick; messages delivered per second and server CPU per 1,000 messages, for
// the service's stream hub (sequence numbers and the replay log on, the default), the same hub
// with stream.sequence off (no `seq`, no replay log), and a bare `ws` server broadcasting the
// same pre-serialised frame (the limit), in the same run. Each server is a child process; the
// clients live here. `--redis <url>`: the service on that Redis (its database is flushed), the
// replay log a Redis Stream per symbol as in a fleet; default in process.
// The service with the sequence on and off run alternately (`--pairs`, each pair in the other
// order), each a fresh child; the rates are each side's messages over its rounds' time.
//   node bench/suites/fanout.ts [--connections 1000] [--seconds 15] [--pairs 2] [--redis redis://127.0.0.1:6379/9]
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { QUICK, reportHeadlines } from '../lib/report.ts';

const SERVER = fileURLToPath(new URL('../servers/fanout-server.ts', import.meta.url));
const KEY = 'fanout-bench-key';
const SYMBOLS = Array.from({ length: 200 }, (_, i) => `SIM${String(i + 1).padStart(4, '0')}.US`);

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}
const CONNECTIONS = arg('connections', QUICK ? 100 : 1000);
const SECONDS = arg('seconds', QUICK ? 3 : 15);
const PAIRS = arg('pairs', QUICK ? 1 : 2);
const redisAt = process.argv.indexOf('--redis');
const REDIS_URL = redisAt === -1 ? '' : process.argv[redisAt + 1];
type Mode = 'app' | 'app-unsequenced' | 'bare';

interface Result { sent: number; ticks: number; cpuMs: number; ms: number }

function start(mode: Mode): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(SERVER, [mode], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, FANOUT_REDIS_URL: REDIS_URL } });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve({ child, port: m.port }));
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
}

async function openClients(url: string, count: number): Promise<WebSocket[]> {
  const out: WebSocket[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    })));
    out.push(...batch);
  }
  return out;
}

async function round(mode: Mode, frame?: string): Promise<{ result: Result; received: number; frame: string }> {
  const { child, port } = await start(mode);
  const path = mode === 'bare' ? '/' : `/v1/ws/stream?api_key=${KEY}`;
  const clients = await openClients(`ws://127.0.0.1:${port}${path}`, CONNECTIONS);
  let captured = frame ?? '';
  if (mode !== 'bare') {
    // Subscribe everyone and swallow the acks and snapshots before measuring.
    await Promise.all(clients.map((ws) => new Promise<void>((resolve) => {
      let seen = 0;
      const onMessage = (data: WebSocket.RawData) => {
        seen += 1;
        if (seen === 2) {
          captured ||= data.toString();
          ws.off('message', onMessage);
          resolve();
        }
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify({ op: 'subscribe', channel: 'quotes', symbols: SYMBOLS }));
    })));
  }
  let received = 0;
  for (const ws of clients) ws.on('message', () => { received += 1; });
  const done = new Promise<Result>((resolve) => child.once('message', (m: Result) => resolve(m)));
  child.send({ cmd: 'start', frame: captured });
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  child.send({ cmd: 'stop' });
  const result = await done;
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (const ws of clients) ws.terminate();
  child.send({ cmd: 'exit' });
  await new Promise((resolve) => child.once('exit', resolve));
  return { result, received, frame: captured };
}

interface Row { name: string; ticks: number; sent: number; received: number; perSecond: number; cpuPer1000: number; rounds: number[] }

/** One server's rounds summed: messages received over the rounds' time, CPU over messages sent. */
function row(name: string, runs: { result: Result; received: number }[]): Row {
  const sum = (f: (r: { result: Result; received: number }) => number) => runs.reduce((n, r) => n + f(r), 0);
  const received = sum((r) => r.received);
  const sent = sum((r) => r.result.sent);
  return {
    name, ticks: sum((r) => r.result.ticks), sent, received,
    perSecond: received / (sum((r) => r.result.ms) / 1000),
    cpuPer1000: sum((r) => r.result.cpuMs) / (sent / 1000),
    rounds: runs.map((r) => Math.round(r.received / (r.result.ms / 1000))),
  };
}

// Sequence on and off alternate (on, off, off, on, …): what drifts over the run (the machine's
// load, the client process's heap) falls on both alike. The bare server runs once, after.
const on: Awaited<ReturnType<typeof round>>[] = [];
const off: Awaited<ReturnType<typeof round>>[] = [];
for (let pair = 0; pair < PAIRS; pair++) {
  for (const mode of pair % 2 === 0 ? ['app', 'app-unsequenced'] as const : ['app-unsequenced', 'app'] as const) {
    (mode === 'app' ? on : off).push(await round(mode));
  }
}
const app = on[0];
const unsequenced = off[0];
const bare = await round('bare', app.frame);
const rows = [row('service (/v1/ws/stream)', on), row('service, stream.sequence off', off), row('bare ws broadcast', [bare])];
const where = REDIS_URL === '' ? 'replay log in process' : `replay log in Redis (${REDIS_URL})`;
console.log(`fan-out: ${CONNECTIONS} connections × ${SYMBOLS.length} symbols, frame ${app.frame.length} bytes (${unsequenced.frame.length} without seq), ${SECONDS} s per round, sequence on/off alternated over ${PAIRS} pair(s), ${where}`);
console.log('server                          ticks   messages/s   server CPU ms / 1,000 msgs   per round');
for (const r of rows) console.log(`${r.name.padEnd(30)} ${String(r.ticks).padStart(6)} ${r.perSecond.toFixed(0).padStart(12)} ${r.cpuPer1000.toFixed(1).padStart(14)}               ${r.rounds.join(' / ')}`);
const delivered = rows[0].perSecond / rows[2].perSecond;
const sequenced = rows[0].perSecond / rows[1].perSecond;
console.log(`ratio (service / bare): delivered ${delivered.toFixed(2)}×, CPU per message ${(rows[0].cpuPer1000 / rows[2].cpuPer1000).toFixed(2)}×`);
console.log(`ratio (sequence on / off): delivered ${sequenced.toFixed(2)}×, CPU per message ${(rows[0].cpuPer1000 / rows[1].cpuPer1000).toFixed(2)}×`);
reportHeadlines([
  { suite: 'fan-out', figure: `messages delivered/s, service ÷ bare ws (${CONNECTIONS} connections × ${SYMBOLS.length} symbols)`, value: `${delivered.toFixed(2)} (${rows[0].perSecond.toFixed(0)} / ${rows[2].perSecond.toFixed(0)})`, target: '≥ 0.80', pass: delivered >= 0.8 },
  { suite: 'fan-out', figure: `messages delivered/s, sequence and replay log on ÷ off (${where})`, value: `${sequenced.toFixed(2)} (${rows[0].perSecond.toFixed(0)} / ${rows[1].perSecond.toFixed(0)})`, target: '≥ 0.90', pass: sequenced >= 0.9 },
  { suite: 'fan-out', figure: 'server CPU per message, service ÷ bare', value: (rows[0].cpuPer1000 / rows[2].cpuPer1000).toFixed(2) },
]);
console.log(JSON.stringify({ connections: CONNECTIONS, symbols: SYMBOLS.length, frameBytes: app.frame.length, seconds: SECONDS, redis: REDIS_URL !== '', rows }));
