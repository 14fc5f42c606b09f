// The documentation stands alone (issue 43 item 10): every relative link of README.md, CHANGELOG.md,
// BENCHMARKS.md and docs/*.md resolves to a file inside the repository, and to a heading of it when
// the link names an anchor; every `docs/<file>.md#anchor` a code comment cites exists; nothing cites
// a file outside the repository; the README stays a first hour's read (under 300 lines); and its
// EBADENGINE sentence counts what npm ci really warns about (the engines fields of package-lock.json).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = ['README.md', 'CHANGELOG.md', 'BENCHMARKS.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const CODE_DIRS = ['src', 'adapters', 'test', 'bench', 'public', 'config', 'mocks', 'deploy', 'docs', '.ci'];
const SKIP_DIRS = new Set(['node_modules', 'artifacts', 'data', '.git']);

/** Text outside fenced code blocks (a `# comment` in a shell block is not a heading). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(markdown)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').trim().replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

function links(markdown: string): string[] {
  return prose(markdown).flatMap((line) => [...line.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]))
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

function filesUnder(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs).flatMap((name) => {
    if (SKIP_DIRS.has(name)) return [];
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return filesUnder(path);
    return /\.(ts|js|mjs|md|yaml|yml|json|html|css|conf|sh|service)$|^run$/.test(name) ? [path] : [];
  });
}

/** Where `target` (relative to `from`) points: a problem, or undefined when it resolves. */
function brokenLink(from: string, target: string): string | undefined {
  const [pathPart, anchor] = target.split('#');
  const path = pathPart === '' ? join(ROOT, from) : resolve(dirname(join(ROOT, from)), pathPart);
  if (relative(ROOT, path).startsWith('..')) return 'points outside the repository';
  if (!existsSync(path)) return 'no such file';
  if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(readFileSync(path, 'utf8')).has(anchor)) return `no heading #${anchor}`;
  return undefined;
}

describe('documentation links', () => {
  it('GitHub anchors: punctuation dropped, repeats numbered', () => {
    expect([...anchorsOf('# The data path\n## Access: keys, plans, rate limits\n```sh\n# not a heading\n```\n### `sim` (embedded)\n## Details\n## Details')])
      .toEqual(['the-data-path', 'access-keys-plans-rate-limits', 'sim-embedded', 'details', 'details-1']);
  });

  it.each(DOCS)('%s: every relative link resolves inside the repository, anchors included', (file) => {
    const problems = links(readFileSync(join(ROOT, file), 'utf8'))
      .map((target) => [target, brokenLink(file, target)] as const)
      .filter(([, problem]) => problem !== undefined)
      .map(([target, problem]) => `${file} → ${target}: ${problem}`);
    expect(problems).toEqual([]);
  });

  it('every docs/<file>.md#anchor cited in code and config exists', () => {
    const problems: string[] = [];
    for (const file of CODE_DIRS.flatMap(filesUnder)) {
      for (const m of readFileSync(join(ROOT, file), 'utf8').matchAll(/\bdocs\/([\w-]+\.md)(?:#([\w-]+))?/g)) {
        const problem = brokenLink('README.md', `docs/${m[1]}${m[2] === undefined ? '' : `#${m[2]}`}`);
        if (problem !== undefined) problems.push(`${file}: ${m[0]}: ${problem}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('the repository stands alone', () => {
  // Built from parts so that this file does not match itself.
  const outside = new RegExp(['DESIGN', 'STYLE'].map((n) => `\\b${n}\\.md\\b`).concat(['\\breference/[\\w-]+\\.md', 'tickflow-compat\\.md', '\\.\\./shared\\b', '§\\s?\\d']).join('|'));

  // A bare section sign and number is a section of those notes too: the repository's docs use anchors.
  it('no file cites the design notes, the style notes or the reference notes kept outside it', () => {
    const files = [...CODE_DIRS.flatMap(filesUnder), 'README.md', 'CHANGELOG.md', 'BENCHMARKS.md', 'package.json'];
    const citing = files.flatMap((file) => readFileSync(join(ROOT, file), 'utf8').split('\n')
      .map((line, i) => (outside.test(line) ? `${file}:${i + 1}: ${line.trim()}` : undefined))
      .filter((hit): hit is string => hit !== undefined));
    expect(citing).toEqual([]);
  });
});

describe('the README', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

  it('is under 300 lines', () => {
    expect(readme.split('\n').length).toBeLessThan(300);
  });

  it('links the topic files of docs/', () => {
    const linked = new Set(links(readme).map((t) => t.split('#')[0]));
    const topics = ['contract', 'formats', 'financials', 'streaming', 'explorer', 'configuration', 'keys-and-plans', 'vendors', 'store', 'fleet', 'operations', 'deploy', 'architecture'];
    expect(topics.map((name) => `docs/${name}.md`).filter((f) => !linked.has(f))).toEqual([]);
  });

  it('counts the EBADENGINE warnings npm ci prints on the Node it names', () => {
    const m = /on Node (\d+) \((\d+\.\d+) here\), `npm ci` prints (\w+) `EBADENGINE` warnings/.exec(readme.replace(/\s+/g, ' '));
    expect(m, 'the README names the Node version and the number of warnings').not.toBeNull();
    const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
    const stated = words.indexOf(m![3]);
    const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean };
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { engines?: { node?: string } }> };
    const warned = Object.entries(lock.packages)
      .filter(([, pkg]) => pkg.engines?.node !== undefined && !semver.satisfies(`${m![2]}.0`, pkg.engines.node))
      .map(([path]) => path.replace(/^node_modules\//, '') || '(this package)');
    expect(warned.length, warned.join(', ')).toBe(stated);
    for (const name of warned.filter((p) => p !== '(this package)')) expect(readme.replace(/\s+/g, ' '), name).toContain(name.includes('kubernetes-models') ? 'kubernetes-models' : `\`${name}\``);
  });
});
