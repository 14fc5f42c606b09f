// Create an API key: random, printed once by the CLI; only its SHA-256 hash is written.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { generateKey, parseKeysFile, sha256Hex } from './keys.ts';

export function createKey(keysFile: string, id: string, plan: string): string {
  const doc = parseDocument(readFileSync(keysFile, 'utf8'));
  const current = parseKeysFile(doc.toJS(), keysFile);
  if (!current.plans.has(plan)) throw new Error(`unknown plan '${plan}' (plans: ${[...current.plans.keys()].join(', ')})`);
  const existing = (doc.toJS() as { keys: { id: string }[] }).keys ?? [];
  if (existing.some((k) => k.id === id)) throw new Error(`a key with id '${id}' already exists`);
  const key = generateKey();
  doc.addIn(['keys'], doc.createNode({ id, plan, sha256: sha256Hex(key) }));
  // Validate the result before writing, so a bad edit never lands.
  parseKeysFile(doc.toJS(), keysFile);
  writeFileSync(keysFile, doc.toString());
  return key;
}

