// `reload`: the keys file checked first, then SIGHUP to the server's pid (src/process/pidfile.ts).
import { ConfigError, loadConfig } from '../../config/load.ts';
import { loadKeysFile } from '../access/keys.ts';
import { parseArgs } from './args.ts';
import { keysFileFor, refuseOtherKeysFile, type Io } from './keys.ts';
import { readPid } from '../process/pidfile.ts';

export const RELOAD_USAGE = 'reload [--pid-file <path>] [--keys-file <path>]';

/**
 * `reload`: check the keys file the server would load (as check-config does) and only then send
 * SIGHUP to the pid in the pid file. A broken file is reported here, with every problem, and
 * nothing is sent: the running server keeps its keys either way, but the operator learns it now.
 */
export function cmdReload(args: string[], env: Record<string, string | undefined>, io: Io): number {
  const { flags } = parseArgs(args, { options: ['pid-file', 'keys-file'], usage: RELOAD_USAGE });
  const { path: keysFile } = keysFileFor(flags.get('keys-file'), env);
  let keys: number;
  try {
    keys = loadKeysFile(keysFile).byHash.size;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.err(`${error.message}\nnot reloaded: nothing was sent; fix the keys file and run reload again (the server keeps its current keys meanwhile).\n`);
    return 1;
  }
  const path = flags.get('pid-file') ?? loadConfig(env).config.server.pidFile;
  if (!path) throw new Error('server.pidFile is empty: no pid file to read; pass --pid-file <path>');
  refuseOtherKeysFile(keysFile, env, path);
  const pid = readPid(path);
  try {
    process.kill(pid, 'SIGHUP');
  } catch (error) {
    throw new Error(`cannot signal pid ${pid} from ${path}: ${(error as Error).message} (stale pid file?)`);
  }
  io.err(`keys file ${keysFile} is valid (${keys} key${keys === 1 ? '' : 's'}); sent SIGHUP to ${pid} (from ${path}); the server reloads its keys file and logs "keys reloaded".\n`);
  return 0;
}
