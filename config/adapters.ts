// The parts of the config that name adapters: which adapter types exist, what an
// `adapters.<id>` block of each type may hold (the options schema each adapter declares next to its
// factory, adapters/<type>/options.ts, plus `type`, plus `http` for the vendors that talk HTTP),
// and which ids the routing and the history store may name. config/load.ts checks these with the
// rest of the config, so check-config and the boot refuse the same mistakes with the same lines.
// The option schemas are leaf modules: checking a config loads no adapter code.
import { Type, type Static, type TObject } from 'typebox';
import { SIM_OPTIONS } from '../adapters/sim/options.ts';
import { TICKFLOW_HTTP, TICKFLOW_OPTIONS } from '../adapters/tickflow/options.ts';
import { EASTMONEY_HTTP, EASTMONEY_OPTIONS } from '../adapters/eastmoney/options.ts';
import { YAHOO_HTTP, YAHOO_OPTIONS } from '../adapters/yahoo/options.ts';

/** What a vendor's HTTP layer uses when its block's `http` leaves a setting out. */
export interface HttpDefaults {
  readonly timeoutMs: number;
  readonly connections: number;
  readonly budget: { readonly max: number; readonly windowMs: number };
}

export interface AdapterType {
  /** What the block may hold besides `type` and `http`. */
  readonly options: TObject;
  /** Present exactly for the adapters that talk HTTP: they get an HTTP layer with these defaults. */
  readonly http?: HttpDefaults;
}

/** Every adapter type, by the id it runs under unless a block sets `type`. */
export const ADAPTER_TYPES = {
  sim: { options: SIM_OPTIONS },
  tickflow: { options: TICKFLOW_OPTIONS, http: TICKFLOW_HTTP },
  eastmoney: { options: EASTMONEY_OPTIONS, http: EASTMONEY_HTTP },
  yahoo: { options: YAHOO_OPTIONS, http: YAHOO_HTTP },
} as const satisfies Record<string, AdapterType>;

export type AdapterTypeName = keyof typeof ADAPTER_TYPES;

const Ms = (min: number, max: number) => Type.Optional(Type.Integer({ minimum: min, maximum: max }));

/** `adapters.<id>.http` of an HTTP vendor: its HTTP layer (src/upstream/http.ts) and resilience layer. */
const VENDOR_HTTP = Type.Object({
  /** Deadline of one call, one retry included (also the adapter's resilience deadline), ms. */
  timeoutMs: Ms(50, 120_000),
  /** Keep-alive sockets per origin. */
  connections: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 })),
  /** Network errors and 502/503/504 only, never a 429. */
  retry: Type.Optional(Type.Object({
    maxRetries: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)])),
    baseDelayMs: Ms(0, 10_000),
  })),
  /** This vendor's circuit; default upstream.breaker. */
  breaker: Type.Optional(Type.Object({
    failureThreshold: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    openMs: Ms(100, 3_600_000),
  })),
  /** Outbound requests per window that we never exceed (the vendor's quota). */
  budget: Type.Optional(Type.Object({
    max: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    windowMs: Ms(1000, 86_400_000),
  })),
});

export type VendorHttpSettings = Static<typeof VENDOR_HTTP>;

function isAdapterType(name: unknown): name is AdapterTypeName {
  return typeof name === 'string' && Object.hasOwn(ADAPTER_TYPES, name);
}

/** The adapter type an id runs: its block's `type`, else the id itself; undefined when neither is known. */
export function adapterTypeOf(id: string, block: Record<string, unknown> | undefined): AdapterTypeName | undefined {
  const type = block?.type ?? id;
  return isAdapterType(type) ? type : undefined;
}

/** The HTTP defaults of an id's adapter type, or undefined for an adapter that makes no HTTP calls. */
export function httpDefaultsOf(id: string, block: Record<string, unknown> | undefined): HttpDefaults | undefined {
  const type = adapterTypeOf(id, block);
  return type === undefined ? undefined : (ADAPTER_TYPES[type] as AdapterType).http;
}

type S = Record<string, unknown>;

const TypeSetting = Type.Optional(Type.String({ minLength: 1 }));

/** A block whose type is unknown: only `type` is checked (its own problem says what is wrong). */
const OPEN_BLOCK: S = { type: 'object', properties: { type: TypeSetting }, patternProperties: { '^': {} } };

const blockSchemas = new Map<AdapterTypeName, S>();

