// The keys file every benchmark uses: one plan with every plan feature the checkout knows (the
// list is imported, never copied, so a new feature reaches the benches with nothing to edit) and a
// rate limit no benchmark reaches. Another checkout (an earlier commit, for before/after in one
// run) gets the features of its own src/access/keys.ts: its schema rejects a feature it does not
// know.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { FEATURES } from '../../src/access/keys.ts';

/** The key the bench plan accepts (its SHA-256 is in the generated keys file). */
export const BENCH_KEY = 'bench-key-0123456789';

export interface BenchPlanOptions {
  /** Plan features; default every feature of this checkout. */
  features?: readonly string[];
  /** Rate-limit window (the limit is 10,000,000 per window); default one minute. */
  windowMs?: number;
  maxSymbols?: number;
}

/** The keys file as data (what parseKeysFile takes and what the YAML says). */
export function benchKeysFile(options: BenchPlanOptions = {}) {
  return {
    plans: {
      bench: {
        markets: ['CN', 'HK', 'US'],
        features: [...(options.features ?? FEATURES)],
        rate_limit: { max: 10_000_000, window_ms: options.windowMs ?? 60_000 },
        max_symbols: options.maxSymbols ?? 100,
      },
    },
    keys: [{ id: 'bench', plan: 'bench', sha256: createHash('sha256').update(BENCH_KEY, 'utf8').digest('hex') }],
  };
}

export function benchKeysYaml(options: BenchPlanOptions = {}): string {
  return stringify(benchKeysFile(options));
}

/** The plan features of the checkout at `root` (its own FEATURES export), or this checkout's. */
export async function featuresOf(root: string): Promise<readonly string[]> {
  const file = join(root, 'src/access/keys.ts');
  if (!existsSync(file)) return FEATURES;
  try {
    const module = (await import(pathToFileURL(file).href)) as { FEATURES?: readonly string[] };
    return Array.isArray(module.FEATURES) ? module.FEATURES : FEATURES;
  } catch {
    return FEATURES;
  }
}
