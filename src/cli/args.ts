// The operator CLI's options, read by node:util parseArgs: `--name value` and `--name=value`, and
// switches (`--json`) that take no value. Every command rejects what it does not know: an unknown
// option, a single-dash option or a stray word is a usage error naming what is allowed.
//
// parseArgs runs non-strict and hands back its tokens, which are checked here: strict mode refuses
// a value that starts with a dash (`--from -5`), which this CLI takes, and its messages are not
// this CLI's (which name what the command takes and its usage line).
import { parseArgs as parseTokens, type ParseArgsOptionsConfig } from 'node:util';

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
  const usage = spec.usage === undefined ? '' : `; usage: ${spec.usage}`;
  const options: ParseArgsOptionsConfig = {};
  for (const name of spec.options) options[name] = { type: 'string' };
  for (const name of switchNames) options[name] = { type: 'boolean' };
  const { tokens } = parseTokens({ args, options, strict: false, allowPositionals: true, tokens: true });
  const flags = new Map<string, string>();
  const switches = new Set<string>();
  const positional: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') {
      positional.push(token.value);
      continue;
    }
    // `--` ends options for parseArgs; this CLI takes no such thing.
    if (token.kind === 'option-terminator') throw new UsageError(`unknown option -- (options: ${allowed(spec)})${usage}`);
    const raw = args[token.index];
    // A single dash (`-v`, `-json`): parseArgs reads short options, of which there are none.
    if (!raw.startsWith('--')) throw new UsageError(`unknown option ${raw} (options: ${allowed(spec)})${usage}`);
    const { name } = token;
    if (switchNames.includes(name)) {
      if (token.inlineValue) throw new UsageError(`--${name} takes no value${usage}`);
      switches.add(name);
      continue;
    }
    if (!spec.options.includes(name)) throw new UsageError(`unknown option ${raw.split('=')[0]} (options: ${allowed(spec)})${usage}`);
    // Not strict, so the next word is the value whatever it is; one that is an option is refused.
    const { value } = token;
    if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value${usage}`);
    flags.set(name, value);
  }
  const room = spec.positional ?? 0;
  if (positional.length > room) {
    throw new UsageError(`unexpected argument ${JSON.stringify(positional[room])} (options: ${allowed(spec)})${usage}`);
  }
  return { positional, flags, switches };
}
