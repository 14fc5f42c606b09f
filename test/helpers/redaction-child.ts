// Child process for test/routes/redaction.test.ts. It builds the app with NO logger option, so the
// production logger of buildApp (its serializers and redact paths, writing to stdout) is the one
// under test, runs the requests given in the REQUESTS env variable through app.inject, and prints
// one `RESULTS <json>` line on stderr. stdout carries nothing but the app's pino log lines.
import { FEATURES, KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildTestApp } from './app.ts';

export interface ChildRequest {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  payload?: unknown;
}

export interface ChildKeys {
  alpha: string;
  bravo: string;
  tiny: string;
}

const requests = JSON.parse(process.env.REQUESTS ?? '[]') as ChildRequest[];
const secrets = JSON.parse(process.env.SECRETS ?? '{}') as ChildKeys;

const keys = new KeyStore(parseKeysFile({
  plans: {
    full: {
      markets: ['CN', 'HK', 'US'],
      features: [...FEATURES],
      rate_limit: { max: 100000, window_ms: 60000 },
      max_symbols: 100,
    },
    tiny: { markets: ['CN'], features: ['quotes'], rate_limit: { max: 2, window_ms: 60000 }, max_symbols: 10 },
  },
  keys: [
    { id: 'alpha', plan: 'full', sha256: sha256Hex(secrets.alpha) },
    { id: 'bravo', plan: 'full', sha256: sha256Hex(secrets.bravo) },
    { id: 'tiny', plan: 'tiny', sha256: sha256Hex(secrets.tiny) },
  ],
}));

const { app } = await buildTestApp({
  keys,
  logger: undefined,
  configure: (c) => {
    // Config['log']['level'] infers as never (config/schema.ts builds the union with .map).
    (c.log as { level: string }).level = 'trace';
  },
});
const results: Array<{ url: string; status: number; error?: string; body: string; headers: string }> = [];
for (const req of requests) {
  const res = await app.inject({ method: req.method, url: req.url, headers: req.headers, payload: req.payload as object | undefined });
  const error = res.statusCode >= 400 ? (res.json() as { error?: string }).error : undefined;
  results.push({ url: req.url, status: res.statusCode, error, body: res.body, headers: JSON.stringify(res.headers) });
}
await app.close();
process.stderr.write(`RESULTS ${JSON.stringify(results)}\n`);
