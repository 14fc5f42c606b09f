// The real server process on a real socket: every README "Example calls" curl line (parsed from
// README.md, so the test follows the README), keep-alive, log redaction, startup warnings,
// SIGHUP key reload and graceful shutdown on SIGTERM.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/access/create-key.ts';
import { ROOT, startServer, type ServerProcess } from './server-process.ts';

interface Example {
  line: string;
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** Split a shell line into words: single and double quotes, $VAR expansion, trailing comments. */
function shellWords(line: string, vars: Record<string, string>): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let i = 0;
  const expand = (text: string) => text.replace(/\$\{?(\w+)\}?/g, (_, name: string) => vars[name] ?? '');
  while (i < line.length) {
    const ch = line[i];
    if (ch === "'" || ch === '"') {
      const end = line.indexOf(ch, i + 1);
      const inner = line.slice(i + 1, end);
      word = (word ?? '') + (ch === '"' ? expand(inner) : inner);
      i = end + 1;
    } else if (/\s/.test(ch)) {
      if (word !== undefined) words.push(word);
      word = undefined;
      i++;
    } else if (ch === '#' && word === undefined) {
      break;
    } else {
      const start = i;
      while (i < line.length && !/[\s'"]/.test(line[i])) i++;
      word = (word ?? '') + expand(line.slice(start, i));
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

function readmeExamples(): Example[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## Example calls\s*$/m)[1];
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1];
  const vars: Record<string, string> = {};
  const out: Example[] = [];
  for (const line of block.split('\n')) {
    const assignment = /^(\w+)=(.*)$/.exec(line);
    if (assignment) {
      vars[assignment[1]] = shellWords(assignment[2], vars)[0];
      continue;
    }
    if (!line.startsWith('curl ')) continue;
    const words = shellWords(line, vars).slice(1);
    const headers: Record<string, string> = {};
    let body: string | undefined;
    let url = '';
    for (let k = 0; k < words.length; k++) {
      if (words[k] === '-H') {
        const [name, ...rest] = words[++k].split(':');
        headers[name.trim()] = rest.join(':').trim();
      } else if (words[k] === '-d') {
        body = words[++k];
      } else if (words[k].startsWith('http')) {
        url = words[k];
      }
    }
    out.push({ line, method: body === undefined ? 'GET' : 'POST', url, headers, body });
  }
  return out;
}

const examples = readmeExamples();
const dir = mkdtempSync(join(tmpdir(), 'mdqs-e2e-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the default server (npm start)', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('runs on Node 24', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(24);
  });

  it('warns loudly at startup about the demo key and the simulated market', () => {
    const warnings = server.logs.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warnings.some((m) => /DEMO API KEY/.test(m))).toBe(true);
    expect(warnings.some((m) => /SIMULATED/.test(m))).toBe(true);
  });

  it('README lists the example calls this test runs', () => {
    expect(examples.length).toBeGreaterThanOrEqual(15);
    for (const e of examples) expect(e.url, e.line).toMatch(/^http:\/\/localhost:8080\//);
    expect(examples.filter((e) => e.method === 'POST').length).toBeGreaterThanOrEqual(3);
  });

  it.each(examples.map((e) => [e.line, e] as const))('%s', async (_line, example) => {
    const url = example.url.replace('http://localhost:8080', server.base);
    const res = await fetch(url, { method: example.method, headers: example.headers, body: example.body });
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = JSON.parse(text);
    const path = new URL(url).pathname;
    if (path === '/healthz') expect(body).toEqual({ status: 'ok' });
    else if (path === '/readyz') expect(body.status).toBe('ready');
    else if (path === '/v1/openapi.json') expect(body).toMatchObject({ info: { version: '1.0.0' } });
    else {
      expect(body).toHaveProperty('data');
      // /v1/meta and /v1/me describe the service and the key, not market data: no X-Upstream.
      if (path !== '/v1/meta' && path !== '/v1/me') expect(res.headers.get('x-upstream')).toBe('sim');
      else if (path === '/v1/meta') expect(body.data.simulated).toBe(true);
      else expect(body.data).toMatchObject({ key_id: 'demo', plan: 'demo' });
    }
  });

  it('keeps a connection alive across two requests', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const once = () => new Promise<{ status: number; reused: boolean; socket: unknown }>((resolve, reject) => {
      const req = http.get(`${server.base}/v1/quotes?symbols=600519.SH`, { agent, headers: { 'x-api-key': 'demo-key' } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket, socket: req.socket }));
      });
      req.on('error', reject);
    });
    try {
      const first = await once();
      const second = await once();
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(first.reused).toBe(false);
      expect(second.reused).toBe(true);
      expect(second.socket).toBe(first.socket);
    } finally {
      agent.destroy();
    }
  });

