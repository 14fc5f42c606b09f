// The `adapters.sim` block (also any `adapters.<id>` with `type: sim`): what may be set, its
// bounds and defaults. Checked by the config loader (config/adapters.ts) with the rest of the
// config, so a misspelt or out-of-range option is a boot error with its file:line. A leaf module:
// the loader imports it without loading the simulated market.
import { Type, type Static } from 'typebox';

const MiB = 1024 * 1024;

export const SIM_DEFAULTS = {
  syntheticUniverse: 0,
  /** Kept equal to adapters/sim/memo.ts DEFAULT_MEMO_MAX_BYTES (test/unit/adapter-options.test.ts). */
  memoMaxBytes: 10 * MiB,
  /** Kept equal to adapters/sim/memo.ts MIN_MEMO_MAX_BYTES. */
  memoMinBytes: 4 * MiB,
} as const;

const Rate = (description: string) => Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0, description }));

export const SIM_OPTIONS = Type.Object({
  latency: Type.Optional(Type.Object({
    fixedMs: Type.Optional(Type.Number({ minimum: 0, maximum: 600_000, default: 0, description: 'added to every call, ms' })),
    randomMs: Type.Optional(Type.Number({ minimum: 0, maximum: 600_000, default: 0, description: 'uniform random extra in [0, randomMs), ms' })),
  })),
  faults: Type.Optional(Type.Object({
    errorRate: Rate('fraction of calls failing with UPSTREAM_ERROR'),
    timeoutRate: Rate('fraction of calls hanging timeoutMs, then UPSTREAM_TIMEOUT'),
    malformedRate: Rate('fraction of calls failing with UPSTREAM_BAD_RESPONSE'),
    invalidRowRate: Rate('fraction of answers carrying one malformed row (dropped by the boundary checks)'),
    seed: Type.Optional(Type.Integer({ minimum: -2_147_483_648, maximum: 4_294_967_295, default: 1 })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000, default: 1000 })),
  })),
  /** Extra synthetic US symbols SIM0001.US … for load tests. */
  syntheticUniverse: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: SIM_DEFAULTS.syntheticUniverse })),
  /** Bound of the sim's memos together (histories, 1m days, tails, midnights), bytes. */
  memoMaxBytes: Type.Optional(Type.Integer({ minimum: SIM_DEFAULTS.memoMinBytes, maximum: 64 * 1024 * MiB, default: SIM_DEFAULTS.memoMaxBytes })),
});

export type SimOptions = Static<typeof SIM_OPTIONS>;
