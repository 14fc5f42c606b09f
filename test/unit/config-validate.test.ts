// config/validate.ts walks the config and keys-file schemas the way TypeBox's own Errors() does:
// the same errors (keyword, path, missing properties) in the same order, on random corruptions
// of the shipped config and keys file. TypeBox's validator is loaded here only, never at a start.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { Errors } from 'typebox/schema';
import { Settings } from 'typebox/system';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_FILE, loadConfig, schemaProblems } from '../../config/load.ts';
import { ConfigSchema } from '../../config/schema.ts';
import { schemaErrors } from '../../config/validate.ts';
import { KeysFileSchema } from '../../src/access/keys.ts';

Settings.Set({ maxErrors: 100_000 });

type Json = unknown;

/** What TypeBox reports, in the shape both sides can be compared in. */
function typebox(schema: unknown, value: Json) {
  return Errors(schema as never, value)[1].map((e) => ({
    keyword: e.keyword,
    instancePath: e.instancePath,
    ...(e.keyword === 'required' ? { missing: (e.params as { requiredProperties: string[] }).requiredProperties } : {}),
  }));
}

function ours(schema: unknown, value: Json) {
  return schemaErrors(schema, value).map((e) => ({
    keyword: e.keyword,
    instancePath: e.instancePath,
    ...(e.keyword === 'required' ? { missing: e.params.requiredProperties as string[] } : {}),
  }));
}

const leaf = fc.oneof(
  fc.integer({ min: -5, max: 5 }), fc.integer(), fc.double({ noNaN: false }), fc.constantFrom(0, 1, 65_535, 65_536, 1e9, 2.5, -1),
  fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 3 }),
  fc.constantFrom('', 'CN', 'HK', 'US', 'sim', 'sqlite', 'postgres', 'info', 'a/b~c', '😀', '\ud83d', 'x'.repeat(70), '0'.repeat(64), '2026-01-01'),
  fc.boolean(), fc.constant(null), fc.constant(undefined),
);
const anyJson: fc.Arbitrary<Json> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('~', '~1', 'a/b', '/')), tie('value'), { maxKeys: 3 })),
})).value;

/** Every path to a value inside a JSON document. */
function paths(value: Json, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...at, i])));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
  return out;
}

type Edit = { kind: 'set' | 'delete' | 'add'; pick: number; value: Json; key: string };
const edit: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom('set', 'delete', 'add'), pick: fc.nat(), value: anyJson, key: fc.constantFrom('extra', 'port', 'markets', 'plan', '0', 'a/b', '~0'),
}) as fc.Arbitrary<Edit>;

function applyEdits(doc: Json, edits: Edit[]): Json {
  const copy = structuredClone(doc);
  for (const e of edits) {
    const all = paths(copy);
    const path = all[e.pick % all.length];
    if (path.length === 0) continue;
    const parent = path.slice(0, -1).reduce<any>((node, k) => node[k], copy);
    const last = path[path.length - 1];
    if (e.kind === 'set') parent[last] = structuredClone(e.value);
    else if (e.kind === 'delete') {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
    } else {
      const target = parent[last];
      if (target !== null && typeof target === 'object' && !Array.isArray(target)) target[e.key] = structuredClone(e.value);
      else if (Array.isArray(target)) target.push(structuredClone(e.value));
    }
  }
  return copy;
}

const config = loadConfig({}).config as Json;
const keysFile = parse(readFileSync(new URL('../../config/keys.yaml', import.meta.url), 'utf8')) as Json;

describe('config/validate.ts against TypeBox', () => {
  it('both accept the shipped config and keys file', () => {
    expect(ours(ConfigSchema, config)).toEqual([]);
    expect(typebox(ConfigSchema, config)).toEqual([]);
    expect(ours(KeysFileSchema, keysFile)).toEqual([]);
    expect(typebox(KeysFileSchema, keysFile)).toEqual([]);
    expect(DEFAULT_CONFIG_FILE).toMatch(/default\.yaml$/);
  });

  it.each([['config', ConfigSchema, config], ['keys file', KeysFileSchema, keysFile]])('the same errors in the same order on random corruptions of the %s', (_name, schema, doc) => {
    let failing = 0;
    const keywords = new Set<string>();
    fc.assert(fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), (edits) => {
      const value = applyEdits(doc, edits);
      const expected = typebox(schema, value);
      expect(ours(schema, value)).toEqual(expected);
      if (expected.length > 0) failing += 1;
      for (const e of expected) keywords.add(e.keyword);
    }), { numRuns: 1500, seed: 20261125 });
    // A fixed seed, so this check of the generator is the same in every run: most corruptions are
    // errors, and of every kind the schemas can report.
    expect(failing).toBeGreaterThan(750);
    expect([...keywords].sort()).toEqual(expect.arrayContaining(['anyOf', 'const', 'maximum', 'minimum', 'required', 'type']));
  });

  it('the same errors on any JSON value at all', () => {
    fc.assert(fc.property(anyJson, (value) => {
      expect(ours(ConfigSchema, value)).toEqual(typebox(ConfigSchema, value));
      expect(ours(KeysFileSchema, value)).toEqual(typebox(KeysFileSchema, value));
    }), { numRuns: 500 });
  });

  it('a message per bad setting, as before', () => {
    const value = applyEdits(config, [
      { kind: 'set', pick: paths(config).findIndex((p) => p.join('.') === 'server.port'), value: 'eighty', key: '' },
    ]);
    expect(schemaProblems(ConfigSchema, value)).toEqual(['server.port: got "eighty"; expected an integer from 0 to 65_535']);
  });

  it('supports every keyword anywhere in both schemas (an optional block no value reaches included)', () => {
    const seen = new Set<string>();
    const visit = (schema: Record<string, unknown>) => {
      // A value of every type at this node walks every keyword it has without throwing.
      for (const value of [{}, [], '', 0, 1.5, true, null]) expect(() => schemaErrors(schema, value)).not.toThrow();
      for (const [keyword, sub] of Object.entries(schema)) {
        seen.add(keyword);
        if (keyword === 'properties' || keyword === 'patternProperties') for (const child of Object.values(sub as object)) visit(child);
        else if (keyword === 'items') visit(sub as Record<string, unknown>);
        else if (keyword === 'anyOf') for (const branch of sub as Record<string, unknown>[]) visit(branch);
      }
    };
    visit(ConfigSchema as unknown as Record<string, unknown>);
    visit(KeysFileSchema as unknown as Record<string, unknown>);
    expect([...seen].sort()).toEqual(['anyOf', 'const', 'description', 'items', 'maxItems', 'maximum', 'minItems', 'minLength', 'minimum', 'not', 'pattern', 'patternProperties', 'properties', 'required', 'type']);
  });

  it('refuses a schema keyword it does not implement, naming it', () => {
    expect(() => schemaErrors({ type: 'string', format: 'email' }, 'x')).toThrow(/keyword "format" is not supported/);
    expect(() => schemaErrors({ type: 'object', additionalProperties: false }, {})).toThrow(/additionalProperties/);
    expect(() => schemaErrors({ type: 'bigint' }, 1)).toThrow(/type "bigint"/);
  });
});
