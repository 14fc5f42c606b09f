// Load the configuration once at boot: config/default.yaml, then CONFIG_FILE (only the settings it
// changes, merged over the default), then environment overrides; validated against
// config/schema.ts. Every problem is reported at once, naming the setting, where it came from
// (file:line or the environment variable), the bad value and what is allowed. Unknown settings are
// found by walking the schema itself, so blocks other modules add are covered without a list here.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, isScalar, isSeq, LineCounter, parse as parseYaml, parseDocument, type Node as YamlNode } from 'yaml';
import type { TSchema } from 'typebox';
import { ConfigSchema, type Config } from './schema.ts';
import { schemaErrors } from './validate.ts';
import { adapterIdProblems, withAdapterBlocks } from './adapters.ts';
import { proxyEntryProblem, trustedProxyEntries } from './trust-proxy.ts';

export const DEFAULT_CONFIG_FILE = fileURLToPath(new URL('./default.yaml', import.meta.url));

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[], what = 'configuration') {
    super(`invalid ${what} (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Env = Record<string, string | undefined>;
type Json = Record<string, unknown>;
/** Where each setting came from, keyed by its path segments joined with '/': "file:line" or an env variable. */
export type Sources = Map<string, string>;

const SHORT_ENV: Record<string, string[]> = {
  HOST: ['server', 'host'],
  PORT: ['server', 'port'],
  LOG_LEVEL: ['log', 'level'],
  KEYS_FILE: ['keys', 'file'],
  REDIS_URL: ['redis', 'url'],
  DATABASE_URL: ['history', 'databaseUrl'],
  WORKERS: ['server', 'workers'],
};

const NUMERIC_ENV = new Set(['PORT', 'WORKERS']);

const SECRET_NAME = /(api_?key|password|passwd|secret|token)$/i;
const URL_CREDENTIALS = /^([a-z][a-z0-9+.-]*:\/\/[^/:@\s]*:)[^/@\s]+@/i;

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value for a message: JSON, secrets masked, long values cut. */
function showValue(value: unknown, name = ''): string {
  if (value === undefined) return 'nothing';
  if (SECRET_NAME.test(name) && value !== '' && value !== null) return '"***"';
  if (typeof value === 'string' && URL_CREDENTIALS.test(value)) return JSON.stringify(value.replace(URL_CREDENTIALS, '$1***@'));
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Display a path: a.b.c, array indices as [i]. */
function showPath(segments: string[]): string {
  let out = '';
  for (const s of segments) out += /^\d+$/.test(s) ? `[${s}]` : out === '' ? s : `.${s}`;
  return out === '' ? '(top level)' : out;
}

function setSource(sources: Sources, segments: string[], source: string): void {
  const key = segments.join('/');
  // A value set as a whole replaces whatever its children's positions were.
  for (const existing of [...sources.keys()]) if (existing.startsWith(`${key}/`)) sources.delete(existing);
  sources.set(key, source);
}

/** The source of a setting, or of its nearest parent that has one. */
export function sourceOf(sources: Sources, segments: string[]): string | undefined {
  for (let n = segments.length; n > 0; n--) {
    const found = sources.get(segments.slice(0, n).join('/'));
    if (found !== undefined) return found;
  }
  return undefined;
}

function setPath(target: Json, path: string[], value: unknown): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (!isPlainObject(next)) node[part] = {};
    node = node[part] as Json;
  }
  node[path[path.length - 1]] = value;
}

function getPath(root: Json, path: readonly string[]): unknown {
  let node: unknown = root;
  for (const part of path) {
    if (!isPlainObject(node)) return undefined;
    node = (node as Json)[part];
  }
  return node;
}

function parseEnvValue(raw: string): unknown {
  try {
    return parseYaml(raw);
  } catch {
    return raw;
  }
}

/** Apply environment overrides to a raw (unvalidated) config object; records each one's variable in `sources`. */
export function applyEnv(raw: Json, env: Env, sources: Sources = new Map()): Json {
  const out = structuredClone(raw);
  for (const [name, path] of Object.entries(SHORT_ENV)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    // Strings stay strings (HOST=::1 must not become YAML); digits for a number setting become a number.
    setPath(out, path, NUMERIC_ENV.has(name) && /^\d+$/.test(value) ? Number(value) : value);
    setSource(sources, path, name);
  }
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('MDQS__') || value === undefined) continue;
    const path = name.slice('MDQS__'.length).split('__').filter(Boolean);
    if (path.length === 0) continue;
    // A secret is a string as given: a key of digits is neither a number nor shorn of leading zeros.
    // An empty value of a string setting is the empty string (YAML would read it as null): the
    // default config documents "" where it means "none" (server.pidFile, redis.url, metrics.token).
    const emptyString = value === '' && typeof getPath(out, path) === 'string';
    setPath(out, path, SECRET_NAME.test(path[path.length - 1]) || emptyString ? value : parseEnvValue(value));
    setSource(sources, path, name);
  }
  return out;
}

/** Mappings merge key by key; anything else (lists included) replaces. */
export function mergeConfig(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return structuredClone(over);
  const out: Json = { ...structuredClone(base) };
  for (const [key, value] of Object.entries(over)) out[key] = key in base ? mergeConfig(base[key], value) : structuredClone(value);
  return out;
}

// ---- the schema, walked generically ----

type S = Record<string, unknown>;

function members(schema: S, key: 'anyOf' | 'allOf'): S[] {
  return Array.isArray(schema[key]) ? (schema[key] as S[]) : [];
}

/** The sub-schema for a child key or index, or undefined when the schema does not know it. */
function childSchema(schema: S, key: string): S | undefined {
  for (const part of members(schema, 'allOf')) {
    const found = childSchema(part, key);
    if (found !== undefined) return found;
  }
  for (const part of members(schema, 'anyOf')) {
    const found = childSchema(part, key);
    if (found !== undefined) return found;
  }
  const properties = schema.properties as Record<string, S> | undefined;
  if (properties !== undefined && Object.hasOwn(properties, key)) return properties[key];
  const patterns = schema.patternProperties as Record<string, S> | undefined;
  if (patterns !== undefined) {
    for (const [pattern, sub] of Object.entries(patterns)) if (new RegExp(pattern).test(key)) return sub;
  }
  if (isPlainObject(schema.additionalProperties)) return schema.additionalProperties as S;
  if (isPlainObject(schema.items) && /^\d+$/.test(key)) return schema.items as S;
  return undefined;
}

function knownKeys(schema: S): string[] | undefined {
  const parts = [schema, ...members(schema, 'allOf'), ...members(schema, 'anyOf')];
  if (parts.some((p) => p.patternProperties !== undefined || p.additionalProperties === true || isPlainObject(p.additionalProperties))) return undefined;
  const keys = parts.flatMap((p) => Object.keys((p.properties as S | undefined) ?? {}));
  return keys.length > 0 || parts.some((p) => p.properties !== undefined) ? keys : undefined;
}

function schemaAt(schema: S, segments: string[]): S | undefined {
  let node: S | undefined = schema;
  for (const s of segments) {
    if (node === undefined) return undefined;
    node = childSchema(node, s);
  }
  return node;
}

/** Optimal-string-alignment distance, case-insensitive: `prot`→`port` is 1. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const d: number[][] = Array.from({ length: x.length + 1 }, (_, i) => [i, ...Array<number>(y.length).fill(0)]);
  for (let j = 1; j <= y.length; j++) d[0][j] = j;
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[x.length][y.length];
}

export function nearest(key: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = distance(key, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function unknownSettings(schema: S, value: unknown, path: string[], sources: Sources, out: string[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      const sub = childSchema(schema, String(i));
      if (sub !== undefined) unknownSettings(sub, item, [...path, String(i)], sources, out);
    });
    return;
  }
  if (!isPlainObject(value)) return;
  const known = knownKeys(schema);
  for (const [key, child] of Object.entries(value)) {
    const sub = childSchema(schema, key);
    if (sub !== undefined) {
      unknownSettings(sub, child, [...path, key], sources, out);
      continue;
    }
    if (known === undefined) continue;
    const segments = [...path, key];
    const source = sourceOf(sources, segments);
    const guess = nearest(key, known);
    let hint: string;
    if (guess === undefined) hint = known.length > 0 ? `; known settings here: ${known.join(', ')}` : '; nothing may be set here';
    else if (source?.startsWith('MDQS__')) hint = `; did you mean MDQS__${[...path, guess].join('__')}?`;
    else hint = `; did you mean ${showPath([...path, guess])}?`;
    out.push(`${showPath(segments)}: unknown setting${source ? ` (${source})` : ''}${hint}`);
  }
}

function showNumber(n: number): string {
  return Number.isInteger(n) && Math.abs(n) >= 10_000 ? n.toLocaleString('en-US').replace(/,/g, '_') : String(n);
}

/** What a schema allows, in words ("an integer from 0 to 65_535", "one of: a, b"). */
function describeAllowed(schema: S | undefined): string {
  if (schema === undefined) return 'nothing (not a known setting)';
  const anyOf = members(schema, 'anyOf');
  if (anyOf.length > 0) {
    if (anyOf.every((m) => 'const' in m)) return `one of: ${anyOf.map((m) => String(m.const)).join(', ')}`;
    return anyOf.map(describeAllowed).join(' or ');
  }
  if ('const' in schema) return JSON.stringify(schema.const);
  // A renamed setting (Type.Never): its description names the new one.
  if (isPlainObject(schema.not)) return typeof schema.description === 'string' ? schema.description : 'nothing';
  const range = (what: string) => {
    const min = schema.minimum as number | undefined;
    const max = schema.maximum as number | undefined;
    if (min !== undefined && max !== undefined) return `${what} from ${showNumber(min)} to ${showNumber(max)}`;
    if (min !== undefined) return `${what} ≥ ${showNumber(min)}`;
    if (max !== undefined) return `${what} ≤ ${showNumber(max)}`;
    return what;
  };
  switch (schema.type) {
    case 'integer': return range('an integer');
    case 'number': return range('a number');
    case 'boolean': return 'true or false';
    case 'string': {
      let text = ((schema.minLength as number | undefined) ?? 0) > 0 ? 'a non-empty string' : 'a string';
      if (typeof schema.pattern === 'string') text += ` matching ${schema.pattern}`;
      return text;
    }
    case 'array': {
      const min = schema.minItems as number | undefined;
      const max = schema.maxItems as number | undefined;
      const count = min !== undefined && max !== undefined ? ` of ${min} to ${max} items` : min !== undefined ? ` of at least ${min} item${min === 1 ? '' : 's'}` : max !== undefined ? ` of at most ${max} items` : '';
      return `a list${count}, each ${describeAllowed(isPlainObject(schema.items) ? (schema.items as S) : {})}`;
    }
    case 'object': return 'a mapping';
    default: return 'any value';
  }
}

function valueAt(root: unknown, segments: string[]): unknown {
  let node = root;
  for (const s of segments) {
    if (Array.isArray(node)) node = node[Number(s)];
    else if (isPlainObject(node)) node = node[s];
    else return undefined;
  }
  return node;
}

/**
 * Every problem of `value` against `schema`, one line per setting: unknown settings with a
 * suggestion, bad values with their source and what is allowed, missing settings.
 */
export function schemaProblems(schema: TSchema, value: unknown, sources: Sources = new Map()): string[] {
  const out: string[] = [];
  unknownSettings(schema as S, value, [], sources, out);
  const seen = new Set<string>();
  for (const error of schemaErrors(schema, value)) {
    const base = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    const missing = error.keyword === 'required' ? (error.params.requiredProperties as string[]) : [];
    for (const segments of missing.length > 0 ? missing.map((m) => [...base, m]) : [base]) {
      const key = segments.join('/');
      if (seen.has(key)) continue;
      seen.add(key);
      const allowed = describeAllowed(schemaAt(schema as S, segments));
      const source = sourceOf(sources, segments);
      if (missing.length > 0) {
        out.push(`${showPath(segments)}: missing${source ? ` (in ${source})` : ''}; expected ${allowed}`);
      } else {
        const bad = showValue(valueAt(value, segments), segments[segments.length - 1]);
        out.push(`${showPath(segments)}: got ${bad}${source ? ` (${source})` : ''}; expected ${allowed}`);
      }
    }
  }
  return out;
}

// ---- files ----

function displayName(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel !== '' && !rel.startsWith('..') ? rel : file;
}

/** A YAML file's data plus the file:line of every key in it. */
export function readYamlWithSources(file: string, what = 'config file'): { data: unknown; sources: Sources } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([`cannot read ${what} ${file}: ${(error as Error).message}`], what);
  }
  const name = displayName(file);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new ConfigError(doc.errors.map((e) => `${name}:${lines.linePos(e.pos[0]).line}: not valid YAML: ${e.message.split('\n')[0]}`), what);
  }
  const sources: Sources = new Map();
  const walk = (node: unknown, path: string[]) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const at = (pair.key as YamlNode | null)?.range?.[0] ?? node.range?.[0] ?? 0;
        sources.set([...path, key].join('/'), `${name}:${lines.linePos(at).line}`);
        walk(pair.value, [...path, key]);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        const at = (item as YamlNode | null)?.range?.[0] ?? node.range?.[0] ?? 0;
        sources.set([...path, String(i)].join('/'), `${name}:${lines.linePos(at).line}`);
        walk(item, [...path, String(i)]);
      });
    }
  };
  walk(doc.contents, []);
  return { data: doc.toJS() ?? {}, sources };
}

export function readYamlFile(file: string): unknown {
  return readYamlWithSources(file).data;
}

/** Adapter names that are no adapter (config/adapters.ts), as problem lines with their source. */
function adapterNameProblems(raw: unknown, sources: Sources): string[] {
  return adapterIdProblems(raw).map(({ path, what, hint, nearest: near }) => {
    const source = sourceOf(sources, path);
    const guess = near === undefined ? undefined : nearest(near.name, near.candidates);
    const said = guess === undefined ? hint : `did you mean ${near?.under ? showPath([...near.under, guess]) : guess}?`;
    return `${showPath(path)}: ${what}${source ? ` (${source})` : ''}; ${said}`;
  });
}

/**
 * redis.url, redis.cluster and redis.sentinel are three topologies: at most one may be set (an
 * empty url counts as unset), wherever each came from; and every node's port is a port.
 */
function redisTopologyProblems(raw: unknown, sources: Sources): string[] {
  const redis = valueAt(raw, ['redis']);
  if (!isPlainObject(redis)) return [];
  const set: string[] = [];
  const where = (key: string) => {
    const source = sourceOf(sources, ['redis', key]);
    return source === undefined ? `redis.${key}` : `redis.${key} (${source})`;
  };
  if (typeof redis.url === 'string' && redis.url !== '') set.push(where('url'));
  if (redis.cluster !== undefined) set.push(where('cluster'));
  if (redis.sentinel !== undefined) set.push(where('sentinel'));
  const out: string[] = [];
  if (set.length > 1) {
    out.push(`redis: ${set.join(' and ')} are both set; set one of redis.url (one node), redis.cluster (a Redis Cluster's nodes) or redis.sentinel (a master's name and its sentinels); an empty url counts as unset`);
  }
  if (typeof redis.url === 'string' && redis.url !== '') {
    for (const key of ['username', 'password']) {
      if (typeof redis[key] === 'string' && redis[key] !== '') {
        out.push(`${where(key)}: only for redis.cluster and redis.sentinel; with redis.url put the credentials in the URL (redis://user:password@host:port)`);
      }
    }
  }
  const nodes: Array<[string[], unknown]> = [
    ...(Array.isArray(redis.cluster) ? redis.cluster.map((n, i): [string[], unknown] => [['redis', 'cluster', String(i)], n]) : []),
    ...(isPlainObject(redis.sentinel) && Array.isArray(redis.sentinel.nodes)
      ? redis.sentinel.nodes.map((n, i): [string[], unknown] => [['redis', 'sentinel', 'nodes', String(i)], n]) : []),
  ];
  for (const [path, node] of nodes) {
    const port = typeof node === 'string' ? Number(/:(\d+)$/.exec(node)?.[1]) : Number.NaN;
    if (typeof node === 'string' && /:\d+$/.test(node) && !(port >= 1 && port <= 65_535)) {
      const source = sourceOf(sources, path);
      out.push(`${showPath(path)}: got ${showValue(node)}${source ? ` (${source})` : ''}; expected a port from 1 to 65_535`);
    }
  }
  return out;
}

