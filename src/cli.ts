// Operator commands (`npm run cli -- <command>`; `npm run -s cli` keeps npm's banner off stdout).
//   help, --help, -h                   the usage (stdout, exit 0)
//   check-config [--config-file f] [--json]  validate config + keys file; print the effective config, secrets masked
//   create-key --id --plan [--expires] print a new key (stdout, once); only its hash is stored
//   rotate-key --id [--grace 24h]      new key for the id; the old one works for the grace period
//   revoke-key --id                    remove a key (and tell instances sharing Redis to reload)
//   keys list                          ids, plans, dates, hash prefixes
//   keys create|rotate|revoke …        the same as the dashed names
//   reload [--pid-file f]              check the keys file, then SIGHUP the running server
//   history stats|drop|warm …          the history store's commands (src/store/cli.ts)
// Every command refuses an option or a word it does not know (exit 2, naming what it takes).
// Keys files: --keys-file, else KEYS_FILE, else keys.file from the config. The repository's own
// config/keys.yaml is modified only when named with --keys-file. create-key, rotate-key,
// revoke-key and reload refuse a keys file other than the one the running server reads (the
// state file beside its pid file names it; src/process/pidfile.ts).
import { ConfigError } from '../config/load.ts';
import { parseArgs, UsageError, type ArgSpec } from './cli/args.ts';
import { CHECK_CONFIG_USAGE, cmdCheckConfig } from './cli/check-config.ts';
import { cmdCreateKey, cmdKeys, cmdRevokeKey, cmdRotateKey, KEY_USAGE, type Io } from './cli/keys.ts';
import { cmdReload, RELOAD_USAGE } from './cli/reload.ts';
import { resolvePoolId } from './markets/pools.ts';

type Env = Record<string, string | undefined>;

const POOLS_AND_ALIASES = 'CN_Stock|CN_ETF|HK_Stock|US_Stock|CN_Index|HK_Index|US_Index (or CN_Equity_A|HK_Equity|US_Equity)';

/** The history store's commands and what each takes (src/store/cli.ts runs them). */
const HISTORY: Record<string, ArgSpec & { usage: string }> = {
  stats: { options: [], switches: ['json'], usage: 'history stats [--json]' },
  drop: {
    options: ['symbol', 'period', 'from', 'to', 'adapter'],
    usage: 'history drop --symbol S [--period 1m|1d] [--from YYYY-MM-DD --to YYYY-MM-DD] [--adapter A]',
  },
  export: {
    options: ['out', 'universe', 'symbols', 'period', 'from', 'to', 'format', 'adapter'],
    usage: `history export --out DIR [--universe ${POOLS_AND_ALIASES} | --symbols A,B] [--period 1d|1m] [--from YYYY-MM-DD --to YYYY-MM-DD] [--format parquet|csv] [--adapter A]`,
  },
  warm: {
    options: ['universe', 'symbols', 'period', 'from', 'to', 'pause-ms'],
    switches: ['ex-factors', 'instruments'],
    usage: `history warm [--universe ${POOLS_AND_ALIASES}] [--symbols A,B] [--period 1d,1m] --from YYYY-MM-DD [--to YYYY-MM-DD] [--ex-factors] [--instruments] [--pause-ms N]`,
  },
};

const USAGE = [
  'help',
  CHECK_CONFIG_USAGE,
  ...KEY_USAGE,
  RELOAD_USAGE,
  ...Object.values(HISTORY).map((h) => h.usage),
];

function usage(): string {
  return `usage: npm run cli -- <command> [options]\ncommands:\n  ${USAGE.join('\n  ')}\n`;
}

/**
 * `history …`: its options are checked here against what each subcommand takes (src/store/cli.ts
 * reads only the names it knows, so `--bogus` would pass unseen), `--name=value` is passed on as
 * `--name value`, and a pool alias (CN_Equity_A, HK_Equity, US_Equity) becomes its pool id.
 */
async function history(args: string[], env: Env): Promise<number> {
  const [sub, ...rest] = args;
  const spec = sub === undefined ? undefined : HISTORY[sub];
  if (spec === undefined) {
    throw new UsageError(`history: ${sub === undefined ? 'no subcommand' : `unknown subcommand ${sub}`}; usage:\n  ${Object.values(HISTORY).map((h) => h.usage).join('\n  ')}`);
  }
  const { flags, switches } = parseArgs(rest, spec);
  const universe = flags.get('universe');
  if (universe !== undefined) {
    const id = resolvePoolId(universe);
    if (id === undefined) throw new UsageError(`--universe must be one of ${POOLS_AND_ALIASES.replaceAll('|', ', ')}, not ${universe}; usage: ${spec.usage}`);
    flags.set('universe', id);
  }
  const passed = [sub!, ...[...flags].flatMap(([name, value]) => [`--${name}`, value]), ...[...switches].map((name) => `--${name}`)];
  let run: ((args: string[], env: Env) => Promise<number> | number) | undefined;
  try {
    const specifier = './store/cli.ts';
    ({ runHistoryCommand: run } = (await import(specifier)) as { runHistoryCommand?: typeof run });
  } catch {
    run = undefined;
  }
  if (run === undefined) throw new Error('the history store commands are not part of this build');
  return run(passed, env);
}

async function runCli(argv: string[], env: Env, io: Io): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'help':
    case '--help':
    case '-h':
      parseArgs(args, { options: [], positional: 1, usage: 'help [command]' });
      io.out(usage());
      return 0;
    case 'check-config': return cmdCheckConfig(args, env, io);
    case 'create-key': return cmdCreateKey(args, env, io);
    case 'rotate-key': return cmdRotateKey(args, env, io);
    case 'revoke-key': return cmdRevokeKey(args, env, io);
    case 'keys': return cmdKeys(args, env, io);
    case 'list-keys': return cmdKeys(['list', ...args], env, io);
    case 'reload': return cmdReload(args, env, io);
    case 'history': return history(args, env);
    default:
      throw new UsageError(`${command === undefined ? 'no command' : `unknown command ${command}`}; commands:\n  ${USAGE.join('\n  ')}\n(npm run cli -- help prints this)`);
  }
}

if (import.meta.main) {
  const io: Io = {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    now: () => Date.now(),
  };
  try {
    process.exitCode = await runCli(process.argv.slice(2), process.env, io);
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError || error instanceof UsageError ? '' : 'error: '}${(error as Error).message}\n`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
