// The documented vendor example config validates and builds every adapter it names.
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../config/load.ts';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { checkRouting } from '../../src/upstream/routing-check.ts';

describe('config/vendors.example.yaml', () => {
  it('validates and builds tickflow, eastmoney and yahoo with their capabilities; no chain falls back to sim', () => {
    const file = fileURLToPath(new URL('../../config/vendors.example.yaml', import.meta.url));
    // Only what differs from config/default.yaml; CONFIG_FILE merges it over the default.
    const { config } = loadConfig({ CONFIG_FILE: file });
    const adapters = createAdapters(config.routing, config.adapters, productionDeps(() => 0));
    // Issue 8: the example has no simulated market in any chain, and covers every market × resource.
    expect([...adapters.keys()]).toEqual(['tickflow', 'eastmoney', 'yahoo']);
    expect(adapters.get('yahoo')?.capabilities.resources.depth).toBe(false);
    expect(adapters.get('yahoo')?.capabilities.amount).toBe(false);
    expect(checkRouting({ ...config.routing, strict: true }, adapters, new Set())).toEqual({ errors: [], warnings: [] });
  });

  it('an unknown adapter id in the routing is refused with the list of known ones', () => {
    expect(() => createAdapters({ markets: { CN: ['nope'] }, overrides: {} }, {}, () => ({ now: () => 0 })))
      .toThrow(/unknown adapter ids in routing: nope/);
  });
});