/** server.trustProxy as addresses: each entry one proxy-addr compiles (config/trust-proxy.ts). */
function trustProxyProblems(raw: unknown, sources: Sources): string[] {
  const setting = valueAt(raw, ['server', 'trustProxy']);
  const listed = Array.isArray(setting) && setting.every((entry) => typeof entry === 'string');
  // An empty string or list is the schema's to report.
  if ((typeof setting !== 'string' || setting === '') && !listed) return [];
  const entries = trustedProxyEntries(setting as string | string[]);
  return entries.flatMap((entry, i) => {
    // An empty list item is the schema's to report; an empty entry of a string is a stray comma.
    const problem = listed && entry === '' ? undefined : proxyEntryProblem(entry);
    if (problem === undefined) return [];
    const path = listed ? ['server', 'trustProxy', String(i)] : ['server', 'trustProxy'];
    const source = sourceOf(sources, path);
    return [`${showPath(path)}: ${problem}${source ? ` (${source})` : ''}; expected true, false, a number of proxy hops, `
      + 'or the proxies\' addresses or CIDRs (a list or a comma-separated string)'];
  });
}

export function validateConfig(raw: unknown, sources: Sources = new Map()): Config {
  // Each adapters.<id> block is checked against its adapter's options schema like any other setting.
  const problems = [
    ...schemaProblems(withAdapterBlocks(ConfigSchema, raw), raw, sources), ...adapterNameProblems(raw, sources), ...redisTopologyProblems(raw, sources),
    ...trustProxyProblems(raw, sources),
  ];
  if (problems.length > 0) throw new ConfigError(problems);
  return raw as Config;
}