  it('never logs the key: api_key is masked in every logged URL', async () => {
    const from = server.raw.length;
    for (const url of ['/v1/quotes?symbols=AAPL.US&api_key=demo-key', '/v1/nope?api_key=demo-key', '/v1/klines?api_key=demo-key&symbol=BAD',
      '/v1/quotes?api%5Fkey=demo-key&symbols=AAPL.US']) {
      await (await fetch(`${server.base}${url}`)).text();
    }
    await (await fetch(`${server.base}/v1/universes`, { headers: { 'X-API-Key': 'demo-key' } })).text();
    // Five requests, five completion lines: everything they log is in.
    const completed = () => server.raw.slice(from).filter((l) => l.includes('"request completed"')).length;
    await server.waitFor(() => completed() >= 5, 'five request completed lines');
    const lines = server.raw.slice(from);
    expect(lines.some((l) => l.includes('[redacted]'))).toBe(true);
    for (const line of lines) expect(line).not.toContain('demo-key');
  });
});

describe('SIGHUP reloads the keys file', () => {
  it('a key created while the server runs works after SIGHUP', async () => {
    const keysFile = join(dir, 'keys.yaml');
    copyFileSync(join(ROOT, 'config/keys.yaml'), keysFile);
    const server = await startServer({ KEYS_FILE: keysFile });
    try {
      const key = createKey(keysFile, 'e2e-team', 'basic');
      const url = `${server.base}/v1/quotes?symbols=600519.SH`;
      const before = await fetch(url, { headers: { 'x-api-key': key } });
      expect(before.status).toBe(401);
      expect(((await before.json()) as { error: string }).error).toBe('INVALID_API_KEY');
      server.proc.kill('SIGHUP');
      await server.waitFor((l) => l.msg === 'keys reloaded', 'keys reloaded');
      const after = await fetch(url, { headers: { 'x-api-key': key } });
      expect(after.status).toBe(200);
      expect(((await after.json()) as { data: { symbol: string }[] }).data[0].symbol).toBe('600519.SH');
      // The basic plan is CN only: the new key carries its plan.
      expect((await fetch(`${server.base}/v1/quotes?symbols=AAPL.US`, { headers: { 'x-api-key': key } })).status).toBe(403);
      for (const line of server.raw) expect(line).not.toContain(key);
    } finally {
      await server.stop();
    }
  });
});

describe('graceful shutdown on SIGTERM', () => {
  it('finishes the in-flight request, refuses new connections, exits 0', async () => {
    const server = await startServer({ LOG_LEVEL: 'debug', MDQS__adapters__sim__latency__fixedMs: '1500' });
    let stopped = false;
    try {
      const slow = fetch(`${server.base}/v1/quotes?symbols=600519.SH`, { headers: { 'x-api-key': 'demo-key' } });
      await server.waitFor((l) => l.msg === 'incoming request' && String((l.req as { url?: string })?.url).startsWith('/v1/quotes'), 'incoming request');
      server.proc.kill('SIGTERM');
      await server.waitFor((l) => l.msg.startsWith('shutting down'), 'shutting down');
      // New connections: refused once the listener is closed (until then, 503 SHUTTING_DOWN).
      let refused = false;
      for (let attempt = 0; attempt < 200 && !refused; attempt++) {
        const outcome = await new Promise<string>((resolve) => {
          const socket = connect(server.port, '127.0.0.1');
          socket.on('connect', () => {
            socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
            let text = '';
            socket.on('data', (chunk) => { text += String(chunk); });
            socket.on('close', () => resolve(text.split('\r\n')[0] ?? ''));
          });
          socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
        });
        if (outcome === 'ECONNREFUSED') refused = true;
        else {
          expect(['HTTP/1.1 503 Service Unavailable', '', 'ECONNRESET']).toContain(outcome);
          await new Promise((r) => setTimeout(r, 10));
        }
      }
      expect(refused).toBe(true);
      const res = await slow;
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: { symbol: string }[] }).data[0].symbol).toBe('600519.SH');
      const exit = await server.exited;
      stopped = true;
      expect(exit).toEqual({ code: 0, signal: null });
    } finally {
      if (!stopped) await server.stop();
    }
  });
});
