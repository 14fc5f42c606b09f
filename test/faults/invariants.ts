// The invariants (docs/contract.md#shapes-and-units) of what the service serves: a list of the problems found (empty: fine).
// Used on every 200 of the fault matrix, so an invalid vendor row can never pass unnoticed.

type Json = Record<string, unknown>;

const positive = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v > 0;
const nonNegative = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;

export function quoteProblems(q: Json): string[] {
  const problems: string[] = [];
  for (const f of ['last_price', 'open', 'high', 'low', 'prev_close']) if (!positive(q[f])) problems.push(`${String(q.symbol)}.${f}=${String(q[f])}`);
  if (!nonNegative(q.volume) || !Number.isInteger(q.volume)) problems.push(`${String(q.symbol)}.volume=${String(q.volume)}`);
  if (!nonNegative(q.amount)) problems.push(`${String(q.symbol)}.amount=${String(q.amount)}`);
  if (!Number.isInteger(q.timestamp)) problems.push(`${String(q.symbol)}.timestamp=${String(q.timestamp)}`);
  if (positive(q.low) && positive(q.high) && (q.low as number) > (q.high as number)) problems.push(`${String(q.symbol)} low > high`);
  return problems;
}

export function candleProblems(c: Json): string[] {
  const problems: string[] = [];
  const names = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount'];
  const cols = names.map((n) => c[n]);
  if (!cols.every(Array.isArray)) return [`missing columns: ${names.filter((n) => !Array.isArray(c[n])).join(',')}`];
  const [t, o, h, l, cl, v, a] = cols as number[][];
  const lengths = new Set(cols.map((x) => (x as unknown[]).length));
  if (Array.isArray(c.prev_close)) lengths.add((c.prev_close as unknown[]).length);
  if (lengths.size !== 1) return [`unequal column lengths ${[...lengths].join('/')}`];
  for (let i = 0; i < t.length; i++) {
    if (!Number.isInteger(t[i])) problems.push(`timestamp[${i}]=${t[i]}`);
    if (i > 0 && !(t[i] > t[i - 1])) problems.push(`timestamp[${i}] not after [${i - 1}]`);
    for (const [n, col] of [['open', o], ['high', h], ['low', l], ['close', cl]] as const) if (!positive(col[i])) problems.push(`${n}[${i}]=${col[i]}`);
    if (Array.isArray(c.prev_close) && !positive((c.prev_close as number[])[i])) problems.push(`prev_close[${i}]=${(c.prev_close as number[])[i]}`);
    if (!nonNegative(v[i]) || !Number.isInteger(v[i])) problems.push(`volume[${i}]=${v[i]}`);
    if (!nonNegative(a[i])) problems.push(`amount[${i}]=${a[i]}`);
    if (positive(l[i]) && positive(h[i]) && !(l[i] <= o[i] && l[i] <= cl[i] && o[i] <= h[i] && cl[i] <= h[i])) problems.push(`row ${i} outside low..high`);
  }
  return problems;
}

export function depthProblems(d: Json): string[] {
  const cols = ['bid_prices', 'bid_volumes', 'ask_prices', 'ask_volumes'].map((n) => d[n]);
  if (!cols.every(Array.isArray)) return ['missing depth columns'];
  const [bp, bv, ap, av] = cols as number[][];
  if (bp.length !== bv.length || ap.length !== av.length) return ['unequal depth columns'];
  const problems: string[] = [];
  for (const [name, prices, descending] of [['bid', bp, true], ['ask', ap, false]] as const) {
    prices.forEach((p, i) => {
      if (!positive(p)) problems.push(`${name}_prices[${i}]=${p}`);
      if (i > 0 && (descending ? !(p < prices[i - 1]) : !(p > prices[i - 1]))) problems.push(`${name}_prices[${i}] out of order`);
    });
  }
  for (const v of [...bv, ...av]) if (!nonNegative(v) || !Number.isInteger(v)) problems.push(`volume ${v}`);
  return problems;
}

/** Problems of a 200 body of /v1/quotes, /v1/klines[/intraday] or /v1/depth (by shape). */
export function servedProblems(body: unknown): string[] {
  const data = (body as { data?: unknown })?.data;
  if (Array.isArray(data)) return data.flatMap((q) => quoteProblems(q as Json));
  if (data !== null && typeof data === 'object' && 'bid_prices' in data) return depthProblems(data as Json);
  if (data !== null && typeof data === 'object') return candleProblems(data as Json);
  return ['no data'];
}
