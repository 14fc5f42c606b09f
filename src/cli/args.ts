// Minimal flag parsing for the operator CLI: `--name value` and `--name=value`, and switches
// (`--json`) that take no value. Every command rejects what it does not know: an unknown option, a
// single-dash option or a stray word is a usage error naming what is allowed.
export interface Parsed {
  positional: string[];
  flags: Map<string, string>;
  /** Switches given (`--json`). */
  switches: Set<string>;
}

export class UsageError extends Error {}

export interface ArgSpec {
  /** Options that take a value. */
  options: readonly string[];
  /** Options that take none. */
  switches?: readonly string[];
  /** How many bare words the command takes (default 0: none). */
  positional?: number;
  /** The command's usage line, added to the message of a usage error. */
  usage?: string;
}

function allowed(spec: ArgSpec): string {
  const names = [...spec.options, ...(spec.switches ?? [])].map((k) => `--${k}`);
  return names.join(', ') || 'none';
}

/** Parse `args` against the options a command knows (a list of value options, or a full spec). */
export function parseArgs(args: string[], known: readonly string[] | ArgSpec): Parsed {
  const spec: ArgSpec = Array.isArray(known) ? { options: known as readonly string[] } : known as ArgSpec;
  const switchNames = spec.switches ?? [];
  const flags = new Map<string, string>();
  const switches = new Set<string>();
  const positional: string[] = [];
  const usage = spec.usage === undefined ? '' : `; usage: ${spec.usage}`;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    if (!arg.startsWith('--')) throw new UsageError(`unknown option ${arg} (options: ${allowed(spec)})${usage}`);
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (switchNames.includes(name)) {
      if (eq > 0) throw new UsageError(`--${name} takes no value${usage}`);
      switches.add(name);
      continue;
    }
    if (!spec.options.includes(name)) throw new UsageError(`unknown option --${name} (options: ${allowed(spec)})${usage}`);
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value${usage}`);
    flags.set(name, value);
  }
  const room = spec.positional ?? 0;
  if (positional.length > room) {
    throw new UsageError(`unexpected argument ${JSON.stringify(positional[room])} (options: ${allowed(spec)})${usage}`);
  }
  return { positional, flags, switches };
}
