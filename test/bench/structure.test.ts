// bench/ keeps the layout the style guide gives it (suites, servers, diagnostics, lib; one
// runner), every benchmark the docs and npm scripts name exists, the runner's suites exist, no
// bench copies the plan feature list, and every bench file type-checks under the repo's tsconfig.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { FEATURES } from '../../src/access/keys.ts';
import { SUITES } from '../../bench/run.ts';
import { benchKeysFile } from '../../bench/lib/bench-keys.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FOLDERS = ['suites', 'servers', 'diagnostics', 'lib'];

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]);
}
const BENCH_FILES = filesUnder('bench');

/** Every bench/… .ts path a text names (commands, references). */
function benchPathsIn(text: string): string[] {
  return [...new Set([...text.matchAll(/\bbench\/[\w./-]+?\.ts\b/g)].map((m) => m[0]))];
}

describe('bench/ layout', () => {
  it('has one runner and every other file in suites/, servers/, diagnostics/ or lib/', () => {
    const misplaced = BENCH_FILES.filter((f) => f !== 'bench/run.ts' && !FOLDERS.some((folder) => f.startsWith(`bench/${folder}/`)));
    expect(misplaced).toEqual([]);
    for (const folder of FOLDERS) expect(BENCH_FILES.some((f) => f.startsWith(`bench/${folder}/`))).toBe(true);
  });

  it('names no file after an issue number', () => {
    expect(BENCH_FILES.filter((f) => /issue|\/\d+[-.]/i.test(f))).toEqual([]);
  });

  it('runs only suites that exist in bench/suites/', () => {
    expect(SUITES.length).toBeGreaterThan(0);
    for (const suite of SUITES) {
      expect(suite.file, suite.id).toMatch(/^suites\//);
      expect(existsSync(join(ROOT, 'bench', suite.file)), suite.file).toBe(true);
    }
  });
});

describe('references to bench files', () => {
  it('npm scripts: every bench script points at a file that exists, and `npm run bench` is the runner', () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const benchScripts = Object.entries(scripts).filter(([name]) => name === 'bench' || name.startsWith('bench:'));
    expect(benchScripts.length).toBeGreaterThan(1);
    for (const [name, command] of benchScripts) {
      const paths = benchPathsIn(command);
      expect(paths, name).not.toEqual([]);
      for (const path of paths) expect(existsSync(join(ROOT, path)), `${name}: ${path}`).toBe(true);
    }
    expect(scripts.bench).toBe('node bench/run.ts');
  });

  it.each(['BENCHMARKS.md', 'README.md', 'docs/operations.md', 'docs/deploy.md', 'CHANGELOG.md'])('%s names only bench files that exist', (doc) => {
    if (!existsSync(join(ROOT, doc))) return;
    const text = readFileSync(join(ROOT, doc), 'utf8');
    const missing = benchPathsIn(text).filter((path) => !existsSync(join(ROOT, path)));
    expect(missing).toEqual([]);
  });

  it.each(['BENCHMARKS.md', 'README.md', 'docs/operations.md'])('%s names only npm bench scripts that exist', (doc) => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const named = [...readFileSync(join(ROOT, doc), 'utf8').matchAll(/npm run (bench(?::[\w-]+)?)/g)].map((m) => m[1]);
    expect(named.filter((name) => scripts[name] === undefined)).toEqual([]);
  });

  it('BENCHMARKS.md names every standing suite and the before/after bench', () => {
    const text = readFileSync(join(ROOT, 'BENCHMARKS.md'), 'utf8');
    for (const suite of SUITES) expect(text, suite.file).toContain(`bench/${suite.file}`);
    expect(text).toContain('bench/suites/cache-hit-before-after.ts');
  });

  it('bench files name only bench files that exist', () => {
    for (const file of BENCH_FILES) {
      const missing = benchPathsIn(readFileSync(join(ROOT, file), 'utf8')).filter((path) => !existsSync(join(ROOT, path)));
      expect(missing, file).toEqual([]);
    }
  });
});

describe('the bench plan', () => {
  it('has every plan feature, from the feature list itself', () => {
    expect(benchKeysFile().plans.bench.features).toEqual([...FEATURES]);
  });

  it('is not copied into any bench file', () => {
    // Two feature names side by side in a list is what a copy looks like.
    const copies = BENCH_FILES.filter((f) => /['"\s]klines_daily['"]?\s*,\s*['"]?klines_minute/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(copies).toEqual([]);
  });
});

describe('type-checking', () => {
  const configFile = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);

  it("the repo's tsconfig includes every bench file", () => {
    const included = new Set(parsed.fileNames.map((f) => relative(ROOT, f)));
    expect(BENCH_FILES.filter((f) => f.endsWith('.ts') && !included.has(f))).toEqual([]);
  });

  it('every bench file type-checks with those options', () => {
    const program = ts.createProgram(BENCH_FILES.filter((f) => f.endsWith('.ts')).map((f) => join(ROOT, f)), parsed.options);
    // Errors in the bench files themselves (a file they import that is broken fails its own tests).
    const errors = ts.getPreEmitDiagnostics(program)
      .filter((d) => d.file !== undefined && relative(ROOT, d.file.fileName).startsWith('bench/'))
      .map((d) => `${relative(ROOT, d.file!.fileName)}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(errors).toEqual([]);
  }, 120_000);
});