/** The default config file, as validated data (tests build apps from it). */
export function loadDefaultConfig(): Config {
  return validateConfig(readYamlFile(DEFAULT_CONFIG_FILE));
}

export interface LoadedConfig {
  config: Config;
  /** CONFIG_FILE when one was given, else the default file. */
  file: string;
  /** Where every setting came from. */
  sources: Sources;
}

export function loadConfig(env: Env = process.env): LoadedConfig {
  const base = readYamlWithSources(DEFAULT_CONFIG_FILE);
  let raw = base.data;
  const sources = new Map(base.sources);
  const file = env.CONFIG_FILE && env.CONFIG_FILE !== '' ? env.CONFIG_FILE : DEFAULT_CONFIG_FILE;
  if (file !== DEFAULT_CONFIG_FILE) {
    const overlay = readYamlWithSources(file);
    if (!isPlainObject(overlay.data)) throw new ConfigError([`${displayName(file)}: expected a mapping of settings, got ${showValue(overlay.data)}`]);
    raw = mergeConfig(raw, overlay.data);
    for (const [path, source] of overlay.sources) {
      // A list or value in the overlay replaces the default's, positions included.
      if (!isPlainObject(valueAt(overlay.data, path.split('/')))) setSource(sources, path.split('/'), source);
      else sources.set(path, source);
    }
  }
  if (!isPlainObject(raw)) throw new ConfigError([`${displayName(DEFAULT_CONFIG_FILE)}: expected a mapping of settings`]);
  const merged = applyEnv(raw, env, sources);
  return { config: validateConfig(merged, sources), file, sources };
}
