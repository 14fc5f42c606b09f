// Build the real app on the sim adapter with a fixed clock and a test keys set.
import type { FastifyInstance } from 'fastify';
import { loadDefaultConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { createAdapters } from '../../src/upstream/registry.ts';
import type { Adapter } from '../../adapters/types.ts';
import { FEATURES, KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { buildApp, type AppOptions } from '../../src/app.ts';

/** Wednesday 2025-06-18 10:15:30 Asia/Shanghai (02:15:30Z): CN in session, HK in session, US closed. */
export const CN_MORNING = Date.UTC(2025, 5, 18, 2, 15, 30);

export const KEYS = {
  demo: 'demo-key',
  cnDaily: 'cn-daily-key',
  noBatch: 'no-batch-key',
  tiny: 'tiny-limit-key',
};

export function testKeyStore(): KeyStore {
  return new KeyStore(parseKeysFile({
    plans: {
      demo: {
        markets: ['CN', 'HK', 'US', 'CN_FUTURES'],
        features: [...FEATURES],
        rate_limit: { max: 100000, window_ms: 60000 },
        max_symbols: 100,
      },
      cn_daily: {
        markets: ['CN'],
        features: ['quotes', 'klines_daily', 'instruments'],
        rate_limit: { max: 1000, window_ms: 60000 },
        max_symbols: 3,
      },
      no_batch: {
        markets: ['CN', 'HK', 'US'],
        features: FEATURES.filter((f) => f !== 'batch'),
        rate_limit: { max: 1000, window_ms: 60000 },
        max_symbols: 50,
      },
      tiny: {
        markets: ['CN', 'HK', 'US'],
        features: ['quotes'],
        rate_limit: { max: 3, window_ms: 60000 },
        max_symbols: 10,
      },
    },
    keys: [
      { id: 'demo', plan: 'demo', sha256: sha256Hex(KEYS.demo), demo: true },
      { id: 'cn-daily', plan: 'cn_daily', sha256: sha256Hex(KEYS.cnDaily) },
      { id: 'no-batch', plan: 'no_batch', sha256: sha256Hex(KEYS.noBatch) },
      { id: 'tiny', plan: 'tiny', sha256: sha256Hex(KEYS.tiny) },
    ],
  }));
}

export interface TestAppOptions extends Partial<AppOptions> {
  now?: () => number;
  configure?: (config: Config) => void;
}

export async function buildTestApp(options: TestAppOptions = {}): Promise<{ app: FastifyInstance; adapters: Map<string, Adapter>; config: Config }> {
  const config = loadDefaultConfig();
  // The candle history store is a file shared by every app that opens it: tests that want it
  // turn it on with their own path (or pass `history`).
  config.history = { ...config.history, enabled: false };
  options.configure?.(config);
  const now = options.now ?? (() => CN_MORNING);
  const adapters = (options.adapters as Map<string, Adapter> | undefined)
    ?? createAdapters(config.routing, config.adapters, () => ({ now }));
  const app = await buildApp({ config, keys: options.keys ?? testKeyStore(), adapters, now, logger: options.logger ?? false, ...options });
  await app.ready();
  return { app, adapters, config };
}
