// API keys never reach a log line, and never reach a cache key (docs/contract.md#access-keys-plans-rate-limits). The log half runs
// the app in a child process with buildApp's own production logger (a test-supplied logger would
// replace its serializers and redact paths), sends the key every way a client can, through 200,
// 400, 401, 404 and 429 paths, and searches every line of the log for the key in any spelling.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FEATURES, KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildTestApp } from '../helpers/app.ts';
import type { ChildKeys, ChildRequest } from '../helpers/redaction-child.ts';

const CHILD = fileURLToPath(new URL('../helpers/redaction-child.ts', import.meta.url));
const SECRETS: ChildKeys = { alpha: 'sk-live-Alpha7Q9zX2v', bravo: 'sk-live-Bravo4M8wK5t', tiny: 'sk-live-Tiny3R6pL1q' };
const WRONG = 'sk-live-Wrong0Zz81Qa';

/** Every spelling of a key that could leak: as sent, percent-encoded, case-folded. */
function spellings(key: string): string[] {
  const encoded = key.replace(/-/g, '%2D');
  return [key, encoded, encoded.toLowerCase(), key.toLowerCase(), key.toUpperCase(), key.slice(8)];
}

function runChild(requests: ChildRequest[]): Promise<{ stdout: string; results: ChildResult[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, REQUESTS: JSON.stringify(requests), SECRETS: JSON.stringify(SECRETS) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stderr.split('\n').find((l) => l.startsWith('RESULTS '));
      if (code !== 0 || line === undefined) reject(new Error(`child exited ${code}: ${stderr}`));
      else resolve({ stdout, results: JSON.parse(line.slice('RESULTS '.length)) });
    });
  });
}

interface ChildResult {
  url: string;
  status: number;
  error?: string;
  body: string;
  headers: string;
}

const Q = '/v1/quotes?symbols=600519.SH';
const REQUESTS: ChildRequest[] = [
  { method: 'GET', url: Q, headers: { 'x-api-key': SECRETS.alpha } },
  { method: 'GET', url: `${Q}&api_key=${SECRETS.alpha}` },
  { method: 'GET', url: `/v1/quotes?api_key=${SECRETS.alpha}&symbols=600519.SH` },
  { method: 'GET', url: `${Q}&api%5Fkey=${SECRETS.alpha}` },
  { method: 'GET', url: `${Q}&api%5fkey=${SECRETS.bravo}` },
  { method: 'GET', url: `${Q}&api_key=${SECRETS.bravo.replace(/-/g, '%2D')}` },
  { method: 'GET', url: `${Q}&api_key=${SECRETS.alpha}&api_key=${SECRETS.bravo}` },
  { method: 'GET', url: `/v1/klines?symbol=600519.SH&count=3&api_key=${SECRETS.alpha}` },
  { method: 'POST', url: `/v1/quotes?api_key=${SECRETS.alpha}`, payload: { symbols: ['600519.SH'] } },
  // 400
  { method: 'GET', url: `/v1/quotes?symbols=NOPE&api_key=${SECRETS.alpha}` },
  // 401: a wrong key, in the header and in the query, and a key the parser does not recognise
  { method: 'GET', url: Q, headers: { 'x-api-key': WRONG } },
  { method: 'GET', url: `${Q}&api_key=${WRONG}` },
  { method: 'GET', url: `${Q}&API_KEY=${SECRETS.alpha}` },
  // 404 route (no authentication happens), and a path that is not valid percent-encoding
  { method: 'GET', url: `/v1/nothing-here?api_key=${SECRETS.alpha}` },
  { method: 'GET', url: `/v1/quo%zztes?api_key=${SECRETS.alpha}` },
  // 429: the tiny plan allows 2 a minute
  { method: 'GET', url: Q, headers: { 'x-api-key': SECRETS.tiny } },
  { method: 'GET', url: `${Q}&api_key=${SECRETS.tiny}` },
  { method: 'GET', url: Q, headers: { 'x-api-key': SECRETS.tiny } },
  { method: 'GET', url: `${Q}&api_key=${SECRETS.tiny}` },
  { method: 'GET', url: `${Q}&api%5Fkey=${SECRETS.tiny}` },
];

