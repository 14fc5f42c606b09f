// The shape of one /readyz check: a leaf, so that what reports its health (Redis, the history
// store, the vendors) does not import the route that serves /readyz.

/**
 * One part of /readyz. The readiness policy (issue 23): `ready: false` only for what is wrong with
 * this instance and not with its peers (its own SQLite store unreadable or unwritable); a fault
 * every instance shares (a vendor, Redis, a shared PostgreSQL store) is `ready: true` with
 * `degraded` set: reported in the body, never a reason for the load balancer to pull everyone.
 */
export interface ReadinessCheck {
  /** Merged into the /readyz body. */
  name: string;
  run(): Promise<{ ready: boolean; detail: unknown; degraded?: { problem: string; since?: number } }>;
}
