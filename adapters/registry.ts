// Adapter id → factory. Only adapters named by the routing config are built, each from its
// `adapters.<id>` options block.
import type { Adapter, AdapterDeps } from './types.ts';
import { createSimAdapter, type SimOptions } from './sim/index.ts';

export type AdapterBuilder = (options: Record<string, unknown>, deps: AdapterDeps) => Adapter;

export const ADAPTER_FACTORIES: Record<string, AdapterBuilder> = {
  sim: (options, deps) => createSimAdapter(options as SimOptions, deps),
};

export interface RoutingLike {
  markets: Record<string, string[]>;
  overrides: Record<string, Partial<Record<string, string[]>>>;
}

/** Every adapter id the routing refers to, in first-mention order. */
export function referencedAdapters(routing: RoutingLike): string[] {
  const ids: string[] = [];
  const add = (chain: string[] | undefined) => {
    for (const id of chain ?? []) if (!ids.includes(id)) ids.push(id);
  };
  for (const chain of Object.values(routing.markets)) add(chain);
  for (const perMarket of Object.values(routing.overrides)) for (const chain of Object.values(perMarket)) add(chain);
  return ids;
}

export function createAdapters(
  routing: RoutingLike,
  adapterOptions: Record<string, Record<string, unknown>>,
  deps: (id: string, options: Record<string, unknown>) => AdapterDeps,
  factories: Record<string, AdapterBuilder> = ADAPTER_FACTORIES,
): Map<string, Adapter> {
  const adapters = new Map<string, Adapter>();
  const unknown = referencedAdapters(routing).filter((id) => factories[id] === undefined);
  if (unknown.length > 0) {
    throw new Error(`unknown adapter ids in routing: ${unknown.join(', ')} (known: ${Object.keys(factories).join(', ')})`);
  }
  for (const id of referencedAdapters(routing)) {
    const options = adapterOptions[id] ?? {};
    adapters.set(id, factories[id](options, deps(id, options)));
  }
  return adapters;
}
