// Issue 43.5: a failure answer names every adapter tried with the class of its failure
// (details.attempts), the log says each (adapter, class) once per interval with the count of the
// repeats it left out and no stack trace, and a vendor configured without the key it needs warns at
// boot. The vendors are the real Yahoo and Eastmoney adapters on the real HTTP layer
// (productionDeps), failing for real: a host name under .invalid (RFC 6761: never resolves, no
// network needed), a closed local port, a local server answering 500 / 503 or never answering.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../config/schema.ts';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { FAILURE_LOG_INTERVAL_MS } from '../../src/upstream/failure-log.ts';
import { loadDefaultConfig } from '../../config/load.ts';
import { buildApp } from '../../src/app.ts';
import { CN_MORNING, KEYS, testKeyStore } from '../helpers/app.ts';
import { captureLines } from '../helpers/log-lines.ts';
import { freePort } from '../redis/support.ts';

const UNRESOLVABLE = 'http://query2.finance.invalid';

const servers: Server[] = [];
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A local "vendor" answering every request with `respond` (or never, for 'hang'); its origin. */
async function vendorServer(respond: ((res: ServerResponse) => void) | 'hang'): Promise<string> {
  const server = createServer((_req, res) => {
    if (respond !== 'hang') respond(res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const status = (code: number) => (res: ServerResponse) => {
  res.writeHead(code, { 'content-type': 'text/plain' });
  res.end('vendor trouble');
};

interface Chain {
  yahoo: string;
  eastmoney: string;
  failureThreshold?: number;
  clock?: { t: number };
}

/**
 * The app with CN routed yahoo → eastmoney: the real adapters on the real HTTP layer
 * (productionDeps), no retry, a 400 ms deadline; the lines it logs at warn and above.
 */
async function built(chain: Chain, configure?: (config: Config) => void): Promise<{ app: FastifyInstance; lines: string[] }> {
  const clock = chain.clock ?? { t: CN_MORNING };
  const now = () => clock.t;
  const { stream, lines } = captureLines();
  const config = loadDefaultConfig();
  config.history = { ...config.history, enabled: false };
  const http = { timeoutMs: 400, retry: { maxRetries: 0 as const }, breaker: { failureThreshold: chain.failureThreshold ?? 100, openMs: 30_000 } };
  config.routing.markets.CN = ['yahoo', 'eastmoney'];
  config.adapters.yahoo = { baseUrl: chain.yahoo, http };
  config.adapters.eastmoney = { quoteHosts: [chain.eastmoney], historyHosts: [chain.eastmoney], http };
  configure?.(config);
  const deps = productionDeps(now);
  const adapters = createAdapters(config.routing, config.adapters, deps);
  const app = await buildApp({ config, keys: testKeyStore(), adapters, now, upstreamClients: deps.clients, logger: { level: 'warn', stream } as never });
  await app.ready();
  apps.push(app);
  return { app, lines };
}

const quote = (app: FastifyInstance) => app.inject({ url: '/v1/quotes?symbols=600519.SH', headers: { 'x-api-key': KEYS.demo } });
const warnLines = (lines: string[], msg: string) => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === msg);

describe('details.attempts: every adapter tried, with the class of its failure', () => {
  it('a host that does not resolve, then a closed port: dns, then connect; details.adapter stays the last one', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const { app } = await built({ yahoo: UNRESOLVABLE, eastmoney: closed });
    const res = await quote(app);
    expect(res.statusCode).toBe(502);
    const body = res.json();
    expect(body.error).toBe('UPSTREAM_ERROR');
    expect(body.details.adapter).toBe('eastmoney');
    expect(body.details.attempts).toEqual([
      { adapter: 'yahoo', cause: 'dns', message: expect.stringMatching(/^the vendor's host name did not resolve \((ENOTFOUND|EAI_AGAIN)\)$/) },
      { adapter: 'eastmoney', cause: 'connect', message: 'no connection to the vendor (ECONNREFUSED)' },
    ]);
    // The host name stays out of the answer (it is in the log).
    expect(res.body).not.toContain('.invalid');
  });

  it('a vendor answering 500, then one answering 503: http_status with each status', async () => {
    const { app } = await built({ yahoo: await vendorServer(status(500)), eastmoney: await vendorServer(status(503)) });
    const res = await quote(app);
    expect(res.statusCode).toBe(502);
    expect(res.json().details).toEqual({
      adapter: 'eastmoney', status: 503,
      attempts: [
        { adapter: 'yahoo', cause: 'http_status', status: 500, message: 'the vendor answered HTTP 500' },
        { adapter: 'eastmoney', cause: 'http_status', status: 503, message: 'the vendor answered HTTP 503' },
      ],
    });
    expect(res.body).not.toContain('vendor trouble');
  });

  it('a vendor that never answers, then one that rate-limits: timeout, then rate_limited (503 with Retry-After)', async () => {
    const limited = await vendorServer((res) => {
      res.writeHead(429, { 'retry-after': '7' });
      res.end();
    });
    const { app } = await built({ yahoo: await vendorServer('hang'), eastmoney: limited });
    const res = await quote(app);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('7');
    const attempts = res.json().details.attempts;
    expect(attempts.map((a: { adapter: string; cause: string }) => `${a.adapter} ${a.cause}`)).toEqual(['yahoo timeout', 'eastmoney rate_limited']);
    expect(attempts[1].status).toBe(429);
  });

  it('once both circuits are open: circuit_open for each, neither vendor asked', async () => {
    let asked = 0;
    const failing = await vendorServer((res) => {
      asked += 1;
      status(500)(res);
    });
    const { app } = await built({ yahoo: failing, eastmoney: failing, failureThreshold: 1 });
    expect((await quote(app)).statusCode).toBe(502);
    expect(asked).toBe(2);
    const res = await quote(app);
    expect(res.statusCode).toBe(503);
    expect(res.json().details.attempts.map((a: { cause: string }) => a.cause)).toEqual(['circuit_open', 'circuit_open']);
    expect(asked).toBe(2);
  });
});

describe('the failure log: one line per adapter and class per interval', () => {
  it('ten failing requests log each (adapter, class) once, without a stack; the next interval says how many were left out', async () => {
    const clock = { t: CN_MORNING };
    const closed = `http://127.0.0.1:${await freePort()}`;
    const { app, lines } = await built({ yahoo: UNRESOLVABLE, eastmoney: closed, clock });
    const atBoot = lines.length;
    for (let i = 0; i < 10; i++) expect((await quote(app)).statusCode).toBe(502);
    const first = warnLines(lines, 'upstream call failed');
    expect(first.map((l) => `${l.adapter} ${l.cause} ${l.suppressed}`)).toEqual(['yahoo dns 0', 'eastmoney connect 0']);
    expect(first[0].host).toBe('query2.finance.invalid');
    expect(first[1].code).toBe('ECONNREFUSED');
    // No stack trace, and no line per request for these failures.
    expect(lines.join('\n')).not.toMatch(/"stack"|\n\s+at /);
    expect(warnLines(lines, 'upstream failure')).toEqual([]);
    expect(lines.slice(atBoot), 'every line the ten requests logged').toHaveLength(2);

    clock.t += FAILURE_LOG_INTERVAL_MS - 1;
    await quote(app);
    expect(warnLines(lines, 'upstream call failed')).toHaveLength(2);
    clock.t += 1;
    await quote(app);
    const all = warnLines(lines, 'upstream call failed');
    expect(all.slice(2).map((l) => `${l.adapter} ${l.cause} ${l.suppressed}`)).toEqual(['yahoo dns 10', 'eastmoney connect 10']);
  });
});

describe('a vendor configured without the key it needs warns at boot', () => {
  const bootWarnings = async (block: Record<string, unknown>) => {
    const { lines } = await built({ yahoo: UNRESOLVABLE, eastmoney: UNRESOLVABLE }, (config) => {
      config.adapters.tickflow = block;
      config.routing.markets.US = ['tickflow'];
    });
    return lines.map((l) => JSON.parse(l)).filter((l) => l.check === 'credentials').map((l) => l.msg as string);
  };

  it('tickflow on its paid API with an empty apiKey', async () => {
    const warnings = await bootWarnings({ apiKey: '' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^adapters\.tickflow\.apiKey is empty, but api\.tickflow\.org \(tier paid\) needs a key/);
    expect(warnings[0]).toContain('MDQS__adapters__tickflow__apiKey');
  });

  it('no warning with a key, or on the keyless free tier', async () => {
    expect(await bootWarnings({ apiKey: 'k-123' })).toEqual([]);
    expect(await bootWarnings({ baseUrl: 'https://free-api.tickflow.org' })).toEqual([]);
    expect(await bootWarnings({ baseUrl: 'https://free-api.tickflow.org', tier: 'paid' })).toHaveLength(1);
  });
});
