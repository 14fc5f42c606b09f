// Imports run one way: no import cycle among the files of src/ and adapters/ (and what they reach,
// config/ included), type-only imports counted; adapters reach nothing of src/ above its leaves.
//
// The check is madge's (`madge --circular --extensions ts`, here through its API), with its
// defaults: for .ts files it parses with detective-typescript, whose defaults keep type-only edges
// (`import type`, `import { type X }`, `export type … from`, `import('…')` types) and dynamic
// imports, and it resolves `.ts` specifiers as written. dpdm needs `-T` left off to count them, and
// a compiler-API walk would re-implement what madge already does; madge also reports every
// relative import it could not resolve, which the test requires to be none (an unresolved import
// is an edge the check could not see). The fixture case pins those defaults: a type-only cycle must
// be found, so a madge upgrade that dropped type edges fails here rather than hiding cycles.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface MadgeResult {
  /** Each cycle, as the files along it (relative to baseDir). */
  circular(): string[][];
  /** Each file and the files it imports. */
  obj(): Record<string, string[]>;
  /** Imports that could not be resolved to a file. */
  warnings(): { skipped: string[] };
}
type Madge = (paths: string[], config: { baseDir: string; fileExtensions: string[] }) => Promise<MadgeResult>;

// madge ships CommonJS without type declarations.
const madge = createRequire(import.meta.url)('madge') as Madge;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What adapters may reach in src/ (themselves importing nothing above them). */
const LEAVES = ['src/domain.ts', 'src/errors.ts', 'src/resources.ts', 'src/candles/', 'src/markets/', 'src/financials/'];

/** The graph of `dirs` (relative to `baseDir`) and what they import, file names relative to `baseDir`. */
const scan = (baseDir: string, dirs: string[]) => madge(dirs.map((d) => join(baseDir, d)), { baseDir, fileExtensions: ['ts'] });

describe('the module graph of src/ and adapters/', () => {
  let graph: MadgeResult;
  beforeAll(async () => {
    graph = await scan(ROOT, ['src', 'adapters']);
  }, 60_000);

  it('resolves every relative import (an unresolved one would be an edge the check cannot see)', () => {
    expect(graph.warnings().skipped).toEqual([]);
    expect(Object.keys(graph.obj())).toContain('adapters/types.ts');
  });

  it('has no import cycle, type-only imports included', () => {
    expect(graph.circular()).toEqual([]);
  });

  it('lets adapters reach only adapters/ and the leaf modules of src/', () => {
    const edges = graph.obj();
    const seen = new Set<string>();
    const queue = Object.keys(edges).filter((f) => f.startsWith('adapters/'));
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      if (seen.has(file)) continue;
      seen.add(file);
      queue.push(...(edges[file] ?? []));
    }
    const above = [...seen].filter((f) => !f.startsWith('adapters/') && !LEAVES.some((leaf) => f === leaf || (leaf.endsWith('/') && f.startsWith(leaf))));
    expect(above).toEqual([]);
  });
});

describe('the cycle check itself', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mdqs-cycles-'));
    // Two cycles made only of type edges, in the forms the source uses.
    writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.ts';\nexport type A = { b?: B };\n");
    writeFileSync(join(dir, 'b.ts'), "export type { A } from './a.ts';\nexport type B = number;\n");
    writeFileSync(join(dir, 'c.ts'), "import { type D } from './d.ts';\nexport type C = { d?: D };\n");
    writeFileSync(join(dir, 'd.ts'), "export type D = { c?: import('./c.ts').C };\n");
    writeFileSync(join(dir, 'leaf.ts'), "import type { A } from './a.ts';\nexport type Leaf = A;\n");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds a cycle made only of type-only imports', async () => {
    const found = (await scan(dir, ['.'])).circular().map((cycle) => [...cycle].sort());
    expect(found.sort()).toEqual([['a.ts', 'b.ts'], ['c.ts', 'd.ts']]);
  });
});
