// Key administration on a keys file: create, rotate, revoke, list. A new key is random and returned
// once; only its SHA-256 hash is written. Every edit keeps the file's comments and is validated
// before it is written, so a bad edit never lands.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isMap, isSeq, parseDocument, type Document } from 'yaml';
import { generateKey, loadKeysFile, parseKeysFile, sha256Hex } from './keys.ts';

interface RawKey {
  id: string;
  plan: string;
  sha256: string;
  demo?: boolean;
  created?: string;
  expires?: string;
}

function open(keysFile: string): { doc: Document; keys: RawKey[]; plans: string[] } {
  loadKeysFile(keysFile); // the file must be valid before any edit, with its own messages
  const doc = parseDocument(readFileSync(keysFile, 'utf8'));
  const js = doc.toJS() as { keys?: RawKey[]; plans?: Record<string, unknown> };
  return { doc, keys: js.keys ?? [], plans: Object.keys(js.plans ?? {}) };
}

function save(keysFile: string, doc: Document): void {
  parseKeysFile(doc.toJS(), keysFile);
  // Write then rename: a reader (SIGHUP reload) never sees half a file.
  const tmp = `${keysFile}.tmp-${process.pid}`;
  writeFileSync(tmp, doc.toString());
  renameSync(tmp, keysFile);
}

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `30d`, `12h`, `90m`, `2w` → ms. */
export function parseDuration(text: string): number {
  const match = /^(\d+)([mhdw])$/.exec(text);
  if (match === null) throw new Error(`not a duration: ${JSON.stringify(text)} (use e.g. 90m, 12h, 30d, 2w)`);
  return Number(match[1]) * UNITS[match[2]];
}

/** `--expires`: a duration from now (30d) or an ISO date / date-time with a zone. */
export function parseExpires(text: string, now: number): string {
  if (/^\d+[mhdw]$/.test(text)) return new Date(now + parseDuration(text)).toISOString();
  if (/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text) && !Number.isNaN(Date.parse(text))) return text;
  throw new Error(`--expires ${JSON.stringify(text)}: expected a duration (30d, 12h) or an ISO date (2027-01-31 or 2027-01-31T12:00:00Z)`);
}

function seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export interface CreateOptions {
  /** ISO expiry (see parseExpires). */
  expires?: string;
  now?: number;
}

export function createKey(keysFile: string, id: string, plan: string, options: CreateOptions = {}): string {
  const { doc, keys, plans } = open(keysFile);
  if (!plans.includes(plan)) throw new Error(`unknown plan '${plan}' (plans: ${plans.join(', ')})`);
  if (keys.some((k) => k.id === id)) throw new Error(`a key with id '${id}' already exists`);
  const key = generateKey();
  const entry: RawKey = { id, plan, sha256: sha256Hex(key), created: seconds(options.now ?? Date.now()) };
  if (options.expires !== undefined) entry.expires = options.expires;
  if (!isSeq(doc.get('keys'))) doc.set('keys', doc.createNode([]));
  doc.addIn(['keys'], doc.createNode(entry));
  save(keysFile, doc);
  return key;
}

export interface RotateResult {
  key: string;
  /** The id the old key now has, and until when it works. */
  oldId: string;
  oldExpires: string;
  /** A previous rotation's old key whose grace this rotation ended. */
  replaced?: string;
}

/**
 * A new key under the same id and plan; the old key is renamed `<id>.previous` and expires after
 * the grace period (or earlier, if it already expired sooner).
 */
export function rotateKey(keysFile: string, id: string, graceMs: number, now = Date.now()): RotateResult {
  const { doc, keys } = open(keysFile);
  const index = keys.findIndex((k) => k.id === id);
  if (index < 0) throw new Error(`no key with id '${id}' (ids: ${keys.map((k) => k.id).join(', ')})`);
  const oldId = `${id}.previous`;
  const seq = doc.get('keys');
  if (!isSeq(seq)) throw new Error('keys is not a list');
  let replaced: string | undefined;
  const previous = keys.findIndex((k) => k.id === oldId);
  const old = keys[index];
  const graceEnd = now + graceMs;
  const oldExpires = old.expires !== undefined && Date.parse(old.expires) < graceEnd ? old.expires : seconds(graceEnd);
  const node = seq.items[index];
  if (!isMap(node)) throw new Error(`keys[${index}] is not a mapping`);
  node.set('id', oldId);
  node.set('expires', oldExpires);
  const key = generateKey();
  const fresh: RawKey = { id, plan: old.plan, sha256: sha256Hex(key), created: seconds(now) };
  if (old.expires !== undefined && Date.parse(old.expires) > graceEnd) fresh.expires = old.expires;
  seq.items.splice(index + 1, 0, doc.createNode(fresh));
  if (previous >= 0) {
    seq.items.splice(previous > index ? previous + 1 : previous, 1);
    replaced = oldId;
  }
  save(keysFile, doc);
  return { key, oldId, oldExpires, replaced };
}

/** Remove a key; it stops working at the next reload (SIGHUP, or the Redis reload message). */
export function revokeKey(keysFile: string, id: string): void {
  const { doc, keys } = open(keysFile);
  const index = keys.findIndex((k) => k.id === id);
  if (index < 0) throw new Error(`no key with id '${id}' (ids: ${keys.map((k) => k.id).join(', ')})`);
  doc.deleteIn(['keys', index]);
  save(keysFile, doc);
}

export interface KeyListing {
  id: string;
  plan: string;
  created: string;
  expires: string;
  demo: boolean;
  /** The first 8 hex digits of the hash: enough to tell keys apart, never the full hash. */
  hashPrefix: string;
  expired: boolean;
}

export function listKeys(keysFile: string, now = Date.now()): KeyListing[] {
  const { keys } = open(keysFile);
  return keys.map((k) => ({
    id: k.id,
    plan: k.plan,
    created: k.created ?? '-',
    expires: k.expires ?? '-',
    demo: k.demo === true,
    hashPrefix: k.sha256.slice(0, 8).toLowerCase(),
    expired: k.expires !== undefined && Date.parse(k.expires) <= now,
  }));
}
