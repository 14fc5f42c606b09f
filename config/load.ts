// Load the configuration once at boot: file (CONFIG_FILE or config/default.yaml) + environment
// overrides, validated against config/schema.ts. Every problem is reported at once.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { Errors } from 'typebox/value';
import { Settings } from 'typebox/system';
import type { TSchema } from 'typebox';
import { ConfigSchema, type Config } from './schema.ts';

export const DEFAULT_CONFIG_FILE = fileURLToPath(new URL('./default.yaml', import.meta.url));

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Env = Record<string, string | undefined>;

const SHORT_ENV: Record<string, string[]> = {
  HOST: ['server', 'host'],
  PORT: ['server', 'port'],
  LOG_LEVEL: ['log', 'level'],
  KEYS_FILE: ['keys', 'file'],
  REDIS_URL: ['redis', 'url'],
};

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}

function parseEnvValue(raw: string): unknown {
  try {
    return parseYaml(raw);
  } catch {
    return raw;
  }
}

/** Apply environment overrides to a raw (unvalidated) config object. Exported for tests. */
export function applyEnv(raw: Record<string, unknown>, env: Env): Record<string, unknown> {
  const out = structuredClone(raw);
  for (const [name, path] of Object.entries(SHORT_ENV)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    // Strings stay strings (HOST=::1 must not become YAML); ports parse as numbers.
    setPath(out, path, name === 'PORT' ? Number(value) : value);
  }
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('MDQS__') || value === undefined) continue;
    const path = name.slice('MDQS__'.length).split('__').filter(Boolean);
    if (path.length > 0) setPath(out, path, parseEnvValue(value));
  }
  return out;
}

/** Every schema problem, one line per setting (a union's alternatives collapse into one line). */
export function schemaProblems(schema: TSchema, value: unknown): string[] {
  const previous = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: 10_000 });
  try {
    const byPath = new Map<string, string>();
    for (const error of Errors(schema, value)) {
      const path = error.instancePath || '/';
      if (!byPath.has(path)) byPath.set(path, error.keyword === 'const' ? 'is not one of the allowed values' : error.message);
    }
    return [...byPath].map(([path, message]) => `${path}: ${message}`);
  } finally {
    Settings.Set({ maxErrors: previous });
  }
}

export function validateConfig(raw: unknown): Config {
  const problems = schemaProblems(ConfigSchema, raw);
  if (problems.length > 0) throw new ConfigError(problems);
  return raw as Config;
}

export function readYamlFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([`cannot read ${file}: ${(error as Error).message}`]);
  }
  try {
    return parseYaml(text);
  } catch (error) {
    throw new ConfigError([`${file} is not valid YAML: ${(error as Error).message}`]);
  }
}

/** The default config file, as validated data (tests build apps from it). */
export function loadDefaultConfig(): Config {
  return validateConfig(readYamlFile(DEFAULT_CONFIG_FILE));
}

export function loadConfig(env: Env = process.env): { config: Config; file: string } {
  const file = env.CONFIG_FILE && env.CONFIG_FILE !== '' ? env.CONFIG_FILE : DEFAULT_CONFIG_FILE;
  const raw = readYamlFile(file);
  if (typeof raw !== 'object' || raw === null) throw new ConfigError([`${file}: expected a mapping`]);
  return { config: validateConfig(applyEnv(raw as Record<string, unknown>, env)), file };
}
