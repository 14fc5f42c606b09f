// Minimal flag parsing for the operator CLI: `--name value` and `--name=value`; bare words are positional.
export interface Parsed {
  positional: string[];
  flags: Map<string, string>;
}

export class UsageError extends Error {}

export function parseArgs(args: string[], known: readonly string[]): Parsed {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (!known.includes(name)) throw new UsageError(`unknown option --${name} (options: ${known.map((k) => `--${k}`).join(', ') || 'none'})`);
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`);
    flags.set(name, value);
  }
  return { positional, flags };
}
