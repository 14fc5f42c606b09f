// Issues 13.3, 13.6 and 14.6 on real processes: `npm start` gets SIGTERM and the pid file's
// process gets SIGHUP; a half-sent request does not hold up shutdown; responses finished during the
// drain say Connection: close; EADDRINUSE names the port; the demo key keeps the bind on loopback.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/access/create-key.ts';
import { alive, probe, ROOT, spawnService, until, withGuard, type Spawned } from './spawn.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-operator-process-'));
const started: Spawned[] = [];
afterAll(() => {
  for (const s of started) s.kill();
  rmSync(dir, { recursive: true, force: true });
});

function keysCopy(name: string): string {
  const path = join(dir, name);
  copyFileSync(join(ROOT, 'config/keys.yaml'), path);
  return path;
}

function npmStart(env: Record<string, string>): Spawned {
  const s = spawnService(['npm', 'start'], { PORT: '0', ...env });
  started.push(s);
  return s;
}

async function get(port: number, path: string, key?: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: key ? { 'x-api-key': key } : {} });
  await res.text();
  return res.status;
}

describe('npm start', () => {
  it('binds loopback while the demo key is enabled, writes a pid file; SIGHUP to that pid reloads keys; SIGTERM to npm drains and exits 0', async () => {
    const keysFile = keysCopy('npm-keys.yaml');
    const pidFile = join(dir, 'run', 'mdqs.pid');
    const server = npmStart({ KEYS_FILE: keysFile, MDQS__server__pidFile: pidFile });
    const port = await server.port();
    const bind = await server.waitFor((l) => l.msg.startsWith('listening on '), 'bind decision');
    expect(bind.msg).toBe('listening on 127.0.0.1: server.host is auto and the demo key (demo, anonymous) is enabled: loopback only; remove the demo key or set HOST to listen on the network');
    expect(server.logs.find((l) => /^Server listening at /.test(l.msg))?.msg).toBe(`Server listening at http://127.0.0.1:${port}`);
    await server.waitFor((l) => l.msg.startsWith('pid '), 'pid file line');
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(pid).not.toBe(server.proc.pid);
    expect(alive(pid)).toBe(true);

    const key = createKey(keysFile, 'hup-team', 'basic');
    expect(await get(port, '/v1/quotes?symbols=600519.SH', key)).toBe(401);
    process.kill(pid, 'SIGHUP');
    await server.waitFor((l) => l.msg === 'keys reloaded', 'keys reloaded');
    expect(await get(port, '/v1/quotes?symbols=600519.SH', key)).toBe(200);

    server.proc.kill('SIGTERM');
    const exit = await withGuard(server.exited, 'npm exit');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(await probe(port)).toBe('ECONNREFUSED');
    await until(() => !alive(pid), 'server process gone');
    expect(existsSync(pidFile)).toBe(false);
    expect(server.logs.some((l) => l.msg === 'shutting down: draining in-flight requests' && l.signal === 'SIGTERM')).toBe(true);
  });

  it('SIGHUP to npm itself (npm dies of it without forwarding): the server drains instead of living on as an orphan', async () => {
    const pidFile = join(dir, 'orphan.pid');
    const server = npmStart({ KEYS_FILE: keysCopy('orphan-keys.yaml'), MDQS__server__pidFile: pidFile });
    const port = await server.port();
    await server.waitFor((l) => l.msg.startsWith('pid '), 'pid file line');
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    server.proc.kill('SIGHUP');
    await withGuard(server.exited, 'npm exit');
    await until(() => !alive(pid), 'orphaned server exits');
    expect(await probe(port)).toBe('ECONNREFUSED');
  });
});

function rawResponse(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk) => { text += String(chunk); });
    socket.on('close', () => resolve(text));
    socket.on('error', () => undefined);
  });
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

