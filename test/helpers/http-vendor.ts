// A minimal HTTP vendor adapter ('stand-in': CN quotes only) on the real upstream HTTP layer
// (createUpstreamHttp: deadline, one retry, 429 handling, breaker, budget), so route tests can put
// msw behind the whole stack. Vendor body: {"quotes":[{"code","name","price","open","high","low",
// "prev_close","volume","amount","time"}]}; unknown codes are simply absent.
import type { Adapter, AdapterCapabilities } from '../../adapters/types.ts';
import type { Quote } from '../../src/domain.ts';
import { AppError } from '../../src/errors.ts';
import { createUpstreamHttp, type UpstreamClient, type UpstreamHttpOptions } from '../../src/upstream/http.ts';

export const STAND_IN_URL = 'https://vendor.test/quotes';

export const STAND_IN_CAPABILITIES: AdapterCapabilities = {
  resources: { quotes: true, depth: false, candles: false, intraday: false, exFactors: false, instruments: false, pools: false },
  markets: ['CN'],
  periods: { '1m': false, '1d': false },
  maxBatch: 50,
  rawPrices: false,
  amount: true,
};

export interface StandInVendor {
  adapter: Adapter;
  client: UpstreamClient;
}

interface VendorQuote {
  code: string;
  name: string;
  price: number;
  open: number;
  high: number;
  low: number;
  prev_close: number;
  volume: number;
  amount: number;
  time: number;
}

const NUMBER_FIELDS = ['price', 'open', 'high', 'low', 'prev_close', 'volume', 'amount', 'time'] as const;

function badResponse(why: string): AppError {
  return new AppError('UPSTREAM_BAD_RESPONSE', 'The upstream data source sent an unreadable response', { details: { adapter: 'stand-in', why } });
}

function parseQuotes(body: unknown): VendorQuote[] {
  const quotes = (body as { quotes?: unknown } | null)?.quotes;
  if (!Array.isArray(quotes)) throw badResponse('no quotes array');
  for (const q of quotes as Record<string, unknown>[]) {
    if (typeof q?.code !== 'string' || typeof q.name !== 'string') throw badResponse('quote without code/name');
    for (const field of NUMBER_FIELDS) if (!Number.isFinite(q[field])) throw badResponse(`quote ${field} is not a number`);
  }
  return quotes as VendorQuote[];
}

function toQuote(q: VendorQuote): Quote {
  const change = q.price - q.prev_close;
  return {
    symbol: q.code,
    region: 'CN',
    last_price: q.price,
    open: q.open,
    high: q.high,
    low: q.low,
    prev_close: q.prev_close,
    volume: q.volume,
    amount: q.amount,
    timestamp: q.time,
    ext: {
      type: 'cn_equity',
      name: q.name,
      amplitude: q.prev_close > 0 ? ((q.high - q.low) / q.prev_close) * 100 : 0,
      change_amount: change,
      change_pct: q.prev_close > 0 ? (change / q.prev_close) * 100 : 0,
      turnover_rate: null,
    },
  };
}

export function createStandInVendor(overrides: Partial<UpstreamHttpOptions> = {}): StandInVendor {
  const client = createUpstreamHttp({
    adapterId: 'stand-in',
    timeoutMs: 300,
    connections: 4,
    retry: { maxRetries: 1, baseDelayMs: 5 },
    budget: { max: 1_000, windowMs: 60_000 },
    random: () => 0.5,
    ...overrides,
  });
  const unsupported = (): never => {
    throw new AppError('UPSTREAM_ERROR', 'stand-in serves quotes only');
  };
  const adapter: Adapter = {
    id: 'stand-in',
    label: 'stand-in',
    capabilities: STAND_IN_CAPABILITIES,
    async getQuotes(symbols, ctx) {
      const url = `${STAND_IN_URL}?symbols=${encodeURIComponent(symbols.map((s) => s.symbol).join(','))}`;
      const { body } = await json(client, { url, resource: 'quotes', signal: ctx?.signal });
      const out = new Map<string, Quote>();
      for (const q of parseQuotes(body)) out.set(q.code, toQuote(q));
      return out;
    },
    getDepth: async () => unsupported(),
    getCandles: async () => unsupported(),
    getIntraday: async () => unsupported(),
    getExFactors: async () => unsupported(),
    getInstruments: async () => unsupported(),
    listPool: async () => unsupported(),
    close: () => client.close(),
  };
  return { adapter, client };
}

/** A vendor quote row for msw handlers. */
export function vendorQuote(code: string, price: number, time: number): VendorQuote {
  return { code, name: `name of ${code}`, price, open: price - 1, high: price + 2, low: price - 2, prev_close: price - 0.5, volume: 12_300, amount: 12_300 * price, time };
}

/** The response body parsed as JSON (the adapters' parse.ts does this in the service). */
export async function json(c: { request: UpstreamClient['request'] }, req: Parameters<UpstreamClient['request']>[0]): Promise<{ status: number; headers: Headers; body: unknown }> {
  const res = await c.request(req);
  if (res.text === '') return { status: res.status, headers: res.headers, body: undefined };
  try {
    return { status: res.status, headers: res.headers, body: JSON.parse(res.text) };
  } catch (cause) {
    throw new AppError('UPSTREAM_BAD_RESPONSE', 'The upstream data source sent an unreadable response', { cause });
  }
}
