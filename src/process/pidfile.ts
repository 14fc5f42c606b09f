// The pid file: the one pid to signal when the server runs under npm (npm forwards SIGTERM and
// SIGINT to its child but dies on SIGHUP without forwarding it).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

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
