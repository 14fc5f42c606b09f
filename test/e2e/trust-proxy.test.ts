// Issue 42, item 5, through a real appending proxy: nginx with `X-Forwarded-For
// $proxy_add_x_forwarded_for` (what most load balancers and ingresses do) in front of real server
// processes with `server.trustProxy` as a hop count (1) and as the proxy's address. A client beyond
// loopback that writes `X-Forwarded-For: 127.0.0.1, …` itself is still the address nginx saw:
// /metrics refuses it, and the free tier, the failed-key budget and the anonymous stream cap count
// it under that address whatever it writes. The client is this machine on its own non-loopback
// address (nginx listens there too); on a machine with loopback only, or without nginx, the suite
// skips with a message.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { stringify } from 'yaml';
import { startServer, type ServerProcess } from './server-process.ts';

const NGINX = ['/usr/sbin/nginx', 'nginx'].find((bin) => spawnSync(bin, ['-v']).status === 0);
const LAN = Object.values(networkInterfaces()).flat().find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
if (NGINX === undefined || LAN === undefined) {
  process.stderr.write(`\n*** SKIPPING the trusted-proxy test: ${NGINX === undefined ? 'nginx is not installed' : 'no non-loopback IPv4 address to be a client from'} ***\n\n`);
}
const describeProxy = NGINX === undefined || LAN === undefined ? describe.skip : describe;

