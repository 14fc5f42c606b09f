// Read counters and gauges from the service's own /metrics (Prometheus text), to report what the
// service did during a run (cache hits vs misses, cache bytes) without touching its code.

export type Samples = Map<string, number>;

export async function scrape(baseUrl: string): Promise<Samples> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const out: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return out;
}

export function sample(samples: Samples, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels);
  let total = 0;
  for (const [key, value] of samples) {
    if (!key.startsWith(`${name}{`) && key !== name) continue;
    if (wanted.every(([label, v]) => key.includes(`${label}="${v}"`))) total += value;
  }
  return total;
}

/** Response-cache hit share of `resource` lookups between two scrapes. */
export function responseHitShare(before: Samples, after: Samples, resource: string): { hits: number; misses: number } {
  const count = (samples: Samples, result: string) =>
    sample(samples, 'mdqs_cache_lookups_total', { layer: 'response', resource, result });
  return {
    hits: count(after, 'hit') - count(before, 'hit'),
    misses: count(after, 'miss') - count(before, 'miss'),
  };
}
