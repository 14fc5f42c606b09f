// checkRouting (src/upstream/routing-check.ts): the config is checked against the adapters'
// declared capabilities at boot; sim may not follow a real vendor unless allowSimFallback.
import { describe, expect, it } from 'vitest';
import type { Adapter, AdapterCapabilities } from '../../adapters/types.ts';
import { checkRouting } from '../../src/upstream/routing-check.ts';
import type { RoutingConfig } from '../../src/upstream/router.ts';
import { ALL_RESOURCES, fakeAdapter } from '../helpers/fake-adapter.ts';

function adapters(specs: Record<string, Partial<AdapterCapabilities>>): Map<string, Adapter> {
  return new Map(Object.entries(specs).map(([id, caps]) => [id, fakeAdapter(id, { caps })]));
}

const ALL = adapters({
  vendor: {},
  sim: {},
  nodepth: { resources: { ...ALL_RESOURCES, depth: false } },
  cnfactors: { resourceMarkets: { exFactors: ['CN'] } },
});
const SIM = new Set(['sim']);

function routing(markets: RoutingConfig['markets'], extra: Partial<RoutingConfig> & { allowSimFallback?: boolean; strict?: boolean } = {}) {
  return { markets, overrides: {}, ...extra };
}

const gap = (market: string, chain: string, resource: string) =>
  `routing: no adapter in the ${market} chain (${chain}) serves ${resource}; requests for it will fail with 502`;
const simAfterReal = (market: string, chain: string) =>
  `routing: ${market} falls back from a real vendor to simulated data (${chain}); remove the sim adapter from the chain or set routing.allowSimFallback: true`;

describe('checkRouting: capability gaps', () => {
  it('a market × resource no adapter in its chain serves is a warning naming the gap', () => {
    const report = checkRouting(routing({ CN: ['nodepth'], HK: ['vendor'], US: ['vendor'] }), ALL, SIM);
    expect(report).toEqual({ errors: [], warnings: [gap('CN', 'nodepth', 'depth')] });
  });

  it('under routing.strict the same gap is an error', () => {
    const report = checkRouting(routing({ CN: ['nodepth'], HK: ['vendor'], US: ['vendor'] }, { strict: true }), ALL, SIM);
    expect(report).toEqual({ errors: [gap('CN', 'nodepth', 'depth')], warnings: [] });
  });

  it('resourceMarkets are read: a CN-only resource leaves HK and US uncovered', () => {
    const report = checkRouting(routing({ CN: ['cnfactors'], HK: ['cnfactors'], US: ['vendor'] }), ALL, SIM);
    expect(report.warnings).toEqual([gap('HK', 'cnfactors', 'exFactors')]);
  });

  it('a later adapter in the chain, or an override, closes the gap', () => {
    expect(checkRouting(routing({ CN: ['nodepth', 'vendor'], HK: ['vendor'], US: ['vendor'] }), ALL, SIM))
      .toEqual({ errors: [], warnings: [] });
    expect(checkRouting(routing({ CN: ['nodepth'], HK: ['vendor'], US: ['vendor'] }, { overrides: { depth: { CN: ['vendor'] } } }), ALL, SIM))
      .toEqual({ errors: [], warnings: [] });
  });

  it('an override can open a gap of its own', () => {
    const report = checkRouting(routing({ CN: ['vendor'], HK: ['vendor'], US: ['vendor'] }, { overrides: { depth: { US: ['nodepth'] } } }), ALL, SIM);
    expect(report.warnings).toEqual([gap('US', 'nodepth', 'depth')]);
  });
});

describe('checkRouting: simulated data is never a silent fallback', () => {
  it('sim after a real vendor is an error (once per market)', () => {
    const report = checkRouting(routing({ CN: ['vendor', 'sim'], HK: ['sim'], US: ['vendor'] }), ALL, SIM);
    expect(report).toEqual({ errors: [simAfterReal('CN', 'vendor > sim')], warnings: [] });
  });

  it('allowed with allowSimFallback: true', () => {
    const report = checkRouting(routing({ CN: ['vendor', 'sim'], HK: ['sim'], US: ['vendor'] }, { allowSimFallback: true }), ALL, SIM);
    expect(report).toEqual({ errors: [], warnings: [] });
  });

  it('sim alone, or sim before a real vendor, is not a fallback', () => {
    expect(checkRouting(routing({ CN: ['sim'], HK: ['sim', 'vendor'], US: ['sim'] }), ALL, SIM)).toEqual({ errors: [], warnings: [] });
  });

  it('an override chain falling back to sim is refused too', () => {
    const report = checkRouting(routing({ CN: ['vendor'], HK: ['vendor'], US: ['vendor'] }, { overrides: { depth: { US: ['nodepth', 'sim'] } } }), ALL, SIM);
    expect(report.errors).toEqual([simAfterReal('US', 'nodepth > sim')]);
  });

  it('what counts as simulated is the set given (a sim under another id)', () => {
    const report = checkRouting(routing({ CN: ['vendor', 'nodepth'], HK: ['vendor'], US: ['vendor'] }), ALL, new Set(['nodepth']));
    expect(report.errors).toEqual([simAfterReal('CN', 'vendor > nodepth')]);
  });
});