describe('keys never reach a log line', () => {
  let stdout: string;
  let results: ChildResult[];
  beforeAll(async () => {
    ({ stdout, results } = await runChild(REQUESTS));
  }, 60_000);

  it('the requests took the intended paths', () => {
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 400, 401, 401, 401, 404, 400, 200, 200, 429, 429, 429]);
    expect(results.filter((r) => !r.url.startsWith('/v1/quo%zz')).map((r) => r.error).filter(Boolean)).toEqual([
      'INVALID_SYMBOL', 'INVALID_API_KEY', 'INVALID_API_KEY', 'MISSING_API_KEY', 'NOT_FOUND', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED',
    ]);
  });

  it('the log is the production one, and it logged every request with its (redacted) URL', () => {
    const lines = stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
    const urls = lines.map((l) => (l.req as { url?: string } | undefined)?.url).filter((u): u is string => u !== undefined);
    expect(urls).toContain('/v1/quotes?symbols=600519.SH&api_key=[redacted]');
    expect(urls).toContain('/v1/quotes?symbols=600519.SH&api%5Fkey=[redacted]');
    expect(urls).toContain('/v1/quotes?symbols=600519.SH&api_key=[redacted]&api_key=[redacted]');
    expect(urls).toContain('/v1/quotes?symbols=600519.SH&API_KEY=[redacted]');
    expect(urls).toContain('/v1/nothing-here?api_key=[redacted]');
    // Fastify answers an undecodable path before any hook runs, so that one may go unlogged.
    const completed = lines.filter((l) => l.msg === 'request completed');
    expect(completed.length).toBeGreaterThanOrEqual(REQUESTS.length - 1);
  });

  it.each([
    ['alpha', SECRETS.alpha],
    ['bravo', SECRETS.bravo],
    ['tiny', SECRETS.tiny],
    ['a wrong key', WRONG],
  ])('no line contains the %s key in any spelling', (_name, key) => {
    const lines = stdout.split('\n');
    for (const spelling of spellings(key)) {
      const leaking = lines.filter((l) => l.includes(spelling));
      expect(leaking, `log lines containing ${spelling}`).toEqual([]);
    }
  });

  it.each([
    ['alpha', SECRETS.alpha],
    ['tiny', SECRETS.tiny],
    ['a wrong key', WRONG],
  ])('no response echoes the %s key (body or headers)', (_name, key) => {
    const echoing = results.filter((r) => spellings(key).some((s) => r.body.includes(s) || r.headers.includes(s)));
    expect(echoing.map((r) => `${r.url} → ${r.status} ${r.body}`)).toEqual([]);
  });

  it('an undecodable path gets the service\'s own 400 error body', () => {
    const bad = results.find((r) => r.url.startsWith('/v1/quo%zz'));
    expect(bad?.status).toBe(400);
    const body = JSON.parse(bad?.body ?? '{}');
    expect(body).toMatchObject({ code: 400, error: 'INVALID_PARAMETER' });
    expect(typeof body.request_id).toBe('string');
    expect(JSON.parse(bad?.headers ?? '{}')['cache-control']).toBe('no-store');
  });
});

describe('keys are not part of any cache key', () => {
  let app: FastifyInstance;
  const A = 'cache-key-test-A-1';
  const B = 'cache-key-test-B-2';
  beforeAll(async () => {
    const keys = new KeyStore(parseKeysFile({
      plans: {
        full: {
          markets: ['CN', 'HK', 'US'],
          features: [...FEATURES],
          rate_limit: { max: 100000, window_ms: 60000 },
          max_symbols: 100,
        },
      },
      keys: [{ id: 'a', plan: 'full', sha256: sha256Hex(A) }, { id: 'b', plan: 'full', sha256: sha256Hex(B) }],
    }));
    ({ app } = await buildTestApp({ keys }));
  });
  afterAll(async () => {
    await app.close();
  });

  it.each([
    '/v1/quotes?symbols=600519.SH,00700.HK',
    '/v1/klines?symbol=600519.SH&period=1d&count=5',
    '/v1/depth?symbol=00700.HK',
    '/v1/universes/CN_ETF',
  ])('%s: a second key of the same plan, in the header or the query, is a response-cache HIT', async (url) => {
    const first = await app.inject({ method: 'GET', url, headers: { 'x-api-key': A } });
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-cache']).toBe('MISS');
    const byHeader = await app.inject({ method: 'GET', url, headers: { 'x-api-key': B } });
    expect(byHeader.headers['x-cache']).toBe('HIT');
    expect(byHeader.body).toBe(first.body);
    const byQuery = await app.inject({ method: 'GET', url: `${url}&api_key=${B}`.replace('CN_ETF&', 'CN_ETF?') });
    expect(byQuery.statusCode).toBe(200);
    expect(byQuery.headers['x-cache']).toBe('HIT');
    expect(byQuery.headers.etag).toBe(first.headers.etag);
  });
});
