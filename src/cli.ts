// Operator commands (`npm run cli -- <command>`; `npm run -s cli` keeps npm's banner off stdout).
//   check-config [--config-file f]     validate config + keys file; print the effective config, secrets masked
//   create-key --id --plan [--expires] print a new key (stdout, once); only its hash is stored
//   rotate-key --id [--grace 24h]      new key for the id; the old one works for the grace period
//   revoke-key --id                    remove a key (and tell instances sharing Redis to reload)
//   keys list                          ids, plans, dates, hash prefixes
//   reload [--pid-file f]              SIGHUP the running server (reloads the keys file)
//   history …                          the history store's commands (src/store/cli.ts)
// Keys files: --keys-file, else KEYS_FILE, else keys.file from the config. The repository's own
// config/keys.yaml is modified only when named with --keys-file.
import { ConfigError } from '../config/load.ts';
import { UsageError } from './cli/args.ts';
import { cmdCheckConfig } from './cli/check-config.ts';
import { cmdCreateKey, cmdKeys, cmdRevokeKey, cmdRotateKey, KEY_USAGE, type Io } from './cli/keys.ts';
import { cmdReload } from './cli/pidfile.ts';

type Env = Record<string, string | undefined>;

const USAGE = [
  'check-config [--config-file <path>]',
  ...KEY_USAGE,
  'reload [--pid-file <path>]',
  'history <subcommand> …',
];

async function history(args: string[], env: Env): Promise<number> {
  let run: ((args: string[], env: Env) => Promise<number> | number) | undefined;
  try {
    const specifier = './store/cli.ts';
    ({ runHistoryCommand: run } = (await import(specifier)) as { runHistoryCommand?: typeof run });
  } catch {
    run = undefined;
  }
  if (run === undefined) throw new Error('the history store commands are not part of this build');
  return run(args, env);
}

export async function runCli(argv: string[], env: Env, io: Io): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'check-config': return cmdCheckConfig(args, env, io);
    case 'create-key': return cmdCreateKey(args, env, io);
    case 'rotate-key': return cmdRotateKey(args, env, io);
    case 'revoke-key': return cmdRevokeKey(args, env, io);
    case 'keys': return cmdKeys(args, env, io);
    case 'list-keys': return cmdKeys(['list', ...args], env, io);
    case 'reload': return cmdReload(args, env, io);
    case 'history': return history(args, env);
    default:
      throw new UsageError(`${command === undefined ? 'no command' : `unknown command ${command}`}; commands:\n  ${USAGE.join('\n  ')}`);
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
