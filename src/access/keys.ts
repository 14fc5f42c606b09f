// API keys and plans (docs/contract.md#access-keys-plans-rate-limits): a YAML file of plans and SHA-256 key hashes, looked up by
// hash and confirmed with a constant-time comparison. The key itself is never stored or logged.
// A key may carry `created` and `expires` (ISO dates); past `expires` it no longer authenticates
// (rotate-key leaves the old key valid for a grace period this way).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Type, type Static } from 'typebox';
import { ConfigError, readYamlWithSources, schemaProblems, sourceOf, type Sources } from '../../config/load.ts';
import type { Market } from '../domain.ts';

// The plan features, one list with the resource names (the descriptors are checked against it).
export { FEATURES, type Feature } from '../resources.ts';
import { FEATURES, type Feature } from '../resources.ts';

/** Plan defaults for the optional fields. */
export const PLAN_DEFAULTS = { maxSubscriptions: 200, maxConnections: 10, maxBars: 500_000 } as const;

/** An ISO date (UTC midnight) or a date-time with an explicit zone: never a local-time guess. */
const ISO_DATE = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?(Z|[+-]\\d{2}:\\d{2}))?$';

const PlanSchema = Type.Object({
  markets: Type.Array(Type.Union([Type.Literal('CN'), Type.Literal('HK'), Type.Literal('US'), Type.Literal('CN_FUTURES')]), { maxItems: 4 }),
  features: Type.Array(Type.Union(FEATURES.map((f) => Type.Literal(f)))),
  rate_limit: Type.Object({
    max: Type.Integer({ minimum: 1, maximum: 10_000_000 }),
    window_ms: Type.Integer({ minimum: 100, maximum: 86_400_000 }),
  }),
  max_symbols: Type.Integer({ minimum: 1, maximum: 10_000 }),
  /** Streaming: symbols subscribed at once per key (over its connections and both channels). Default 200. */
  max_subscriptions: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  /** Streaming: concurrent connections per key. Default 10. */
  max_connections: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  /** Bars × symbols one request may ask for. Default 500000. */
  max_bars: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
});

export const KeysFileSchema = Type.Object({
  plans: Type.Record(Type.String({ minLength: 1 }), PlanSchema),
  keys: Type.Array(Type.Object({
    id: Type.String({ minLength: 1 }),
    plan: Type.String({ minLength: 1 }),
    sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
    demo: Type.Optional(Type.Boolean()),
    created: Type.Optional(Type.String({ pattern: ISO_DATE })),
    expires: Type.Optional(Type.String({ pattern: ISO_DATE })),
  })),
  /** The free tier: the plan of requests that carry no key, limited per client address. Absent: a key is required. */
  anonymous: Type.Optional(Type.Object({
    plan: Type.String({ minLength: 1 }),
    demo: Type.Optional(Type.Boolean()),
  })),
});

export type KeysFile = Static<typeof KeysFileSchema>;

export interface Plan {
  name: string;
  markets: ReadonlySet<Market>;
  features: ReadonlySet<Feature>;
  rateLimit: { max: number; windowMs: number };
  maxSymbols: number;
  maxSubscriptions: number;
  maxConnections: number;
  maxBars: number;
}

export interface KeyEntry {
  id: string;
  plan: Plan;
  demo: boolean;
  hash: Buffer;
  created?: string;
  /** Epoch ms from which the key no longer authenticates. */
  expiresAt?: number;
  /** The free tier's entry (no key presented): its rate limit applies per client address. */
  anonymous?: true;
}

/** The id the free tier's entry carries in logs and metrics. */
export const ANONYMOUS_ID = 'anonymous';

export class KeysFileError extends ConfigError {
  constructor(problems: string[], source: string) {
    super(problems, source === 'keys file' ? source : `keys file ${source}`);
    this.name = 'KeysFileError';
  }
}

