// Issue 13.5: deploy/mdqs.service is verified by Debian's systemd-analyze (installed by .ci/run).
// The unit's ExecStart names /opt/mdqs/node_modules/.bin/node; verify checks that the binary
// exists, so the check runs on a copy pointing at this checkout's node.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './spawn.ts';

const UNIT = join(ROOT, 'deploy/mdqs.service');
const dir = mkdtempSync(join(tmpdir(), 'mdqs-systemd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function directives(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (match) out.set(match[1], [...(out.get(match[1]) ?? []), match[2]]);
  }
  return out;
}

describe('deploy/mdqs.service', () => {
  const text = readFileSync(UNIT, 'utf8');

  it('passes systemd-analyze verify with no warnings', () => {
    const copy = join(dir, 'mdqs.service');
    writeFileSync(copy, text.replaceAll('/opt/mdqs/node_modules/.bin/node', join(ROOT, 'node_modules/.bin/node')));
    const result = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' });
    expect(result.error, 'systemd-analyze is missing: apt-get install systemd (.ci/run does)').toBeUndefined();
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('a broken unit fails the same check (the check is real)', () => {
    const copy = join(dir, 'broken.service');
    writeFileSync(copy, text.replaceAll('/opt/mdqs/node_modules/.bin/node', '/nonexistent/node').replace('NoNewPrivileges=yes', 'NoNewPrivilege=yes'));
    const result = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' });
    expect(result.stderr).toContain("Unknown key 'NoNewPrivilege'");
    expect(result.stderr).toContain('/nonexistent/node is not executable');
  });

  it('runs node as the main process as a dedicated user, restarts on failure, hardened, data writable', () => {
    const d = directives(text);
    expect(d.get('ExecStart')).toEqual(['/opt/mdqs/node_modules/.bin/node --max-semi-space-size=4 src/server.ts']);
    expect(d.get('Environment')).toContain('MALLOC_ARENA_MAX=2');
    expect(d.get('Environment')).toContain('MALLOC_MMAP_THRESHOLD_=131072');
    expect(d.get('Environment')).toContain('MDQS_HEAP_GROWING_PERCENT=50');
    expect(d.get('Environment')).toContain('NODE_COMPILE_CACHE=/var/cache/mdqs/node-compile-cache');
    expect(d.get('CacheDirectory')).toEqual(['mdqs']);
    expect(d.get('ExecReload')).toEqual(['/bin/kill -HUP $MAINPID']);
    expect(d.get('Type')).toEqual(['simple']);
    expect(d.get('User')).toEqual(['mdqs']);
    expect(d.get('Restart')).toEqual(['on-failure']);
    expect(d.get('KillSignal')).toEqual(['SIGTERM']);
    expect(d.get('NoNewPrivileges')).toEqual(['yes']);
    expect(d.get('ProtectSystem')).toEqual(['strict']);
    expect(d.get('ProtectHome')).toEqual(['yes']);
    expect(d.get('PrivateTmp')).toEqual(['yes']);
    expect(d.get('ReadWritePaths')).toEqual(['/var/lib/mdqs']);
    expect(d.get('ReadOnlyPaths')).toEqual(['/etc/mdqs /opt/mdqs']);
    expect(d.get('Environment')).toContain('KEYS_FILE=/etc/mdqs/keys.yaml');
    expect(d.get('Environment')).toContain('CONFIG_FILE=/etc/mdqs/config.yaml');
    // Everything the service writes lives under the writable paths.
    expect(d.get('Environment')).toContain('MDQS__history__sqlitePath=/var/lib/mdqs/history.sqlite');
    expect(d.get('Environment')).toContain('MDQS__server__pidFile=/run/mdqs/mdqs.pid');
    // The stop timeout covers the default drain (server.shutdownGraceMs 10 s).
    expect(Number(d.get('TimeoutStopSec')![0])).toBeGreaterThan(10);
  });
});
