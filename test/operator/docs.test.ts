// Issue 13.6: the README and docs/ read from a clone: every relative link resolves inside the
// repository, nothing points outside it, /metrics is in the operations list, LICENSE and
// CHANGELOG exist and package.json says MIT.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './spawn.ts';

const FILES = ['README.md', 'CHANGELOG.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

function links(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((target) => !/^[a-z]+:/i.test(target));
}

describe('documentation from a clone', () => {
  it.each(FILES)('%s: relative links resolve inside the repository', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    expect(text).not.toMatch(/\.\.\/shared/);
    for (const target of links(text)) {
      const path = resolve(dirname(join(ROOT, file)), target.split('#')[0]);
      expect(relative(ROOT, path).startsWith('..'), `${file} → ${target}`).toBe(false);
      expect(existsSync(path), `${file} → ${target}`).toBe(true);
    }
  });

  it('the README links the contract, operations and deployment docs and lists /metrics', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const target of ['docs/contract.md', 'docs/operations.md', 'docs/deploy.md', 'LICENSE', 'CHANGELOG.md']) expect(links(readme)).toContain(target);
    const operations = readme.split(/^## Operations\s*$/m)[1].split(/^## /m)[0];
    expect(operations).toContain('`GET /metrics`');
  });

  it('MIT licence in LICENSE and package.json', () => {
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8').split('\n')[0]).toBe('MIT License');
    expect((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { license: string }).license).toBe('MIT');
  });
});
