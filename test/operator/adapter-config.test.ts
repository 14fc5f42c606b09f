// Issue 23 item 5, as an operator meets it: `npm run cli -- check-config` and the boot of
// src/server.ts refuse the same adapter mistakes with the same lines (file:line, the nearest known
// name), exit 1 and print no stack. Before, check-config said "ok" for `US: [yahooo]` and the boot
// then died with a stack trace; a misspelt or out-of-range vendor option was silently ignored.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, GUARD_MS, ROOT, spawnService, withGuard } from './spawn.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-adapter-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const CASES: Array<{ name: string; yaml: string; problems: (path: string) => string[] }> = [
  {
    name: 'an unknown adapter id in a routing chain',
    yaml: 'routing:\n  markets:\n    US: [yahooo]\n',
    problems: (path) => [`routing.markets.US[0]: unknown adapter yahooo (${path}:3); did you mean yahoo?`],
  },
  {
    name: 'a block for an unknown adapter',
    yaml: 'adapters:\n  yahooo:\n    maxBatch: 5\n',
    problems: (path) => [`adapters.yahooo: unknown adapter yahooo (${path}:2); did you mean adapters.yahoo?`],
  },
  {
    name: 'an unknown and an out-of-range vendor option',
    yaml: 'routing:\n  markets:\n    US: [yahoo]\nadapters:\n  yahoo:\n    maxbatch: 3\n    minuteDaysPerRequest: 30\n',
    problems: (path) => [
      `adapters.yahoo.maxbatch: unknown setting (${path}:6); did you mean adapters.yahoo.maxBatch?`,
      `adapters.yahoo.minuteDaysPerRequest: got 30 (${path}:7); expected an integer from 1 to 7`,
    ],
  },
];

const expectedStderr = (problems: string[]) =>
  `invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${problems.map((p) => `  - ${p}\n`).join('')}`;

describe('npm run cli -- check-config', () => {
  it.each(CASES)('refuses $name with file:line and the nearest name', ({ name, yaml, problems }) => {
    const path = file(`check-${name.replace(/\W+/g, '-')}.yaml`, yaml);
    const res = spawnSync('npm', ['run', '--silent', 'cli', '--', 'check-config'], { cwd: ROOT, env: cleanEnv({ CONFIG_FILE: path }), encoding: 'utf8', timeout: GUARD_MS });
    expect(res.status).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(expectedStderr(problems(path)));
  });
});

describe('the boot (node src/server.ts)', () => {
  it.each(CASES)('refuses $name with the same lines, exit 1, no stack', async ({ name, yaml, problems }) => {
    const path = file(`boot-${name.replace(/\W+/g, '-')}.yaml`, yaml);
    const server = spawnService([process.execPath, 'src/server.ts'], { CONFIG_FILE: path, PORT: '0' });
    try {
      const exit = await withGuard(server.exited, 'the server exits');
      expect(exit.code).toBe(1);
      expect(server.logs.find((l) => /listening/i.test(l.msg))).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 50)); // the last stderr lines
      expect(`${server.stderr.join('\n')}\n`).toBe(expectedStderr(problems(path)));
    } finally {
      server.kill();
    }
  });
});
