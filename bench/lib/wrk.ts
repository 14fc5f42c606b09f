// wrk (Debian's package) as the load generator: C, one thread, costs ~4 µs a request, so the
// server, not the generator, is the bottleneck (autocannon costs ~15 µs and is not).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { snapshot } from './cpu.ts';
import { pinned } from './processes.ts';

export function ensureWrk(): void {
  if (spawnSync('wrk', ['--version']).error === undefined) return;
  throw new Error('wrk is not installed: apt-get install -y wrk (Debian), then run the bench again');
}

export interface WrkResult {
  requestsPerSecond: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** Server CPU per request, µs (utime + stime of the server process over the run). */
  serverCpuUs: number;
  /** wrk's own CPU, in cores, over the run (its headroom). */
  generatorCores: number;
  /** Cores other processes (not the server, wrk or the bench) used over the run: the noise. */
  foreignCores: number;
}

/** CPU seconds (user + system) a process has used, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const dir = mkdtempSync(join(tmpdir(), 'mdqs-wrk-'));

function script(pipeline: number, headers: Record<string, string>, paths?: string[]): string {
  const file = join(dir, `p${pipeline}-${paths?.length ?? 0}.lua`);
  const lines = Object.entries(headers).map(([k, v]) => `wrk.headers["${k}"] = "${v}"`);
  if (paths !== undefined) {
    // Random paths from a list (e.g. more keys than the in-process tier holds).
    lines.push(`local paths = { ${paths.map((p) => `"${p}"`).join(', ')} }`, 'request = function() return wrk.format(nil, paths[math.random(#paths)]) end');
    writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  }
  lines.push(
    'local req',
    'init = function(args)',
    '  local r = {}',
    `  for i = 1, ${pipeline} do r[i] = wrk.format(nil, wrk.path) end`,
    '  req = table.concat(r)',
    'end',
    'request = function() return req end',
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

export async function runWrk(url: string, options: { seconds: number; connections: number; pipeline: number; headers: Record<string, string>; serverPid: number; paths?: string[] }): Promise<WrkResult> {
  const before = cpuSeconds(options.serverPid);
  const machineBefore = snapshot([options.serverPid]);
  const started = Date.now();
  // With BENCH_PIN=1, wrk on CPU 0 (the servers are on CPU 1: bench/lib/processes.ts pinned()).
  const child = spawn(...pinned(0, ['wrk', '-t1', `-c${options.connections}`, `-d${options.seconds}s`, '-s', script(options.pipeline, options.headers, options.paths), url]), { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const wrkCpu = await new Promise<number>((resolve) => {
    let last = 0;
    const sample = setInterval(() => {
      try {
        last = cpuSeconds(child.pid!);
      } catch { /* exited */ }
    }, 200);
    child.on('exit', () => {
      clearInterval(sample);
      resolve(last);
    });
  });
  const elapsed = (Date.now() - started) / 1000;
  const after = cpuSeconds(options.serverPid);
  const machineAfter = snapshot([options.serverPid]);
  // USER_HZ jiffies: 1/100 s.
  const othersSeconds = (machineAfter.busy - machineBefore.busy - (machineAfter.ours - machineBefore.ours)) / 100 - wrkCpu;
  const number = (pattern: RegExp) => Number(pattern.exec(out)?.[1] ?? 0);
  const requests = number(/(\d+) requests in/);
  const errors = ['connect', 'read', 'write', 'timeout'].reduce((sum, kind) => sum + number(new RegExp(`${kind} (\\d+)`)), 0);
  return {
    requestsPerSecond: number(/Requests\/sec:\s+([\d.]+)/),
    requests,
    non2xx: number(/Non-2xx or 3xx responses: (\d+)/),
    errors,
    serverCpuUs: requests > 0 ? ((after - before) * 1e6) / requests : 0,
    generatorCores: wrkCpu / elapsed,
    foreignCores: Math.max(0, othersSeconds / elapsed),
  };
}