describe('shutdown with a half-sent request (14.6)', () => {
  it('closes connections with no complete request, finishes the in-flight one with Connection: close, exits 0', async () => {
    const server = spawnService(['node', 'src/server.ts'], {
      PORT: '0', HOST: '127.0.0.1', KEYS_FILE: keysCopy('half-keys.yaml'), MDQS__server__pidFile: '""',
      // A drain that waited for the half-sent request would take this long and exit 1.
      MDQS__server__shutdownGraceMs: '60000',
      MDQS__adapters__sim__latency__fixedMs: '1500',
    });
    started.push(server);
    const port = await server.port();

    const half = await open(port);
    const halfClosed = rawResponse(half);
    half.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');

    const idle = await open(port);
    const idleText = rawResponse(idle);
    idle.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => idle.bytesRead > 0, 'keep-alive response');

    const slow = await open(port);
    const slowText = rawResponse(slow);
    slow.write('GET /v1/quotes?symbols=600519.SH HTTP/1.1\r\nHost: x\r\nX-API-Key: demo-key\r\n\r\n');
    // A later request on a new connection answered means the slow one's headers were read before it.
    expect(await get(port, '/healthz')).toBe(200);

    server.proc.kill('SIGTERM');
    const exit = await withGuard(server.exited, 'server exit');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(await halfClosed).toBe('');
    expect((await idleText).split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    const slowResponse = await slowText;
    expect(slowResponse.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(slowResponse.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(server.logs.some((l) => l.msg === 'drain timed out; exiting')).toBe(false);
  });
});

describe('startup errors', () => {
  it('EADDRINUSE names the port and how to pick another', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      const server = spawnService(['node', 'src/server.ts'], { PORT: String(port), HOST: '127.0.0.1', MDQS__server__pidFile: '""' });
      started.push(server);
      const exit = await withGuard(server.exited, 'server exit');
      expect(exit.code).toBe(1);
      expect(server.stderr.join('\n')).toBe(
        `cannot listen: port ${port} on 127.0.0.1 is already in use (another mdqs still running? see: ss -ltnp 'sport = :${port}'). `
        + `Pick another port: PORT=${port + 1} npm start, or server.port in your CONFIG_FILE.`,
      );
    } finally {
      holder.close();
    }
  });

  it('a bad MDQS_HEAP_GROWING_PERCENT stops the process naming the variable; a good one serves', async () => {
    const bad = spawnService(['node', 'src/server.ts'], { PORT: '0', MDQS_HEAP_GROWING_PERCENT: '50%' });
    started.push(bad);
    expect((await withGuard(bad.exited, 'exit')).code).toBe(1);
    expect(bad.stderr).toEqual([
      'cannot start: MDQS_HEAP_GROWING_PERCENT must be a whole number of percent from 1 to 1000 (got "50%"); set it empty to keep V8\'s own growing factor',
    ]);
    const good = spawnService(['node', 'src/server.ts'], { PORT: '0', HOST: '127.0.0.1', MDQS__server__pidFile: '""', MDQS_HEAP_GROWING_PERCENT: '50' });
    started.push(good);
    expect(await get(await good.port(), '/healthz')).toBe(200);
    good.kill();
  });

  it('a config typo stops the process with the message on stderr', async () => {
    const server = spawnService(['node', 'src/server.ts'], { MDQS__server__prot: '1' });
    started.push(server);
    expect((await withGuard(server.exited, 'exit')).code).toBe(1);
    expect(server.stderr).toEqual([
      'invalid configuration (1 problem):',
      '  - server.prot: unknown setting (MDQS__server__prot); did you mean MDQS__server__port?',
    ]);
  });

  it('a missing keys file says so and how to create one', async () => {
    const missing = join(dir, 'absent', 'keys.yaml');
    const server = spawnService(['node', 'src/server.ts'], { KEYS_FILE: missing });
    started.push(server);
    expect((await withGuard(server.exited, 'exit')).code).toBe(1);
    expect(server.stderr[1]).toBe(`  - the keys file ${missing} does not exist (it holds the plans and API key hashes; set its path with keys.file in the config or KEYS_FILE). `
      + `Create one from the example: cp config/keys.yaml ${missing} (then remove its demo key), and add keys with npm run cli -- create-key --keys-file ${missing} --id <label> --plan <plan>`);
  });

  it('without a demo key, auto binds all interfaces', async () => {
    const keysFile = join(dir, 'nodemo.yaml');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(keysFile, 'plans:\n  p:\n    markets: [CN]\n    features: [quotes]\n    rate_limit: { max: 10, window_ms: 60000 }\n    max_symbols: 5\nkeys: []\n');
    const server = spawnService(['node', 'src/server.ts'], { PORT: '0', KEYS_FILE: keysFile, MDQS__server__pidFile: '""' });
    started.push(server);
    await server.port();
    expect(server.logs.find((l) => l.msg.startsWith('listening on '))?.msg).toBe('listening on 0.0.0.0: server.host is auto and no demo key is enabled: all interfaces');
    server.proc.kill('SIGTERM');
    expect((await withGuard(server.exited, 'exit')).code).toBe(0);
  });

  it('above its line (resident size at listen + the cache bounds + the headroom) the server turns V8\'s memory saver on and logs it', async () => {
    // A 1-byte headroom, 1 MiB caches and no store: the line is 2 MiB above the resident size at
    // listen, which the first few hundred requests pass.
    const server = spawnService(['node', 'src/server.ts'], {
      PORT: '0', MDQS__server__pidFile: '""', MDQS__server__memorySaverHeadroomBytes: '1',
      MDQS__cache__dataMaxBytes: '1048576', MDQS__cache__responseMaxBytes: '1048576', MDQS__history__enabled: 'false',
    });
    started.push(server);
    const port = await server.port();
    const on = server.waitFor((l) => l.msg === 'memory saver on: resident memory above its line', 'memory saver on');
    let seen = false;
    void on.then(() => (seen = true), () => undefined);
    for (let i = 0; i < 3000 && !seen; i++) {
      expect(await get(port, `/v1/klines?symbol=600519.SH&period=1d&count=${100 + (i % 900)}`, 'demo-key')).toBe(200);
    }
    const line = (await on) as unknown as { rssBytes: number; lineBytes: number; heapGrowingPercent: number | null };
    expect(line.rssBytes).toBeGreaterThan(line.lineBytes);
    // The saver's own heap growing percent (server.memorySaverHeapGrowingPercent, 10 by default).
    expect(line.heapGrowingPercent).toBe(10);
    server.proc.kill('SIGTERM');
    expect((await withGuard(server.exited, 'exit')).code).toBe(0);
  }, 120_000);
});
