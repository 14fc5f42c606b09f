// Operator commands.
//   npm run cli -- create-key --id <label> --plan <plan> [--keys-file config/keys.yaml]
//       Creates a random key, prints it ONCE, appends only its SHA-256 hash to the keys file.
//   npm run cli -- check-config [--config-file f]
//       Validates the config and keys files and reports every problem.
import { loadConfig } from '../config/load.ts';
import { createKey } from './access/create-key.ts';
import { loadKeysFile } from './access/keys.ts';

function flag(args: string[], name: string): string | undefined {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : undefined;
}

function main(argv: string[]): number {
  const [command, ...args] = argv;
  if (command === 'create-key') {
    const id = flag(args, 'id');
    const plan = flag(args, 'plan');
    if (!id || !plan) {
      process.stderr.write('usage: create-key --id <label> --plan <plan> [--keys-file <path>]\n');
      return 2;
    }
    const keysFile = flag(args, 'keys-file') ?? process.env.KEYS_FILE ?? loadConfig(process.env).config.keys.file;
    const key = createKey(keysFile, id, plan);
    process.stdout.write(`${key}\n`);
    process.stderr.write(`key '${id}' (plan ${plan}) added to ${keysFile}; only its SHA-256 hash is stored. This is the only time the key is shown. Send SIGHUP to a running server to load it.\n`);
    return 0;
  }
  if (command === 'check-config') {
    const configFile = flag(args, 'config-file');
    const { config, file } = loadConfig(configFile ? { ...process.env, CONFIG_FILE: configFile } : process.env);
    const keys = loadKeysFile(config.keys.file);
    process.stdout.write(`ok: ${file}; ${config.keys.file}: ${keys.byHash.size} keys, ${keys.plans.size} plans\n`);
    return 0;
  }
  process.stderr.write('commands: create-key --id <label> --plan <plan> [--keys-file <path>] | check-config [--config-file <path>]\n');
  return 2;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exitCode = 1;
}
