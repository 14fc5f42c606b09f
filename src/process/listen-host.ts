// Which address to bind: an explicit host wins; `auto` is loopback while a demo key is enabled (the
// demo key is public, so a fresh checkout must not be reachable from the network), else all.
export function listenHost(configured: string, demoKeyIds: readonly string[]): { host: string; reason?: string } {
  if (configured !== 'auto') return { host: configured };
  if (demoKeyIds.length > 0) {
    return { host: '127.0.0.1', reason: `server.host is auto and the demo key (${demoKeyIds.join(', ')}) is enabled: loopback only; remove the demo key or set HOST to listen on the network` };
  }
  return { host: '0.0.0.0', reason: 'server.host is auto and no demo key is enabled: all interfaces' };
}
