// The `cache hits` summary line (config log.hits: summary, the default): the fast path's hits are
// the hot path, which logs nothing at info (hot paths log nothing at info), so each is logged at debug and, at
// info, one line per window says how many there were, by key, route and status. An operator who
// wants every hit at info sets log.hits: lines (src/plugins/fast-path.ts).
import type { FastifyBaseLogger } from 'fastify';

/** Distinct key ids or routes named in one line; the rest are summed under `other`. */
const MAX_NAMED = 100;

export interface HitSummary {
  /** One fast-path hit: its key id, route pattern and status. */
  count(keyId: string, route: string, status: 200 | 304): void;
  /** Writes the line for what was counted since the last one (nothing when there were no hits) and starts a new window. */
  flush(): void;
  /** Stops the timer after writing what is counted. */
  stop(): void;
}

function add(counts: Map<string, number>, name: string): void {
  const held = counts.get(name);
  if (held !== undefined) counts.set(name, held + 1);
  else if (counts.size < MAX_NAMED) counts.set(name, 1);
  else counts.set('other', (counts.get('other') ?? 0) + 1);
}

export function createHitSummary(logger: FastifyBaseLogger, intervalMs: number, now: () => number = Date.now): HitSummary {
  let hits = 0;
  let notModified = 0;
  let byKey = new Map<string, number>();
  let byRoute = new Map<string, number>();
  let since = now();
  const summary: HitSummary = {
    count(keyId, route, status) {
      hits += 1;
      if (status === 304) notModified += 1;
      add(byKey, keyId);
      add(byRoute, route);
    },
    flush() {
      const started = since;
      since = now();
      if (hits === 0) return;
      const line = {
        fast_path: true,
        hits,
        not_modified: notModified,
        window_s: Math.round((since - started) / 100) / 10,
        by_key: Object.fromEntries(byKey),
        by_route: Object.fromEntries(byRoute),
      };
      hits = 0;
      notModified = 0;
      byKey = new Map();
      byRoute = new Map();
      logger.info(line, 'cache hits');
    },
    stop() {
      clearInterval(timer);
      summary.flush();
    },
  };
  const timer = setInterval(() => summary.flush(), intervalMs);
  timer.unref();
  return summary;
}
