// Key names of the shared Redis: `mdqs:<KEY_FORMAT>:<space>:{<id>}`.
//
//   redisKey(prefix, id): string       a versioned, hash-tagged key name
//   versionedName(name): string        a name under 'mdqs:' with the format version (channels)
//
// The format version lets instances of two releases share one Redis during a rolling upgrade (a
// release that changes what a key holds bumps KEY_FORMAT, and the two never read each other's
// values); the hash tag `{id}` puts every key of one id in one Cluster slot, so a script over
// several keys of one id never gets CROSSSLOT.

/** The key format version (see above): bump it when what a key holds changes. */
export const KEY_FORMAT = 'v2';

/**
 * The key of `id` in a key space: `prefix` names the space ('mdqs:rl:', 'mdqs:fill:lock:'); a
 * prefix under 'mdqs:' gets the format version after it. The id is the hash tag, so every key
 * built from one id lands in one Cluster slot: `redisKey('mdqs:rl:', 'key:k1')` is
 * 'mdqs:v2:rl:{key:k1}'.
 */
export function redisKey(prefix: string, id: string): string {
  return `${versionedName(prefix)}{${id}}`;
}

/** A name under 'mdqs:' with the format version after it (keys: redisKey; channels as they are). */
export function versionedName(name: string): string {
  return name.startsWith('mdqs:') && !name.startsWith(`mdqs:${KEY_FORMAT}:`) ? `mdqs:${KEY_FORMAT}:${name.slice('mdqs:'.length)}` : name;
}

