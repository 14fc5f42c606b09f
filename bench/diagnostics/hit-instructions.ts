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
import { mkdtempSync, rmSync } from 'node:fs';

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
const { inProcessHit } = await import('../lib/in-process-hit.ts');
const hit = await inProcessHit(which === 'quote' ? '/v1/quotes?symbols=600519.SH' : '/v1/klines?symbol=600519.SH&count=1000&adjust=none');
const { drive, service: serviceListener, bare: bareListener } = hit;
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
await hit.close();
process.exit(0);

