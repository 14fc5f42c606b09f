// Key administration commands. Only the key goes to stdout (KEY=$(npm run -s cli -- create-key …)
// works); every message goes to stderr. The repository's own config/keys.yaml is never modified
// unless named with --keys-file: operators keep their keys file outside the checkout.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { createKey, listKeys, parseDuration, parseExpires, revokeKey, rotateKey } from '../access/create-key.ts';
import { parseArgs, UsageError } from './args.ts';
import { readServerState, sameFile } from '../process/pidfile.ts';

const REPO_KEYS_FILE = fileURLToPath(new URL('../../config/keys.yaml', import.meta.url));

type Env = Record<string, string | undefined>;

export interface Io {
  out(text: string): void;
  err(text: string): void;
  now(): number;
}

/** The keys file a command works on, and whether the operator named it explicitly. */
export function keysFileFor(flag: string | undefined, env: Env): { path: string; explicit: boolean } {
  if (flag !== undefined) return { path: flag, explicit: true };
  return { path: env.KEYS_FILE || loadConfig(env).config.keys.file, explicit: false };
}

function writableKeysFile(flag: string | undefined, env: Env): string {
  const { path, explicit } = keysFileFor(flag, env);
  if (!explicit && resolve(path) === REPO_KEYS_FILE) {
    throw new UsageError(
      `refusing to modify the repository's example keys file ${path} (a git pull would fight your keys). `
      + `Copy it outside the repository (cp config/keys.yaml /etc/mdqs/keys.yaml), point KEYS_FILE or keys.file at the copy, `
      + `or pass --keys-file ${path} to modify it anyway.`,
    );
  }
  return path;
}

/**
 * Refuse to act on a keys file the running server does not read (its pid file's state file names
 * the one it does): the key would be added, and then answered 401. No running server, or one that
 * wrote no state, refuses nothing.
 */
export function refuseOtherKeysFile(file: string, env: Env, pidFileFlag?: string): void {
  let pidFile = pidFileFlag;
  if (pidFile === undefined) {
    try {
      pidFile = loadConfig(env).config.server.pidFile;
    } catch {
      return; // a config that does not load names no server; check-config reports it
    }
  }
  if (!pidFile) return;
  const state = readServerState(pidFile);
  if (state === undefined || sameFile(state.keysFile, file)) return;
  throw new Error(
    `refusing: the running server (pid ${state.pid}, ${pidFile}) reads the keys file ${state.keysFile}, not ${resolve(file)}; `
    + `a key changed here would not be accepted. Use KEYS_FILE=${state.keysFile} (or --keys-file), `
    + `or restart the server with KEYS_FILE=${resolve(file)}.`,
  );
}

function reloadHint(): string {
  return 'Running servers load it on SIGHUP (kill -HUP $(cat data/mdqs.pid), or npm run cli -- reload).';
}

function required(flags: Map<string, string>, name: string, usage: string): string {
  const value = flags.get(name);
  if (value === undefined || value === '') throw new UsageError(`--${name} is required; usage: ${usage}`);
  return value;
}

export const KEY_USAGE = [
  'create-key --id <label> --plan <plan> [--expires 30d|2027-01-31] [--keys-file <path>]',
  'rotate-key --id <label> [--grace 24h] [--keys-file <path>]',
  'revoke-key --id <label> [--keys-file <path>]',
  'keys list [--keys-file <path>]',
  'keys create|rotate|revoke …   (the same as create-key, rotate-key, revoke-key)',
];

export function cmdCreateKey(args: string[], env: Env, io: Io): number {
  const { flags } = parseArgs(args, ['id', 'plan', 'expires', 'keys-file']);
  const id = required(flags, 'id', KEY_USAGE[0]);
  const plan = required(flags, 'plan', KEY_USAGE[0]);
  const expiresFlag = flags.get('expires');
  const expires = expiresFlag === undefined ? undefined : parseExpires(expiresFlag, io.now());
  const file = writableKeysFile(flags.get('keys-file'), env);
  refuseOtherKeysFile(file, env);
  const key = createKey(file, id, plan, { expires, now: io.now() });
  io.out(`${key}\n`);
  io.err(`key '${id}' (plan ${plan}${expires ? `, expires ${expires}` : ''}) added to ${file}; only its SHA-256 hash is stored. `
    + `This is the only time the key is shown. ${reloadHint()}\n`);
  return 0;
}