export function sha256Hex(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function at(sources: Sources, segments: string[]): string {
  const found = sourceOf(sources, segments);
  return found === undefined ? '' : ` (${found})`;
}

/**
 * Parse and validate a keys file's content in one pass: schema, unknown plans, duplicate ids and
 * one hash under two ids are all reported together. `sources` (from readYamlWithSources) adds file:line to each problem.
 */
export function parseKeysFile(data: unknown, source = 'keys file', sources: Sources = new Map()): KeyStoreSnapshot {
  const problems = schemaProblems(KeysFileSchema, data, sources);
  const raw = (typeof data === 'object' && data !== null ? data : {}) as { plans?: unknown; keys?: unknown; anonymous?: { plan?: unknown } };
  const planNames = typeof raw.plans === 'object' && raw.plans !== null ? Object.keys(raw.plans) : [];
  const anonymousPlan = raw.anonymous?.plan;
  if (typeof anonymousPlan === 'string' && anonymousPlan !== '' && !planNames.includes(anonymousPlan)) {
    problems.push(`anonymous.plan: names unknown plan ${anonymousPlan}${at(sources, ['anonymous', 'plan'])}; plans: ${planNames.join(', ') || 'none'}`);
  }
  const firstIndex = new Map<string, number>();
  // A key is found by its hash: one hash under two ids would authenticate as whichever came last.
  const firstHash = new Map<string, { index: number; id: string }>();
  (Array.isArray(raw.keys) ? raw.keys : []).forEach((key: unknown, i) => {
    if (typeof key !== 'object' || key === null) return;
    const { id, plan, sha256 } = key as { id?: unknown; plan?: unknown; sha256?: unknown };
    if (typeof plan === 'string' && plan !== '' && !planNames.includes(plan)) {
      problems.push(`keys[${i}].plan: key ${String(id)} names unknown plan ${plan}${at(sources, ['keys', String(i), 'plan'])}; plans: ${planNames.join(', ') || 'none'}`);
    }
    if (typeof sha256 === 'string' && /^[0-9a-fA-F]{64}$/.test(sha256)) {
      const hex = sha256.toLowerCase();
      const earlier = firstHash.get(hex);
      if (earlier !== undefined) {
        problems.push(`keys[${i}].sha256: key ${String(id)} has the same hash as key ${earlier.id} (keys[${earlier.index}])${at(sources, ['keys', String(i), 'sha256'])}; `
          + 'one key cannot belong to two ids: give each its own key (create-key) or remove one entry');
      } else {
        firstHash.set(hex, { index: i, id: String(id) });
      }
    }
    if (typeof id !== 'string') return;
    const first = firstIndex.get(id);
    if (first !== undefined) problems.push(`keys[${i}].id: duplicate key id ${id}${at(sources, ['keys', String(i), 'id'])}; first used by keys[${first}]`);
    else firstIndex.set(id, i);
  });
  if (problems.length > 0) throw new KeysFileError(problems, source);

  const file = data as KeysFile;
  const plans = new Map<string, Plan>();
  for (const [name, plan] of Object.entries(file.plans)) {
    plans.set(name, {
      name,
      markets: new Set(plan.markets),
      features: new Set(plan.features),
      rateLimit: { max: plan.rate_limit.max, windowMs: plan.rate_limit.window_ms },
      maxSymbols: plan.max_symbols,
      maxSubscriptions: plan.max_subscriptions ?? PLAN_DEFAULTS.maxSubscriptions,
      maxConnections: plan.max_connections ?? PLAN_DEFAULTS.maxConnections,
      maxBars: plan.max_bars ?? PLAN_DEFAULTS.maxBars,
    });
  }
  const byHash = new Map<string, KeyEntry>();
  for (const key of file.keys) {
    const hex = key.sha256.toLowerCase();
    byHash.set(hex, {
      id: key.id,
      plan: plans.get(key.plan)!,
      demo: key.demo === true,
      hash: Buffer.from(hex, 'hex'),
      ...(key.created !== undefined ? { created: key.created } : {}),
      ...(key.expires !== undefined ? { expiresAt: Date.parse(key.expires) } : {}),
    });
  }
  const anonymous: KeyEntry | undefined = file.anonymous === undefined ? undefined : {
    id: ANONYMOUS_ID, plan: plans.get(file.anonymous.plan)!, demo: file.anonymous.demo === true, hash: Buffer.alloc(0), anonymous: true,
  };
  return { plans, byHash, ...(anonymous !== undefined ? { anonymous } : {}) };
}

export interface KeyStoreSnapshot {
  plans: Map<string, Plan>;
  byHash: Map<string, KeyEntry>;
  /** The free tier's entry, when the keys file names a plan for requests without a key. */
  anonymous?: KeyEntry;
}

/** How to make a keys file, for the message when there is none. */
export function missingKeysFileHint(path: string): string {
  return `the keys file ${path} does not exist (it holds the plans and API key hashes; set its path with keys.file in the config or KEYS_FILE). `
    + `Create one from the example: cp config/keys.yaml ${path} (then remove its demo key), and add keys with `
    + `npm run cli -- create-key --keys-file ${path} --id <label> --plan <plan>`;
}

export function loadKeysFile(path: string): KeyStoreSnapshot {
  if (!existsSync(path)) throw new KeysFileError([missingKeysFileHint(path)], path);
  const { data, sources } = readYamlWithSources(path, 'keys file');
  return parseKeysFile(data, path, sources);
}

/** The live key set; `reload()` swaps it atomically (SIGHUP), keeping the old one on error. */
/** Valid presented keys remembered by KeyStore.lookup. */
const KEY_MEMO_MAX = 10_000;

export class KeyStore {
  #snapshot: KeyStoreSnapshot;
  readonly #memo = new Map<string, KeyEntry>();
  readonly path: string | undefined;
  readonly #now: () => number;

  constructor(snapshot: KeyStoreSnapshot, path?: string, now: () => number = Date.now) {
    this.#snapshot = snapshot;
    this.path = path;
    this.#now = now;
  }

  static fromFile(path: string, now?: () => number): KeyStore {
    return new KeyStore(loadKeysFile(path), path, now);
  }

  reload(): KeyStoreSnapshot {
    if (this.path === undefined) return this.#snapshot;
    this.#snapshot = loadKeysFile(this.path);
    this.#memo.clear();
    for (const listener of this.#reloadListeners) listener();
    return this.#snapshot;
  }

  readonly #reloadListeners = new Set<() => void>();

  /** Called after each successful reload (the stream re-checks its open connections); returns the off switch. */
  onReload(listener: () => void): () => void {
    this.#reloadListeners.add(listener);
    return () => void this.#reloadListeners.delete(listener);
  }

  /** The same key (by hash) in the current snapshot, expired or not; undefined once it is gone. */
  current(entry: KeyEntry): KeyEntry | undefined {
    const found = this.#snapshot.byHash.get(entry.hash.toString('hex'));
    return found !== undefined && found.hash.equals(entry.hash) ? found : undefined;
  }

  /**
   * Look a presented key up by its hash, then confirm in constant time; an expired key is unknown.
   * Valid keys are remembered (bounded, cleared on reload) so a repeat skips the SHA-256: the key
   * stays only in this process's memory, as it already is in the request; it is never logged.
   */
  lookup(presented: string): KeyEntry | undefined {
    let entry = this.#memo.get(presented);
    if (entry === undefined) {
      const digest = createHash('sha256').update(presented, 'utf8').digest();
      entry = this.#snapshot.byHash.get(digest.toString('hex'));
      if (entry === undefined || !timingSafeEqual(entry.hash, digest)) return undefined;
      if (this.#memo.size >= KEY_MEMO_MAX) this.#memo.clear();
      this.#memo.set(presented, entry);
    }
    return entry.expiresAt !== undefined && this.#now() >= entry.expiresAt ? undefined : entry;
  }

  get demoKeyIds(): string[] {
    const ids = [...this.#snapshot.byHash.values()].filter((k) => k.demo).map((k) => k.id);
    // A demo free tier keeps `server.host: auto` on loopback as the demo key does.
    if (this.#snapshot.anonymous?.demo === true) ids.push(ANONYMOUS_ID);
    return ids;
  }

  /** The free tier's entry for requests without a key; undefined when the keys file names none. */
  get anonymous(): KeyEntry | undefined {
    return this.#snapshot.anonymous;
  }

  get size(): number {
    return this.#snapshot.byHash.size;
  }
}

/** A new random key: 32 bytes, base64url, with a recognisable prefix. */
export function generateKey(): string {
  return `mdqs_${randomBytes(32).toString('base64url')}`;
}
