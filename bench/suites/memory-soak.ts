// Issue 15 item 4: the random-key memory soak as the issue measured it (bench/lib/random-key-soak.ts variant A:
// `src/server.ts`, 5000-symbol sim universe, 16 MiB + 16 MiB cache bounds, 32 connections), for a
// bounded time, reporting the two targets:
//   peak RSS − baseline RSS − bounds ≤ 150 MiB
//   retained after two forced full GCs (heap + external, end − baseline) ≤ bounds + 20 MiB
//
//   node bench/suites/memory-soak.ts                      this checkout, no extra node flags
//   SOAK_ROOT=/tmp/mdqs-mem-before node bench/suites/memory-soak.ts      another checkout (before)
//   SOAK_NODE_ARGS='--max-semi-space-size=8' node bench/suites/memory-soak.ts   flags under test
//   SOAK_START_FLAGS=1 node bench/suites/memory-soak.ts   the flags and variables of package.json's `start`
//   SOAK_MALLOC_ARENA_MAX=2 node bench/suites/memory-soak.ts   glibc malloc arenas for the service
//   SOAK_ENV='MDQS__adapters__sim__memoMaxBytes=16777216' …   any extra environment (K=V, spaces)
// Other knobs: SOAK_SECONDS (180), SOAK_CACHE_MIB (16), SOAK_UNIVERSE (5000), SOAK_CONNECTIONS (32).
import { mib, runSoak, soakNumber, soakRows, soakSettings } from '../lib/random-key-soak.ts';
import { reportHeadlines } from '../lib/report.ts';

const MIB = 1048576;
const num = soakNumber;
const { seconds, cacheBytes, root, nodeArgs, env } = soakSettings();
const log = (line: string) => process.stdout.write(`${line}\n`);

log(`soak: ${root ?? 'this checkout'}, node flags [${nodeArgs.join(' ')}]${Object.keys(env).length > 0 ? `, env ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}, bounds 2 × ${mib(cacheBytes)}, ${seconds} s`);
const s = await runSoak(
  { name: 'A', universe: num('SOAK_UNIVERSE', 5000), cacheBytes, root, nodeArgs, env },
  { seconds, connections: num('SOAK_CONNECTIONS', 32), log },
);
const bounds = 2 * cacheBytes;
const { rows, over, retainedGrowth, free } = soakRows(s, bounds, { statuses: 'req/s (statuses)', bounds: '', caches: 'caches account (data + response)' });
for (const [k, v] of rows) log(`| ${k} | ${v} |`);
reportHeadlines([
  { suite: 'memory soak', figure: `peak RSS − baseline − bounds (2 × ${mib(cacheBytes)}, ${seconds} s, ${s.load.reqPerSec.toFixed(0)} req/s)`, value: mib(over), target: '≤ 150 MiB', pass: over <= 150 * MIB },
  { suite: 'memory soak', figure: 'retained growth after GC (heap + external)', value: mib(retainedGrowth), target: `≤ ${mib(free + 20 * MIB)}`, pass: retainedGrowth <= free + 20 * MIB },
]);
if (process.env.SOAK_JSON) process.stdout.write(`${JSON.stringify({ ...s, nodeArgs, root, over, retainedGrowth })}\n`);
