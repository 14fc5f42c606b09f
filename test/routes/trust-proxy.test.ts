// Issue 42, item 5: server.trustProxy takes what Fastify's trustProxy takes besides true/false (a
// number of hops, the proxies' addresses or CIDRs as a list or a comma-separated string), and the
// client address is the first address not among the trusted proxies counting from the right of
// X-Forwarded-For. The end-to-end case through a real appending nginx is
// test/e2e/trust-proxy.test.ts; here every form of the setting, at load and on request.ip.
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { applyEnv, loadDefaultConfig, validateConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { KeyStore, parseKeysFile } from '../../src/access/keys.ts';
import { buildApp } from '../../src/app.ts';
import { createAdapters } from '../../src/upstream/registry.ts';
import { buildTestApp, CN_MORNING, testKeyStore } from '../helpers/app.ts';
import { configProblems } from '../helpers/config-errors.ts';

const raw = () => structuredClone(loadDefaultConfig()) as unknown as Record<string, unknown>;
const trustProxyOf = (value: string) => validateConfig(applyEnv(raw(), { MDQS__server__trustProxy: value })).server.trustProxy;

describe('server.trustProxy at load', () => {
  it.each([
    ['false', false],
    ['true', true],
    ['1', 1],
    ['2', 2],
    ['127.0.0.1', '127.0.0.1'],
    ['10.0.0.0/8, 127.0.0.1', '10.0.0.0/8, 127.0.0.1'],
    ['[10.244.0.0/16, "::1", fd00::/8]', ['10.244.0.0/16', '::1', 'fd00::/8']],
    ['[loopback, uniquelocal]', ['loopback', 'uniquelocal']],
    ['192.168.1.0/255.255.255.0', '192.168.1.0/255.255.255.0'],
  ])('MDQS__server__trustProxy=%s is taken as %j', (value, expected) => {
    expect(trustProxyOf(value)).toEqual(expected);
  });

  const expected = 'expected true, false, a number of proxy hops, or the proxies\' addresses or CIDRs (a list or a comma-separated string)';
  it.each([
    ['maybe', 'server.trustProxy: "maybe" is not an IP address, a CIDR (10.0.0.0/8) or one of loopback, linklocal, uniquelocal (MDQS__server__trustProxy)'],
    ['10.0.0.0/33', 'server.trustProxy: "10.0.0.0/33": the prefix length must be from 1 to 32 (MDQS__server__trustProxy)'],
    ['10.0.0.0/0', 'server.trustProxy: "10.0.0.0/0": the prefix length must be from 1 to 32 (MDQS__server__trustProxy)'],
    ['10.0.0.0/255.0.255.0', 'server.trustProxy: "10.0.0.0/255.0.255.0": the prefix length must be from 1 to 32 (MDQS__server__trustProxy)'],
    ['"10.0.0.1,"', 'server.trustProxy: "" is not an IP address, a CIDR (10.0.0.0/8) or one of loopback, linklocal, uniquelocal (MDQS__server__trustProxy)'],
    ['[127.0.0.1, "fe80::/129"]', 'server.trustProxy[1]: "fe80::/129": the prefix length must be from 1 to 128 (MDQS__server__trustProxy)'],
  ])('refuses %s, naming the entry', (value, problem) => {
    expect(configProblems(() => validateConfig(applyEnv(raw(), { MDQS__server__trustProxy: value }), new Map([['server/trustProxy', 'MDQS__server__trustProxy']]))))
      .toEqual([`${problem}; ${expected}`]);
  });

  it.each(['-1', '17', '[]', '""'])('refuses %s by the schema', (value) => {
    const problems = configProblems(() => validateConfig(applyEnv(raw(), { MDQS__server__trustProxy: value })));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^server\.trustProxy: got /);
  });
});

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

type TrustProxy = Config['server']['trustProxy'];

/** The app as the server builds it, plus a route that answers with request.ip. */
async function ipApp(trustProxy: TrustProxy): Promise<void> {
  const config = loadDefaultConfig();
  config.history = { ...config.history, enabled: false };
  config.server.trustProxy = trustProxy;
  const now = () => CN_MORNING;
  app = await buildApp({ config, keys: testKeyStore(), adapters: createAdapters(config.routing, config.adapters, () => ({ now })), now, logger: false });
  app.get('/test/ip', { config: { public: true, rateLimit: false } }, async (request) => ({ ip: request.ip }));
  await app.ready();
}

