// Capture one real response of the service (status, headers in wire order and case, body) so the
// bare baseline can send the identical bytes.
import { request } from 'node:http';

export interface CapturedResponse {
  status: number;
  /** [name, value] pairs as received, minus the ones node:http adds by itself. */
  headers: Array<[string, string]>;
  body: Buffer;
}

// node:http writes these on its own in both servers; copying them would send them twice.
const ADDED_BY_NODE = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

export function get(url: string, headers: Record<string, string>): Promise<CapturedResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (!ADDED_BY_NODE.has(res.rawHeaders[i].toLowerCase())) pairs.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
        }
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

export function header(response: CapturedResponse, name: string): string | undefined {
  return response.headers.find(([key]) => key.toLowerCase() === name)?.[1];
}

/** Warm the caches with one request, then capture a second one that must be a 200 cache hit. */
export async function captureHit(url: string, headers: Record<string, string>): Promise<CapturedResponse> {
  await get(url, headers);
  const hit = await get(url, headers);
  if (hit.status !== 200 || header(hit, 'x-cache') !== 'HIT') {
    throw new Error(`expected a 200 cache hit from ${url}, got ${hit.status} x-cache=${header(hit, 'x-cache')}: ${hit.body.toString().slice(0, 300)}`);
  }
  return hit;
}
