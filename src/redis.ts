// The shared Redis, by concern: redis/connection.ts (topology, clients, subscribers),
// redis/keys.ts (key names, hash tags), redis/health.ts (health tracker, readiness, softly).
// Import from those; this file only re-exports them for the importers not moved yet.
export * from './redis/connection.ts';
export * from './redis/health.ts';
export * from './redis/keys.ts';
