// Summarise a V8 .cpuprofile (from `BENCH_CPU_PROF=<dir> npm run bench:design`, bench/diagnostics/profile-hit.ts, or `node --cpu-prof`):
// self time by package/folder and the top functions by self and by inclusive time.
// Usage: node bench/diagnostics/profile-summary.ts <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: node bench/diagnostics/profile-summary.ts <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** Where a frame lives: a package, a project folder, node internals, or a V8 pseudo-frame. */
function area(url: string, name: string): string {
  if (url === '') return `(${name || 'native'})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return pkg[1];
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const project = /\/(src|adapters|config|bench)\/(.*)$/.exec(url);
  return project !== null ? `${project[1]}/${project[2]}` : url;
}
const label = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${area(n.callFrame.url, n.callFrame.functionName)}:${n.callFrame.lineNumber + 1}`;

const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const selfByArea = new Map<string, number>();
const selfByFn = new Map<string, number>();
const inclusiveByFn = new Map<string, number>();
for (const [id, time] of self) {
  const node = byId.get(id)!;
  const key = area(node.callFrame.url, node.callFrame.functionName);
  selfByArea.set(key, (selfByArea.get(key) ?? 0) + time);
  selfByFn.set(label(node), (selfByFn.get(label(node)) ?? 0) + time);
  // Inclusive: credit every distinct function on the stack once.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const name = label(byId.get(cur)!);
    if (seen.has(name)) continue;
    seen.add(name);
    inclusiveByFn.set(name, (inclusiveByFn.get(name) ?? 0) + time);
  }
}

const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)} %`;
const print = (title: string, map: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [key, time] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(time)}  ${key}\n`);
};
process.stdout.write(`${file}: ${(total / 1e6).toFixed(2)} s sampled\n`);
print('self time by area', selfByArea);
print('self time by function', selfByFn);
print('inclusive time by function', inclusiveByFn);
