// The pid file: the one pid to signal when the server runs under npm (npm forwards SIGTERM and
// SIGINT to its child but dies on SIGHUP without forwarding it).
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Write our pid, unless the file names another live process (a second instance started from the
 * same checkout): then leave it and return that pid, so signals keep reaching the first one.
 */
export function writePidFile(path: string, pid = process.pid): number | undefined {
  try {
    const other = Number(readFileSync(path, 'utf8').trim());
    if (Number.isInteger(other) && other > 1 && other !== pid && isAlive(other)) return other;
  } catch {
    // no pid file yet
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${pid}\n`);
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Remove the pid file if it still names this process (a newer server may have replaced it). */
export function removePidFile(path: string, pid = process.pid): void {
  try {
    if (readFileSync(path, 'utf8').trim() === String(pid)) rmSync(path);
  } catch {
    // already gone
  }
}

export function readPid(path: string): number {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch {
    throw new Error(`no pid file at ${path}: is the server running (npm start writes it; server.pidFile sets where)?`);
  }
  const pid = Number(text);
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`${path} does not hold a pid: ${JSON.stringify(text)}`);
  return pid;
}

/**
 * What the running server reads, beside its pid file (`data/mdqs.pid` → `data/mdqs.state.json`):
 * the key commands compare their keys file with it, so a key added to a file the server does not
 * read is refused instead of reported as added. The pid file stays one number (`kill -HUP $(cat …)`).
 */
export interface ServerState {
  pid: number;
  /** Absolute path of the keys file the server loads (at boot and on SIGHUP). */
  keysFile: string;
}

export function stateFileFor(pidFile: string): string {
  return `${pidFile.replace(/\.pid$/, '')}.state.json`;
}

export function writeServerState(pidFile: string, keysFile: string, pid = process.pid): void {
  const state: ServerState = { pid, keysFile: resolve(keysFile) };
  writeFileSync(stateFileFor(pidFile), `${JSON.stringify(state)}\n`);
}

/** Remove the state file if it still names this process. */
export function removeServerState(pidFile: string, pid = process.pid): void {
  try {
    const path = stateFileFor(pidFile);
    if ((JSON.parse(readFileSync(path, 'utf8')) as ServerState).pid === pid) rmSync(path);
  } catch {
    // already gone, or not ours
  }
}

/** The state of the server named by the pid file, if that server is alive and wrote one. */
export function readServerState(pidFile: string): ServerState | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 1 || !isAlive(pid)) return undefined;
  try {
    const state = JSON.parse(readFileSync(stateFileFor(pidFile), 'utf8')) as Partial<ServerState>;
    if (state.pid !== pid || typeof state.keysFile !== 'string') return undefined;
    return { pid, keysFile: state.keysFile };
  } catch {
    return undefined;
  }
}

/** Whether two keys-file paths name one file (symlinks and relative paths resolved). */
export function sameFile(a: string, b: string): boolean {
  const real = (path: string) => {
    try {
      return realpathSync(path);
    } catch {
      return resolve(path);
    }
  };
  return real(a) === real(b);
}