export function cmdRotateKey(args: string[], env: Env, io: Io): number {
  const { flags } = parseArgs(args, ['id', 'grace', 'keys-file']);
  const id = required(flags, 'id', KEY_USAGE[1]);
  const graceMs = parseDuration(flags.get('grace') ?? '24h');
  const file = writableKeysFile(flags.get('keys-file'), env);
  refuseOtherKeysFile(file, env);
  const result = rotateKey(file, id, graceMs, io.now());
  io.out(`${result.key}\n`);
  io.err(`new key for '${id}' in ${file}; the old key is now '${result.oldId}' and works until ${result.oldExpires}`
    + `${result.replaced ? ` (the previous rotation's old key was removed)` : ''}. ${reloadHint()}\n`);
  return 0;
}

export async function cmdRevokeKey(args: string[], env: Env, io: Io): Promise<number> {
  const { flags } = parseArgs(args, ['id', 'keys-file']);
  const id = required(flags, 'id', KEY_USAGE[2]);
  const file = writableKeysFile(flags.get('keys-file'), env);
  refuseOtherKeysFile(file, env);
  revokeKey(file, id);
  io.err(`key '${id}' removed from ${file}. ${reloadHint()}\n`);
  // Any topology (redis.url, redis.cluster, redis.sentinel): a PUBLISH reaches every node's subscribers.
  const redisTarget = env.REDIS_URL || (() => {
    try {
      const { redis } = loadConfig(env).config;
      return redis.url || (redis.cluster !== undefined || redis.sentinel !== undefined ? redis : '');
    } catch {
      return '';
    }
  })();
  if (redisTarget) await publishReload(redisTarget, io);
  return 0;
}

/** Tell every instance sharing Redis to reload its keys (src/access/revocation.ts, when present). */
async function publishReload(url: string | Config['redis'], io: Io): Promise<void> {
  let publish: ((redis: unknown) => Promise<unknown>) | undefined;
  try {
    const specifier = '../access/revocation.ts';
    ({ publishKeyReload: publish } = (await import(specifier)) as { publishKeyReload?: (redis: unknown) => Promise<unknown> });
  } catch {
    publish = undefined;
  }
  if (publish === undefined) {
    io.err('this build cannot announce the revocation over Redis; send SIGHUP to every instance.\n');
    return;
  }
  const { createRedisClient } = await import('../redis/connection.ts');
  const redis = createRedisClient(url);
  try {
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error('Redis did not answer within 2 s')), 2000);
      redis.once('ready', () => { clearTimeout(timer); ready(); });
    });
    await publish(redis);
    io.err('instances sharing Redis were told to reload their keys.\n');
  } catch (error) {
    io.err(`could not announce the revocation over Redis (${(error as Error).message}); send SIGHUP to every instance.\n`);
  } finally {
    redis.disconnect();
  }
}

/** A keys-file date (2027-01-31, or a date-time with a zone) as one format: 2027-01-31T00:00:00Z (UTC). */
function utcSeconds(text: string): string {
  if (text === '-') return text;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') : text;
}

/** `keys create|rotate|revoke|list`: the key commands grouped under one word (the dashed names stay). */
export async function cmdKeys(args: string[], env: Env, io: Io): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create': return cmdCreateKey(rest, env, io);
    case 'rotate': return cmdRotateKey(rest, env, io);
    case 'revoke': return cmdRevokeKey(rest, env, io);
    case 'list': return cmdListKeys(rest, env, io);
    default: throw new UsageError(`keys: unknown subcommand ${sub ?? '(none)'}; usage:\n  ${KEY_USAGE.join('\n  ')}`);
  }
}

function cmdListKeys(args: string[], env: Env, io: Io): number {
  const { flags } = parseArgs(args, { options: ['keys-file'], usage: KEY_USAGE[3] });
  const { path } = keysFileFor(flags.get('keys-file'), env);
  const rows = listKeys(path, io.now());
  const header = ['ID', 'PLAN', 'CREATED', 'EXPIRES', 'SHA256', 'NOTE'];
  // Dates in one format whatever the file says (create-key writes date-times, --expires may be a date).
  const table = rows.map((r) => [r.id, r.plan, utcSeconds(r.created), utcSeconds(r.expires), `${r.hashPrefix}…`, [r.demo ? 'demo' : '', r.expired ? 'expired' : ''].filter(Boolean).join(',')]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  for (const row of [header, ...table]) io.out(`${row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()}\n`);
  io.err(`${rows.length} key${rows.length === 1 ? '' : 's'} in ${path}\n`);
  return 0;
}
