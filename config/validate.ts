// Every error of a value against the config and keys-file schemas (config/schema.ts,
// src/access/keys.ts), for config/load.ts's messages.
//
// Those schemas are built with TypeBox and only use a small part of JSON Schema: type, properties,
// required, patternProperties, items, minItems, maxItems, minLength, maxLength, pattern, minimum,
// maximum, const, anyOf and not (Type.Never: a renamed setting, refused with a pointer to its new name). This walks exactly that part, in the order TypeBox's own Errors()
// reports (typebox/schema, engine/schema.mjs), so the messages are the same; what it saves is
// loading TypeBox's validator, 164 modules and ~65 ms of every start (BENCHMARKS.md, startup).
// A schema using anything else is a programming error and throws, naming the keyword; the tests
// compare this walk with TypeBox's on random values of both schemas (test/unit/config-validate.test.ts).

export interface SchemaError {
  keyword: string;
  /** JSON pointer to the value, '' for the root. */
  instancePath: string;
  params: Record<string, unknown>;
}

type Schema = Record<string, unknown>;

/** Keywords that only annotate (TypeBox's markers, docs) and never fail a value. */
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$id', '$schema', 'additionalProperties']);
const CHECKED = new Set([
  'type', 'properties', 'required', 'patternProperties', 'items', 'minItems', 'maxItems',
  'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'const', 'anyOf', 'not',
]);

const patterns = new Map<string, RegExp>();
function regexp(pattern: string): RegExp {
  let r = patterns.get(pattern);
  if (r === undefined) {
    r = new RegExp(pattern, 'u');
    patterns.set(pattern, r);
  }
  return r;
}

/** JSON pointer fragment (RFC 6901). */
function fragment(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasType(type: string, value: unknown): boolean {
  switch (type) {
    case 'object': return isObject(value);
    case 'array': return Array.isArray(value);
    case 'boolean': return typeof value === 'boolean';
    case 'integer': return Number.isInteger(value);
    case 'number': return Number.isFinite(value);
    case 'null': return value === null;
    case 'string': return typeof value === 'string';
    default: throw new Error(`config schema: type ${JSON.stringify(type)} is not supported by config/validate.ts`);
  }
}

function codePoints(value: string): number {
  let n = 0;
  for (const _ of value) n += 1;
  return n;
}

function walk(schema: Schema, value: unknown, path: string, out: SchemaError[]): boolean {
  for (const keyword of Object.keys(schema)) {
    if (!CHECKED.has(keyword) && !ANNOTATIONS.has(keyword)) {
      throw new Error(`config schema: keyword ${JSON.stringify(keyword)} is not supported by config/validate.ts`);
    }
  }
  if (schema.additionalProperties !== undefined && schema.additionalProperties !== true) {
    // config/load.ts reports unknown settings itself, with a suggestion; the schemas leave it open.
    throw new Error('config schema: additionalProperties is not supported by config/validate.ts');
  }
  const fail = (keyword: string, params: Record<string, unknown> = {}) => {
    out.push({ keyword, instancePath: path, params });
    return false;
  };
  let ok = true;
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type as string[] : [schema.type as string];
    if (!types.some((t) => hasType(t, value))) ok = fail('type', { type: schema.type });
  }
  if (isObject(value)) {
    if (Array.isArray(schema.required)) {
      const missing = (schema.required as string[]).filter((key) => !Object.hasOwn(value, key));
      if (missing.length > 0) ok = fail('required', { requiredProperties: missing });
    }
    if (isObject(schema.patternProperties)) {
      for (const [pattern, sub] of Object.entries(schema.patternProperties)) {
        const r = regexp(pattern);
        for (const [key, child] of Object.entries(value)) {
          if (r.test(key) && !walk(sub as Schema, child, `${path}/${fragment(key)}`, out)) ok = false;
        }
      }
    }
    if (isObject(schema.properties)) {
      for (const [key, sub] of Object.entries(schema.properties)) {
        if (!Object.hasOwn(value, key)) continue;
        const optional = !Array.isArray(schema.required) || !(schema.required as string[]).includes(key);
        if (optional && value[key] === undefined) continue;
        if (!walk(sub as Schema, value[key], `${path}/${fragment(key)}`, out)) ok = false;
      }
    }
  }
  if (Array.isArray(value)) {
    if (schema.items !== undefined) {
      if (!isObject(schema.items)) throw new Error('config schema: only one items schema is supported by config/validate.ts');
      value.forEach((element, index) => {
        if (!walk(schema.items as Schema, element, `${path}/${index}`, out)) ok = false;
      });
    }
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) ok = fail('minItems', { limit: schema.minItems });
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) ok = fail('maxItems', { limit: schema.maxItems });
  }
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && codePoints(value) < schema.minLength) ok = fail('minLength', { limit: schema.minLength });
    if (typeof schema.maxLength === 'number' && codePoints(value) > schema.maxLength) ok = fail('maxLength', { limit: schema.maxLength });
    if (typeof schema.pattern === 'string' && !regexp(schema.pattern).test(value)) ok = fail('pattern', { pattern: schema.pattern });
  }
  if (Number.isFinite(value)) {
    if (typeof schema.minimum === 'number' && (value as number) < schema.minimum) ok = fail('minimum', { limit: schema.minimum });
    if (typeof schema.maximum === 'number' && (value as number) > schema.maximum) ok = fail('maximum', { limit: schema.maximum });
  }
  if ('const' in schema) {
    const c = schema.const;
    if (c !== null && typeof c === 'object') throw new Error('config schema: only a primitive const is supported by config/validate.ts');
    if (value !== c) ok = fail('const', { allowedValue: c });
  }
  if (Array.isArray(schema.anyOf)) {
    // Like TypeBox: when no branch matches, every branch's errors, then the anyOf error itself.
    const failed: SchemaError[][] = [];
    let matched = false;
    for (const branch of schema.anyOf as Schema[]) {
      const errors: SchemaError[] = [];
      if (walk(branch, value, path, errors)) matched = true;
      else failed.push(errors);
    }
    if (!matched) {
      for (const errors of failed) out.push(...errors);
      ok = fail('anyOf');
    }
  }
  if (isObject(schema.not) && walk(schema.not, value, path, [])) ok = fail('not');
  return ok;
}

/** Every error of `value` against `schema`, in TypeBox's order; empty when the value is valid. */
export function schemaErrors(schema: unknown, value: unknown): SchemaError[] {
  const out: SchemaError[] = [];
  walk(schema as Schema, value, '', out);
  return out;
}
