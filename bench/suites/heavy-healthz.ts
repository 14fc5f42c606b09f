// /healthz and a cached quote while the heaviest requests the demo plan allows run: six batch
// K-line requests at once, each 100 symbols × 4,998 daily bars (499,800 bars: the demo plan's
// max_bars is 500,000), in CSV, Parquet and Arrow, half of them with Accept-Encoding: gzip, every
// request a new set of symbols, its bars fetched once before (as JSON, not measured), so the
// measured answers are built, encoded and compressed anew (no response cache hit). A prober asks /healthz and a
// cached quote every 20 ms each on keep-alive connections from before the burst until the last
// heavy answer is in; p50/p99/max of each are printed with the heavy requests' status, bytes and
// time. The target: p99 under 250 ms for both. The service is started as `npm start` starts it
// (its flags and variables), with the sim's synthetic universe of 5,000 US symbols and the
// history store on (its default). BENCH_BEFORE=<checkout> runs that checkout first in the same run
// (rounds alternate: before, after, after, before, …); BENCH_ROUNDS (default 2) rounds per side.
//   node bench/suites/heavy-healthz.ts
import { Agent, request } from 'node:http';
import { BENCH_KEY, startScriptSettings, startService, type ServiceChild } from '../lib/processes.ts';
import { QUICK, reportHeadlines } from '../lib/report.ts';
import { table } from '../lib/table.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 2));
const SYMBOLS = 100;
const COUNT = 4998;
const HEAVY = [
  { format: 'csv', gzip: true }, { format: 'csv', gzip: false },
  { format: 'parquet', gzip: true }, { format: 'parquet', gzip: false },
  { format: 'arrow', gzip: true }, { format: 'arrow', gzip: false },
] as const;

interface Timed { ms: number; status: number; bytes: number; text: string }

function get(url: string, headers: Record<string, string>, agent?: Agent): Promise<Timed> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent }, (res) => {
      let bytes = 0;
      let text = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (res.statusCode !== 200 && text.length < 2000) text += chunk.toString();
      });
      res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0, bytes, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

/** Probes `path` every 20 ms until `done`; one request at a time, so a stalled loop shows as one long probe. */
async function probe(url: string, headers: Record<string, string>, until: Promise<unknown>): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let finished = false;
  void until.finally(() => (finished = true));
  const times: number[] = [];
  while (!finished) {
    const t = await get(url, headers, agent);
    if (t.status !== 200) throw new Error(`${url}: ${t.status}`);
    times.push(t.ms);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  agent.destroy();
  return times;
}

interface Round { healthz: number[]; quote: number[]; heavy: Array<Timed & { format: string; gzip: boolean }>; wallMs: number }

async function round(service: ServiceChild, offset: number): Promise<Round> {
  const key = { 'x-api-key': BENCH_KEY };
  const quoteUrl = `${service.url}/v1/quotes?symbols=AAPL.US`;
  await get(quoteUrl, key);
  const urlOf = (i: number, format: string) => {
    const first = offset + i * SYMBOLS;
    const symbols = Array.from({ length: SYMBOLS }, (_, k) => `SIM${String(1 + ((first + k) % 5000)).padStart(4, '0')}.US`);
    return `${service.url}/v1/klines/batch?symbols=${symbols.join(',')}&period=1d&adjust=none&count=${COUNT}&format=${format}`;
  };
  // The bars first (one JSON request per set, one at a time, not measured): the simulated vendor
  // generates them on the service's own threads, which a real vendor would not. The measured
  // requests then find them in the data cache or the store and do what an answer costs here:
  // building, encoding, compressing.
  for (let i = 0; i < HEAVY.length; i++) {
    const t = await get(urlOf(i, 'json'), key);
    if (t.status !== 200) throw new Error(`warm-up ${i}: ${t.status} ${t.text}`);
  }
  const started = performance.now();
  const heavy = Promise.all(HEAVY.map(async ({ format, gzip }, i) => {
    const t = await get(urlOf(i, format), { ...key, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) });
    if (t.status !== 200) throw new Error(`${format}${gzip ? '+gzip' : ''}: ${t.status} ${t.text}`);
    return { ...t, format, gzip };
  }));
  const [healthz, quote, answers] = await Promise.all([
    probe(`${service.url}/healthz`, {}, heavy),
    probe(quoteUrl, key, heavy),
    heavy,
  ]);
  return { healthz, quote, heavy: answers, wallMs: performance.now() - started };
}

async function side(label: string, root: string | undefined, offset: number): Promise<Round> {
  const start = startScriptSettings();
  const service = await startService({
    root, nodeArgs: [...start.flags, ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])],
    env: { ...start.env, LOG_LEVEL: 'warn', MDQS__adapters__sim__syntheticUniverse: '5000' },
  });
  try {
    const r = await round(service, offset);
    console.log(`${label}: /healthz p50 ${quantile(r.healthz, 0.5).toFixed(1)} p99 ${quantile(r.healthz, 0.99).toFixed(1)} max ${Math.max(...r.healthz).toFixed(1)} ms (${r.healthz.length} probes); `
      + `quote p99 ${quantile(r.quote, 0.99).toFixed(1)} max ${Math.max(...r.quote).toFixed(1)} ms; heavy ${r.heavy.map((h) => `${h.format}${h.gzip ? '+gz' : ''} ${(h.bytes / 1048576).toFixed(1)} MiB ${(h.ms / 1000).toFixed(1)} s`).join(', ')}`);
    return r;
  } finally {
    await service.stop();
  }
}

const before = process.env.BENCH_BEFORE;
const sides: Array<{ label: string; root: string | undefined }> = before === undefined
  ? [{ label: 'this checkout', root: undefined }]
  : [{ label: 'before', root: before }, { label: 'after', root: undefined }];
const results = new Map<string, Round[]>(sides.map((s) => [s.label, []]));
let offset = 0;
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? sides : [...sides].reverse();
  for (const s of order) {
    results.get(s.label)!.push(await side(s.label, s.root, offset));
    offset += HEAVY.length * SYMBOLS;
  }
}

const rows = [...results].map(([label, rounds]) => {
  const healthz = rounds.flatMap((r) => r.healthz);
  const quote = rounds.flatMap((r) => r.quote);
  return [label, quantile(healthz, 0.5).toFixed(1), quantile(healthz, 0.99).toFixed(1), Math.max(...healthz).toFixed(1),
    quantile(quote, 0.99).toFixed(1), Math.max(...quote).toFixed(1), (rounds.reduce((n, r) => n + r.wallMs, 0) / rounds.length / 1000).toFixed(1)];
});
console.log(table(['side', '/healthz p50 ms', 'p99 ms', 'max ms', 'quote p99 ms', 'max ms', 'six heavy, wall s'], rows));
reportHeadlines([...results].map(([label, rounds]) => ({
  suite: 'heavy-healthz',
  metric: `${label}: /healthz p99 under six heavy requests, ms (target < 250)`,
  value: quantile(rounds.flatMap((r) => r.healthz), 0.99),
})) as never);