/** request.ip for a request from `peer` carrying X-Forwarded-For `forwarded`. */
async function ipOf(peer: string, forwarded?: string): Promise<string> {
  const res = await app!.inject({ url: '/test/ip', remoteAddress: peer, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } });
  expect(res.statusCode).toBe(200);
  return (res.json() as { ip: string }).ip;
}

/** The test app with a free tier of `freeMax` requests a minute per address. */
async function build(trustProxy: TrustProxy, freeMax = 100): Promise<FastifyInstance> {
  const keys = new KeyStore(parseKeysFile({
    plans: { free: { markets: ['CN', 'HK', 'US'], features: ['klines_daily'], rate_limit: { max: freeMax, window_ms: 60_000 }, max_symbols: 10 } },
    keys: [],
    anonymous: { plan: 'free' },
  }));
  ({ app } = await buildTestApp({ keys, configure: (config) => { config.server.trustProxy = trustProxy; } }));
  return app;
}

describe('the client address: the first untrusted one from the right of X-Forwarded-For', () => {
  // The client wrote "127.0.0.1, 198.51.100.1"; its real address is 203.0.113.7; two proxies
  // appended: 10.0.0.5 (the outer) and then the socket's peer 10.0.0.9 (the inner).
  const chain = '127.0.0.1, 198.51.100.1, 203.0.113.7, 10.0.0.5';

  it.each([
    [false, '10.0.0.9'],
    [0, '10.0.0.9'],
    [1, '10.0.0.5'],
    [2, '203.0.113.7'],
    ['10.0.0.0/8', '203.0.113.7'],
    ['10.0.0.9, 10.0.0.5', '203.0.113.7'],
    [['10.0.0.9', '10.0.0.5'], '203.0.113.7'],
    ['10.0.0.9', '10.0.0.5'],
    ['uniquelocal', '203.0.113.7'],
    // true trusts every peer: the leftmost entry, which the client chose (why it is documented as
    // safe only behind a proxy that overwrites the header).
    [true, '127.0.0.1'],
  ] as const)('trustProxy %j → %s', async (trustProxy, expected) => {
    await ipApp(trustProxy as TrustProxy);
    expect(await ipOf('10.0.0.9', chain)).toBe(expected);
  });

  it('a peer that is not a trusted proxy is the client, whatever it forwards', async () => {
    await ipApp('10.0.0.0/8');
    expect(await ipOf('203.0.113.7', '127.0.0.1')).toBe('203.0.113.7');
    expect(await ipOf('::ffff:10.0.0.9', '203.0.113.8')).toBe('203.0.113.8');
  });

  it('a hop count stops at the end of the header: a client with no proxy in front is itself', async () => {
    await ipApp(2);
    expect(await ipOf('10.0.0.9', '203.0.113.7')).toBe('203.0.113.7');
    expect(await ipOf('203.0.113.9')).toBe('203.0.113.9');
  });

  it('/metrics: a client beyond loopback writing 127.0.0.1 through an appending proxy on loopback is refused', async () => {
    for (const trustProxy of [1, '127.0.0.1', 'loopback'] as const) {
      await build(trustProxy);
      const spoofed = await app!.inject({ url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '127.0.0.1, 203.0.113.7' } });
      expect(spoofed.statusCode, String(trustProxy)).toBe(403);
      expect(spoofed.json()).toMatchObject({ error: 'NO_METRICS_PERMISSION' });
      const local = await app!.inject({ url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '127.0.0.1' } });
      expect(local.statusCode, String(trustProxy)).toBe(200);
      await app!.close();
      app = undefined;
    }
  });

  it('the free tier counts the real address, whatever the client writes in front of it', async () => {
    await build(1, 2);
    const via = (forwarded: string) => app!.inject({ url: '/v1/universes', remoteAddress: '10.0.0.9', headers: { 'x-forwarded-for': forwarded } });
    expect((await via('192.0.2.1, 203.0.113.7')).statusCode).toBe(200);
    expect((await via('192.0.2.2, 203.0.113.7')).statusCode).toBe(200);
    expect((await via('192.0.2.3, 203.0.113.7')).statusCode).toBe(429);
    expect((await via('203.0.113.8')).statusCode).toBe(200);
  });
});
