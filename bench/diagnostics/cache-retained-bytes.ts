// What the data cache (memory tier) really retains for the bytes it accounts, in-process: the
// tier is filled past its bound with candle entries the sim adapter produced for random symbols,
// base periods and bucketed counts (as the soak's klines make them), plus quote entries; then the
// retained heap + external after two full GCs is compared with the tier's own accounting. The sim's
// memos are present in both readings (filled tier, then the tier dropped), so they cancel.
//
//   node bench/diagnostics/cache-retained-bytes.ts                         this checkout
//   SOAK_ROOT=/tmp/mdqs-mem-before node bench/diagnostics/cache-retained-bytes.ts   another checkout
// Knobs: CACHE_MIB (16), ENTRIES (600).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const root = process.env.SOAK_ROOT || join(import.meta.dirname, '..', '..');
const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(root, path)).href)) as T;

type Tier = { set(key: string, value: unknown, o: Record<string, number>): Promise<void>; peek(key: string): unknown; readonly bytes: number };
const { createMemoryTier } = await load<{ createMemoryTier(o: { maxBytes: number; now: () => number }): Tier }>('src/cache/memory-tier.ts');
const { createSimAdapter } = await load<{ createSimAdapter(o: object, d: object): { getCandles(q: object): Promise<unknown>; getQuotes(r: unknown[]): Promise<Map<string, unknown>> } }>('adapters/sim/index.ts');
const { parseSymbol } = await load<{ parseSymbol(s: string): unknown }>('src/markets/symbols.ts');
const { createResources, bucketCount, policyFromConfig } = await load<{ createResources(p: unknown): Record<string, { size(v: unknown): number }>; bucketCount(n: number): number; policyFromConfig(c: unknown): unknown }>('src/data/resources/index.ts');
const { loadConfig } = await load<{ loadConfig(env: object): { config: { cache: unknown } } }>('config/load.ts');

const MIB = 1048576;
const maxBytes = Number(process.env.CACHE_MIB ?? 16) * MIB;
const entries = Number(process.env.ENTRIES ?? 600);
const resources = createResources(policyFromConfig(loadConfig({}).config.cache));
const sim = createSimAdapter({ syntheticUniverse: 5000 }, { now: Date.now });
const ref = (n: number) => parseSymbol(`SIM${String(n).padStart(4, '0')}.US`);
// Backing stores of dead ArrayBuffers are freed on a background thread after the GC: wait for it.
const retained = async () => {
  gc();
  gc();
  await new Promise((resolve) => setTimeout(resolve, 250));
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};

let tier: Tier | undefined = createMemoryTier({ maxBytes, now: Date.now });
const window = { ttlMs: 86_400_000, swrMs: 0, sieMs: 0 };
let candleEntries = 0;
let bars = 0;
for (let i = 0; i < entries; i++) {
  const symbol = ref(1 + Math.floor(Math.random() * 5000));
  if (i % 3 === 0) {
    const quotes = await sim.getQuotes([symbol]);
    for (const [key, value] of quotes) await tier.set(`quotes|sim|${key}`, { value, adapter: 'sim', freshUntil: Date.now() }, { ...window, size: resources.quotes.size(value) + 64 });
    continue;
  }
  const minute = Math.random() < 0.4;
  const count = bucketCount(minute ? (1 + Math.floor(Math.random() * 1000)) * [1, 5, 15][i % 3] : 1 + Math.floor(Math.random() * 1000));
  const value = (await sim.getCandles({ symbol, period: minute ? '1m' : '1d', count })) as { timestamp: number[] } | undefined;
  if (value === undefined) continue;
  candleEntries += 1;
  bars += value.timestamp.length;
  await tier.set(`candles|sim|${i}`, { value, adapter: 'sim', freshUntil: Date.now() }, { ...window, size: resources.candles.size(value) + 64 });
}
const accounted = tier.bytes;
const filled = await retained();
tier = undefined;
const empty = await retained();
const held = filled - empty;
const line = (k: string, v: string) => process.stdout.write(`| ${k} | ${v} |\n`);
line('checkout', root);
line('entries set (candles, mean bars)', `${entries} (${candleEntries}, ${(bars / Math.max(1, candleEntries)).toFixed(0)})`);
line('tier accounts', `${(accounted / MIB).toFixed(2)} MiB of ${(maxBytes / MIB).toFixed(0)} MiB`);
line('tier retains (heap + external after GC)', `${(held / MIB).toFixed(2)} MiB`);
line('retained ÷ accounted', (held / accounted).toFixed(3));
