// What a heap grew by, by constructor: `node bench/diagnostics/heap-diff.ts before.heapsnapshot after.heapsnapshot`
// (snapshots from the soak's probe with MDQS_PROBE_SNAPSHOTS=<dir>, e.g.
// SOAK_ENV='MDQS_PROBE_SNAPSHOTS=/tmp/snaps' node bench/suites/memory-soak.ts). A developer tool.
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

function bySelfSize(file: string): Map<string, { bytes: number; count: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const types = snap.snapshot.meta.node_types[0];
  const out = new Map<string, { bytes: number; count: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]];
    const name = type === 'object' || type === 'native' ? snap.strings[snap.nodes[i + nameAt]] : `(${type})`;
    const entry = out.get(name) ?? { bytes: 0, count: 0 };
    entry.bytes += snap.nodes[i + sizeAt];
    entry.count += 1;
    out.set(name, entry);
  }
  return out;
}

const [beforeFile, afterFile] = process.argv.slice(2);
const before = bySelfSize(beforeFile);
const after = bySelfSize(afterFile);
const rows = [...after].map(([name, a]) => {
  const b = before.get(name) ?? { bytes: 0, count: 0 };
  return { name, bytes: a.bytes - b.bytes, count: a.count - b.count };
}).sort((x, y) => y.bytes - x.bytes);
const total = rows.reduce((sum, r) => sum + r.bytes, 0);
console.log(`grew by ${(total / 1048576).toFixed(1)} MiB (self sizes)`);
for (const r of rows.slice(0, 25)) console.log(`${(r.bytes / 1048576).toFixed(2).padStart(8)} MiB  ${String(r.count).padStart(8)}  ${r.name.slice(0, 100)}`);