const FAILURES_PER_MINUTE = 3;
const FREE_MAX = 8;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > 10_000) throw new Error(`guard: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The handshake's outcome: 101 (then closed) or the refusal's status and error. */
function handshake(url: string, headers: Record<string, string>): Promise<{ status: number; error?: string; socket?: WebSocket }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    ws.on('open', () => resolve({ status: 101, socket: ws }));
    ws.on('error', (error) => reject(error));
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      res.on('end', () => {
        ws.terminate();
        resolve({ status: res.statusCode ?? 0, error: (JSON.parse(text) as { error: string }).error });
      });
    });
  });
}

const settings = [
  { name: 'a hop count (1)', trustProxy: '1' },
  { name: 'the proxy\'s address (127.0.0.1)', trustProxy: '127.0.0.1' },
];

describeProxy('behind an appending proxy (nginx, $proxy_add_x_forwarded_for)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-trust-proxy-'));
  const servers: ServerProcess[] = [];
  const proxyPorts: number[] = [];
  let nginx: ChildProcess | undefined;

  beforeAll(async () => {
    const keysFile = join(dir, 'keys.yaml');
    writeFileSync(keysFile, stringify({
      plans: {
        free: { markets: ['CN', 'HK', 'US'], features: ['quotes', 'klines_daily'], rate_limit: { max: FREE_MAX, window_ms: 60_000 }, max_symbols: 10, max_connections: 1 },
        paid: { markets: ['CN', 'HK', 'US'], features: ['quotes'], rate_limit: { max: 1000, window_ms: 60_000 }, max_symbols: 10 },
      },
      keys: [],
      anonymous: { plan: 'free' },
    }));
    for (const { trustProxy } of settings) {
      servers.push(await startServer({
        KEYS_FILE: keysFile, MDQS__server__trustProxy: trustProxy, MDQS__server__pidFile: '""', MDQS__history__enabled: 'false',
        MDQS__auth__failuresPerMinute: String(FAILURES_PER_MINUTE),
      }));
      proxyPorts.push(await freePort());
    }
    const temp = join(dir, 'temp');
    mkdirSync(temp);
    const site = (port: number, upstream: number) => `
    server {
        listen ${LAN}:${port};
        listen 127.0.0.1:${port};
        location / {
            proxy_pass http://127.0.0.1:${upstream};
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            # Appends the peer to what the client sent, as load balancers and ingresses do.
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        }
    }`;
    const conf = `worker_processes 1;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path ${temp}/body;
    proxy_temp_path ${temp}/proxy;
    fastcgi_temp_path ${temp}/fastcgi;
    uwsgi_temp_path ${temp}/uwsgi;
    scgi_temp_path ${temp}/scgi;
    map $http_upgrade $connection_upgrade {
        default upgrade;
        ''      '';
    }
${servers.map((server, i) => site(proxyPorts[i], server.port)).join('\n')}
}
`;
    const confFile = join(dir, 'nginx.conf');
    writeFileSync(confFile, conf);
    nginx = spawn(NGINX!, ['-p', dir, '-c', confFile], { stdio: 'ignore' });
    for (const port of proxyPorts) {
      await until(async () => {
        try {
          return (await fetch(`http://${LAN}:${port}/healthz`)).status === 200;
        } catch {
          return false;
        }
      }, 'nginx');
    }
  }, 60_000);

  afterAll(async () => {
    if (nginx?.pid !== undefined && nginx.exitCode === null) {
      const exited = new Promise((r) => nginx!.once('exit', r));
      process.kill(nginx.pid, 'SIGQUIT');
      await exited;
    }
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  describe.each(settings.map((s, i) => ({ ...s, i })))('server.trustProxy: $name', ({ i }) => {
    /** Through nginx, from this machine's non-loopback address (`remote`) or from loopback. */
    const via = (from: 'remote' | 'loopback', path: string, headers: Record<string, string> = {}) =>
      fetch(`http://${from === 'remote' ? LAN : '127.0.0.1'}:${proxyPorts[i]}${path}`, { headers });

    it('a client beyond loopback that writes X-Forwarded-For: 127.0.0.1 is refused /metrics; a loopback client is served', async () => {
      for (const forwarded of ['127.0.0.1', '127.0.0.1, ::1', '::1']) {
        const res = await via('remote', '/metrics', { 'x-forwarded-for': forwarded });
        expect(res.status, forwarded).toBe(403);
        expect(await res.json()).toMatchObject({ error: 'NO_METRICS_PERMISSION' });
      }
      const local = await via('loopback', '/metrics');
      expect(local.status).toBe(200);
      expect(await local.text()).toContain('mdqs_http_requests_total');
    });

    it('the anonymous stream cap counts the client under the address nginx saw', async () => {
      const url = (from: string) => `ws://${from}:${proxyPorts[i]}/v1/ws/stream`;
      const first = await handshake(url(LAN!), { 'x-forwarded-for': '10.1.1.1' });
      expect(first.status).toBe(101);
      try {
        // The plan allows one connection per address: another one claiming another address is refused.
        const second = await handshake(url(LAN!), { 'x-forwarded-for': '10.1.1.2' });
        expect(second).toEqual({ status: 429, error: 'TOO_MANY_CONNECTIONS' });
        const local = await handshake(url('127.0.0.1'), {});
        expect(local.status).toBe(101);
        local.socket!.close();
      } finally {
        first.socket!.close();
      }
    });

    it('the free tier counts the client under the address nginx saw, whatever it writes', async () => {
      const remaining = async (res: Response) => {
        await res.arrayBuffer();
        return res.status === 200 ? Number(res.headers.get('x-ratelimit-remaining')) : res.status;
      };
      const start = await remaining(await via('remote', '/v1/universes', { 'x-forwarded-for': '127.0.0.1' }));
      expect(start).toBeGreaterThan(1);
      const seen: number[] = [];
      for (let n = 1; n <= start; n++) seen.push(await remaining(await via('remote', '/v1/universes', { 'x-forwarded-for': `10.9.8.${n}, 127.0.0.1` })));
      expect(seen).toEqual([...Array.from({ length: start - 1 }, (_, k) => start - 1 - k), 0]);
      const spent = await via('remote', '/v1/universes', { 'x-forwarded-for': '203.0.113.77' });
      expect(spent.status).toBe(429);
      expect(await spent.json()).toMatchObject({ error: 'RATE_LIMITED' });
      // Another address (loopback through the same proxy) has its own bucket.
      expect((await via('loopback', '/v1/universes')).status).toBe(200);
    });

    it('the failed-key budget counts the client under the address nginx saw', async () => {
      const statuses: number[] = [];
      for (let n = 0; n <= FAILURES_PER_MINUTE; n++) {
        const res = await via('remote', '/v1/quotes?symbols=AAPL.US', { 'x-api-key': `wrong-${n}`, 'x-forwarded-for': `10.7.7.${n}` });
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      expect(statuses).toEqual([...Array(FAILURES_PER_MINUTE).fill(401), 429]);
      const local = await via('loopback', '/v1/quotes?symbols=AAPL.US', { 'x-api-key': 'wrong-local' });
      expect(local.status).toBe(401);
    });
  });
});
