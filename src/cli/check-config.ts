// check-config: validate the config and the keys file exactly as the server would, then print the
// effective config (defaults + CONFIG_FILE + environment) with secrets masked: YAML, or JSON with --json.
import { stringify } from 'yaml';
import { loadConfig } from '../../config/load.ts';
import { KeyStore, loadKeysFile } from '../access/keys.ts';
import { listenHost } from '../process/listen-host.ts';
import { parseArgs } from './args.ts';
import type { Io } from './keys.ts';
import { maskSecrets } from './mask.ts';

type Env = Record<string, string | undefined>;

export const CHECK_CONFIG_USAGE = 'check-config [--config-file <path>] [--json]';

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

export function cmdCheckConfig(args: string[], env: Env, io: Io): number {
  const { flags, switches } = parseArgs(args, { options: ['config-file'], switches: ['json'], usage: CHECK_CONFIG_USAGE });
  const configFile = flags.get('config-file');
  const loaded = loadConfig(configFile ? { ...env, CONFIG_FILE: configFile } : env);
  const keys = loadKeysFile(loaded.config.keys.file);
  // The same list the server decides its bind by (a demo key, and a free tier marked demo).
  const demo = new KeyStore(keys).demoKeyIds;
  const masked = maskSecrets(loaded.config);
  io.out(switches.has('json') ? `${JSON.stringify(masked, null, 2)}\n` : `# effective configuration (secrets masked)\n${stringify(masked)}`);
  const host = listenHost(loaded.config.server.host, demo);
  io.err(`ok: config ${loaded.file}; keys file ${loaded.config.keys.file}: ${plural(keys.byHash.size, 'key')}, ${plural(keys.plans.size, 'plan')}; `
    + `would listen on ${host.host}:${loaded.config.server.port}${host.reason ? ` (${host.reason})` : ''}\n`);
  return 0;
}
