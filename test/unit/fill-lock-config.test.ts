// Issue 28.2: the fill lock's setting is a lease now (redis.fillLockLeaseMs); the old lifetime
// setting (redis.fillLockMs) is refused in a file and in the environment, naming the new one.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, loadDefaultConfig } from '../../config/load.ts';

const renamed = 'expected nothing: renamed redis.fillLockLeaseMs (the fill lock\'s lease, renewed while its holder works; default 1000 ms)';

describe('redis.fillLockLeaseMs', () => {
  it('defaults to a one-second lease and takes a value in range', () => {
    expect(loadDefaultConfig().redis.fillLockLeaseMs).toBe(1000);
    expect(loadConfig({ MDQS__redis__fillLockLeaseMs: '750' }).config.redis.fillLockLeaseMs).toBe(750);
    expect(() => loadConfig({ MDQS__redis__fillLockLeaseMs: '50' })).toThrow('redis.fillLockLeaseMs: got 50 (MDQS__redis__fillLockLeaseMs); expected an integer from 200 to 30_000');
  });

  it('the old redis.fillLockMs is refused with a pointer to the new setting, from a file or a variable', () => {
    expect(() => loadConfig({ MDQS__redis__fillLockMs: '5000' })).toThrow(`redis.fillLockMs: got 5000 (MDQS__redis__fillLockMs); ${renamed}`);
    const dir = mkdtempSync(join(tmpdir(), 'mdqs-lease-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'redis:\n  fillLockMs: 5000\n');
    expect(() => loadConfig({ CONFIG_FILE: file })).toThrow(`redis.fillLockMs: got 5000 (${file}:2); ${renamed}`);
  });
});
