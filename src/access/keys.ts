// API keys and plans (DESIGN.md 4.5): a YAML file of plans and SHA-256 key hashes, looked up by
// hash and confirmed with a constant-time comparison. The key itself is never stored or logged.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { Type, type Static } from 'typebox';
import { schemaProblems } from '../../config/load.ts';
import type { Region } from '../domain.ts';

export const FEATURES = [
  'quotes', 'pools', 'depth', 'klines_daily', 'klines_minute', 'intraday', 'ex_factors', 'instruments', 'batch',
] as const;
export type Feature = (typeof FEATURES)[number];

const PlanSchema = Type.Object({
  markets: Type.Array(Type.Union([Type.Literal('CN'), Type.Literal('HK'), Type.Literal('US')]), { maxItems: 3 }),
  features: Type.Array(Type.Union(FEATURES.map((f) => Type.Literal(f)))),
  rate_limit: Type.Object({
    max: Type.Integer({ minimum: 1, maximum: 10_000_000 }),
    window_ms: Type.Integer({ minimum: 100, maximum: 86_400_000 }),
  }),
  max_symbols: Type.Integer({ minimum: 1, maximum: 10_000 }),
});

const KeysFileSchema = Type.Object({
  plans: Type.Record(Type.String({ minLength: 1 }), PlanSchema),
  keys: Type.Array(Type.Object({
    id: Type.String({ minLength: 1 }),
    plan: Type.String({ minLength: 1 }),
    sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
    demo: Type.Optional(Type.Boolean()),
  })),
});

export type KeysFile = Static<typeof KeysFileSchema>;

export interface Plan {
  name: string;
  markets: ReadonlySet<Region>;
  features: ReadonlySet<Feature>;
  rateLimit: { max: number; windowMs: number };
  maxSymbols: number;
}

export interface KeyEntry {
  id: string;
  plan: Plan;
  demo: boolean;
  hash: Buffer;
}

export function sha256Hex(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Parse and validate a keys file's content; every problem reported at once. */
export function parseKeysFile(data: unknown, source = 'keys file'): KeyStoreSnapshot {
  const problems = schemaProblems(KeysFileSchema, data).map((p) => `${source}${p}`);
  if (problems.length > 0) throw new Error(`invalid ${source}:\n  - ${problems.join('\n  - ')}`);
  const file = data as KeysFile;
  const plans = new Map<string, Plan>();
  for (const [name, plan] of Object.entries(file.plans)) {
    plans.set(name, {
      name,
      markets: new Set(plan.markets),
      features: new Set(plan.features),
      rateLimit: { max: plan.rate_limit.max, windowMs: plan.rate_limit.window_ms },
      maxSymbols: plan.max_symbols,
    });
  }
  const byHash = new Map<string, KeyEntry>();
  const ids = new Set<string>();
  const errors: string[] = [];
  for (const key of file.keys) {
    const plan = plans.get(key.plan);
    if (plan === undefined) errors.push(`${source}: key ${key.id} names unknown plan ${key.plan}`);
    if (ids.has(key.id)) errors.push(`${source}: duplicate key id ${key.id}`);
    ids.add(key.id);
    if (plan === undefined) continue;
    const hex = key.sha256.toLowerCase();
    byHash.set(hex, { id: key.id, plan, demo: key.demo === true, hash: Buffer.from(hex, 'hex') });
  }
  if (errors.length > 0) throw new Error(`invalid ${source}:\n  - ${errors.join('\n  - ')}`);
  return { plans, byHash };
}

export interface KeyStoreSnapshot {
  plans: Map<string, Plan>;
  byHash: Map<string, KeyEntry>;
}

export function loadKeysFile(path: string): KeyStoreSnapshot {
  return parseKeysFile(parseYaml(readFileSync(path, 'utf8')), path);
}

/** The live key set; `reload()` swaps it atomically (SIGHUP), keeping the old one on error. */
export class KeyStore {
  #snapshot: KeyStoreSnapshot;
  readonly path: string | undefined;

  constructor(snapshot: KeyStoreSnapshot, path?: string) {
    this.#snapshot = snapshot;
    this.path = path;
  }

  static fromFile(path: string): KeyStore {
    return new KeyStore(loadKeysFile(path), path);
  }

  reload(): KeyStoreSnapshot {
    if (this.path === undefined) return this.#snapshot;
    this.#snapshot = loadKeysFile(this.path);
    return this.#snapshot;
  }

  /** Look a presented key up by its hash, then confirm in constant time. */
  lookup(presented: string): KeyEntry | undefined {
    const digest = createHash('sha256').update(presented, 'utf8').digest();
    const entry = this.#snapshot.byHash.get(digest.toString('hex'));
    if (entry === undefined) return undefined;
    return timingSafeEqual(entry.hash, digest) ? entry : undefined;
  }

  get demoKeyIds(): string[] {
    return [...this.#snapshot.byHash.values()].filter((k) => k.demo).map((k) => k.id);
  }

  get size(): number {
    return this.#snapshot.byHash.size;
  }
}

/** A new random key: 32 bytes, base64url, with a recognisable prefix. */
export function generateKey(): string {
  return `mdqs_${randomBytes(32).toString('base64url')}`;
}
