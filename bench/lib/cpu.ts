// How much of the machine other processes used during a round. The bench shares 2 cores between
// the server and the load generator; anything else running (tests, builds) skews a round, so
// each round reports the foreign CPU share and noisy pairs can be repeated.
import { readFileSync } from 'node:fs';

interface Snapshot {
  /** Machine-wide busy jiffies (user, nice, system, steal) and all jiffies. */
  busy: number;
  total: number;
  /** Jiffies of the processes that belong to the benchmark. */
  ours: number;
  /** Jiffies of this process (autocannon) and of each pid given. */
  self: number;
  each: number[];
  at: number;
}

// USER_HZ: /proc reports times in 1/100 s on Linux.
const TICKS_PER_SECOND = 100;

function machine(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields;
  // irq/softirq are left out of "busy": loopback traffic of the bench itself lands there.
  return { busy: user + nice + system + steal, total: user + nice + system + idle + iowait + irq + softirq + steal };
}

function processJiffies(pid: number | 'self'): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the file; index 11 and 12 after the command name.
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

export function snapshot(pids: number[]): Snapshot {
  const { busy, total } = machine();
  const self = processJiffies('self');
  const each = pids.map((pid) => processJiffies(pid));
  return { busy, total, ours: self + each.reduce((a, b) => a + b, 0), self, each, at: performance.now() };
}

/** Cores used (1 = one core busy all the time) by this process and by each pid, between snapshots. */
export function coresUsed(before: Snapshot, after: Snapshot): { self: number; each: number[] } {
  const seconds = (after.at - before.at) / 1000;
  const cores = (jiffies: number) => (seconds > 0 ? jiffies / TICKS_PER_SECOND / seconds : 0);
  return { self: cores(after.self - before.self), each: after.each.map((j, i) => cores(j - before.each[i])) };
}

/** Share of the whole machine (all cores) used by processes outside the benchmark, 0..1. */
export function foreignShare(before: Snapshot, after: Snapshot): number {
  const total = after.total - before.total;
  if (total <= 0) return 0;
  return Math.max(0, (after.busy - before.busy - (after.ours - before.ours)) / total);
}