/** The schema of an `adapters.<id>` block of this type. */
function blockSchema(type: AdapterTypeName): S {
  let schema = blockSchemas.get(type);
  if (schema === undefined) {
    const spec: AdapterType = ADAPTER_TYPES[type];
    // A non-HTTP adapter's `http` is refused by adapterProblems with its own message.
    const http = spec.http !== undefined ? { http: Type.Optional(VENDOR_HTTP) } : { http: Type.Optional(Type.Unknown()) };
    schema = Type.Object({ type: TypeSetting, ...spec.options.properties, ...http }) as unknown as S;
    blockSchemas.set(type, schema);
  }
  return schema;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The config schema with `adapters` spelled out for this config: each block checked against its
 * type's options (unknown keys, bounds) by the same walk as every other setting.
 */
export function withAdapterBlocks(schema: TObject, raw: unknown): TObject {
  const blocks = isMapping(raw) && isMapping(raw.adapters) ? raw.adapters : {};
  const properties: Record<string, S> = {};
  for (const [id, block] of Object.entries(blocks)) {
    const type = adapterTypeOf(id, isMapping(block) ? block : undefined);
    properties[id] = type === undefined ? OPEN_BLOCK : blockSchema(type);
  }
  const adapters = { type: 'object', properties };
  return { ...schema, properties: { ...schema.properties, adapters } } as TObject;
}

export interface AdapterIdProblem {
  /** Path segments of the setting. */
  path: string[];
  /** The message after "<path>: " and before the source. */
  what: string;
  /** Said after the source. */
  hint: string;
  /** A near known name, said as "did you mean" instead of the hint; `under`: said as a setting path. */
  nearest?: { name: string; candidates: string[]; under?: string[] };
}

/**
 * Mistakes in the names of adapters: a block whose id is no adapter and that sets no `type`, a
 * `type` that is no adapter, an `http` block for an adapter that makes no HTTP calls, and routing
 * chains or history.disabledAdapters naming an id that is neither a type nor a block.
 */
export function adapterIdProblems(raw: unknown): AdapterIdProblem[] {
  if (!isMapping(raw)) return [];
  const out: AdapterIdProblem[] = [];
  const types = Object.keys(ADAPTER_TYPES);
  const blocks = isMapping(raw.adapters) ? raw.adapters : {};
  for (const [id, block] of Object.entries(blocks)) {
    if (!isMapping(block)) continue;
    if (block.type !== undefined) {
      if (typeof block.type === 'string' && block.type !== '' && !isAdapterType(block.type)) {
        out.push({ path: ['adapters', id, 'type'], what: `unknown adapter type ${block.type}`, hint: `adapter types: ${types.join(', ')}`, nearest: { name: block.type, candidates: types } });
      }
    } else if (!isAdapterType(id)) {
      out.push({
        path: ['adapters', id], what: `unknown adapter ${id}`,
        hint: `adapters: ${types.join(', ')}; another id runs one of them with adapters.${id}.type`,
        nearest: { name: id, candidates: types, under: ['adapters'] },
      });
    }
    const type = adapterTypeOf(id, block);
    if (type !== undefined && block.http !== undefined && httpDefaultsOf(id, block) === undefined) {
      out.push({ path: ['adapters', id, 'http'], what: `${type} makes no HTTP calls`, hint: 'its deadline and breaker are upstream.deadlineMs and upstream.breaker' });
    }
  }
  const ids = [...new Set([...types, ...Object.keys(blocks)])];
  const check = (chain: unknown, path: string[]) => {
    if (!Array.isArray(chain)) return;
    chain.forEach((id, i) => {
      if (typeof id !== 'string' || id === '' || ids.includes(id)) return;
      out.push({
        path: [...path, String(i)], what: `unknown adapter ${id}`,
        hint: `adapters: ${ids.join(', ')}; another id needs an adapters.${id} block with a type`,
        nearest: { name: id, candidates: ids },
      });
    });
  };
  const routing = isMapping(raw.routing) ? raw.routing : {};
  if (isMapping(routing.markets)) for (const [market, chain] of Object.entries(routing.markets)) check(chain, ['routing', 'markets', market]);
  if (isMapping(routing.overrides)) {
    for (const [resource, perMarket] of Object.entries(routing.overrides)) {
      if (!isMapping(perMarket)) continue;
      for (const [market, chain] of Object.entries(perMarket)) check(chain, ['routing', 'overrides', resource, market]);
    }
  }
  if (isMapping(raw.history)) check(raw.history.disabledAdapters, ['history', 'disabledAdapters']);
  return out;
}
