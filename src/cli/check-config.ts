// check-config: validate the config and the keys file exactly as the server would, then print the
// effective config (defaults + CONFIG_FILE + environment) with secrets masked.
import { stringify } from 'yaml';
import { loadConfig } from '../../config/load.ts';
import { loadKeysFile } from '../access/keys.ts';
import { listenHost } from './listen-host.ts';
import { parseArgs } from './args.ts';
import type { Io } from './keys.ts';
import { maskSecrets } from './mask.ts';

type Env = Record<string, string | undefined>;

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

export function cmdCheckConfig(args: string[], env: Env, io: Io): number {
  const { flags } = parseArgs(args, ['config-file']);
  const configFile = flags.get('config-file');
  const loaded = loadConfig(configFile ? { ...env, CONFIG_FILE: configFile } : env);
  const keys = loadKeysFile(loaded.config.keys.file);
  const demo = [...keys.byHash.values()].filter((k) => k.demo).map((k) => k.id);
  io.out(`# effective configuration (secrets masked)\n${stringify(maskSecrets(loaded.config))}`);
  const host = listenHost(loaded.config.server.host, demo);
  io.err(`ok: config ${loaded.file}; keys file ${loaded.config.keys.file}: ${plural(keys.byHash.size, 'key')}, ${plural(keys.plans.size, 'plan')}; `
    + `would listen on ${host.host}:${loaded.config.server.port}${host.reason ? ` (${host.reason})` : ''}\n`);
  return 0;
}
