// A real listening server on the sim adapter with a clock the test moves, and the browser to
// drive it (Debian's chromium through playwright-core).
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser } from 'playwright-core';
import { FEATURES, KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import type { Config } from '../../config/schema.ts';
import { buildTestApp, CN_MORNING } from '../helpers/app.ts';

export const CHROMIUM = '/usr/bin/chromium';

export const BROWSER_KEYS = {
  demo: 'demo-key',
  /** Every feature, but CN and US only. */
  noHk: 'no-hk-key',
};

const ALL_FEATURES = FEATURES;

export function browserKeyStore(options: { demo?: boolean } = {}): KeyStore {
  return new KeyStore(parseKeysFile({
    plans: {
      demo: { markets: ['CN', 'HK', 'US', 'CN_FUTURES'], features: [...ALL_FEATURES], rate_limit: { max: 100000, window_ms: 60000 }, max_symbols: 100 },
      cn_us: { markets: ['CN', 'US'], features: [...ALL_FEATURES], rate_limit: { max: 100000, window_ms: 60000 }, max_symbols: 5 },
    },
    keys: [
      { id: 'demo', plan: 'demo', sha256: sha256Hex(BROWSER_KEYS.demo), demo: options.demo ?? true },
      { id: 'no-hk', plan: 'cn_us', sha256: sha256Hex(BROWSER_KEYS.noHk) },
    ],
  }));
}

export interface LiveServer {
  app: FastifyInstance;
  base: string;
  /** The server's clock (epoch ms); starts inside the CN morning session. */
  clock: { now: number };
  close(): Promise<void>;
}

/** `configure` edits the config before the app is built (e.g. the sim's injected faults). */
export async function startLiveServer(keys: KeyStore = browserKeyStore(), configure?: (config: Config) => void): Promise<LiveServer> {
  const clock = { now: CN_MORNING };
  const { app } = await buildTestApp({ now: () => clock.now, keys, ...(configure !== undefined ? { configure } : {}) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { app, base: `http://127.0.0.1:${address.port}`, clock, close: () => app.close() };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}
