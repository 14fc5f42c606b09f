// server.trustProxy: which peers are proxies whose X-Forwarded-For the service believes. The client
// address (request.ip: the free tier's bucket, the failed-key budget, anonymous stream caps,
// /metrics for loopback) is the first address, counting from the right of X-Forwarded-For (the
// socket's peer first), that is not a trusted proxy: Fastify's trustProxy with @fastify/proxy-addr.
//   - false / 0: no proxy; the socket's peer.
//   - the proxies' addresses or CIDRs (a list or one comma-separated string; proxy-addr's names
//     loopback, linklocal and uniquelocal too): safe behind any proxy that appends, as most do.
//   - a number of hops: the nearest n peers are proxies, whatever their address; safe only where
//     nothing but the proxies can reach the service's port.
//   - true: every peer is a proxy, so the client is the leftmost address the client itself may
//     have written; safe only behind a proxy that overwrites the header (deploy/nginx.conf).
import { isIP, isIPv4 } from 'node:net';

export type TrustProxySetting = boolean | number | string | string[];

/** What Fastify's trustProxy option takes (a subset). */
export type FastifyTrustProxy = boolean | string | string[] | ((address: string, hop: number) => boolean);

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** The entries of an address setting: a list, or one comma-separated string. */
export function trustedProxyEntries(setting: string | readonly string[]): string[] {
  return (typeof setting === 'string' ? setting.split(',') : [...setting]).map((entry) => entry.trim());
}

/** A dotted IPv4 netmask's prefix length, or undefined when its ones are not contiguous. */
function netmaskPrefix(mask: string): number | undefined {
  const bits = mask.split('.').map((octet) => Number(octet).toString(2).padStart(8, '0')).join('');
  return /^1+0*$/.test(bits) ? bits.indexOf('0') === -1 ? 32 : bits.indexOf('0') : undefined;
}

/**
 * Why an entry is not something proxy-addr compiles (an address, address/prefix, IPv4
 * address/netmask, or a named range); undefined when it is one. Checked at load so a typo stops
 * the boot with the others instead of throwing from Fastify.
 */
export function proxyEntryProblem(entry: string): string | undefined {
  if (NAMED_RANGES.has(entry)) return undefined;
  const slash = entry.lastIndexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return `${JSON.stringify(entry)} is not an IP address, a CIDR (10.0.0.0/8) or one of ${[...NAMED_RANGES].join(', ')}`;
  if (slash === -1) return undefined;
  const range = entry.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  const prefix = /^\d+$/.test(range) ? Number(range) : family === 4 && isIPv4(range) ? netmaskPrefix(range) : undefined;
  if (prefix === undefined || prefix < 1 || prefix > max) return `${JSON.stringify(entry)}: the prefix length must be from 1 to ${max}`;
  return undefined;
}

/**
 * Fastify's trustProxy for the setting. Addresses pass through as given. A hop count becomes a
 * trust function: the installed Fastify takes a number but trusts no proxy with it (a hop count
 * cannot tell a proxy from a client that connects directly), which behind a proxy would make the
 * proxy every client's address: all clients in one free-tier bucket, and a proxy on loopback
 * opening /metrics to everyone.
 */
export function fastifyTrustProxy(setting: TrustProxySetting): FastifyTrustProxy {
  if (typeof setting !== 'number') return setting;
  if (setting <= 0) return false;
  return (_address, hop) => hop < setting;
}
