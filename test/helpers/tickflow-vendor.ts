// A TickFlow-format vendor on a local HTTP server: raw sim bars (TickFlow's columnar K-line wire
// format, `{data: {timestamp, open, …}}`) and ex-factors for the symbols the sim knows, at the
// clock it is given (in session it sends the forming bar, as the vendor does). Every request is
// recorded; `down` makes it answer `downStatus` (503 by default) with TickFlow's error body.
// Options: `minuteWindowDays` (its 1m K-lines reach back only that many trading days, like
// Eastmoney's five) and `delayMs` (each answer takes that long).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { Region } from '../../src/domain.ts';
import { latestTradingDay, localMidnight, prevTradingDay } from '../../src/markets/calendar.ts';

export interface FakeVendor {
  server: Server;
  base: string;
  requests: URL[];
  down: boolean;
  downStatus: number;
  close(): Promise<void>;
}

export interface FakeVendorOptions {
  minuteWindowDays?: number;
  delayMs?: number;
}

/** The oldest label of the vendor's 1m window at `now`: local midnight of the window's first trading day. */
export function minuteWindowStart(region: Region, now: number, days: number): number {
  let day = latestTradingDay(region, now);
  for (let i = 1; i < days; i++) day = prevTradingDay(region, day);
  return localMidnight(region, day);
}

export async function startTickflowVendor(now: () => number, options: FakeVendorOptions = {}): Promise<FakeVendor> {
  const sim = createSimAdapter({}, { now });
  const vendor: FakeVendor = {
    server: undefined as unknown as Server, base: '', requests: [], down: false, downStatus: 503,
    close: () => new Promise<void>((resolve) => vendor.server.close(() => resolve())),
  };
  vendor.server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://vendor.test');
      vendor.requests.push(url);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (options.delayMs !== undefined) await new Promise((r) => setTimeout(r, options.delayMs));
      if (vendor.down) return send(vendor.downStatus, { code: 'SERVICE_UNAVAILABLE', message: 'maintenance' });
      const notFound = () => send(404, { code: 'SYMBOL_NOT_FOUND', message: 'symbol not found' });
      if (url.pathname === '/v1/klines') {
        const symbol = url.searchParams.get('symbol') ?? '';
        const region = symbol.endsWith('.HK') ? 'HK' : symbol.endsWith('.US') ? 'US' : 'CN';
        const num = (k: string) => (url.searchParams.has(k) ? Number(url.searchParams.get(k)) : undefined);
        const period = url.searchParams.get('period') as '1d' | '1m';
        const windowStart = period === '1m' && options.minuteWindowDays !== undefined ? minuteWindowStart(region, now(), options.minuteWindowDays) : undefined;
        const start = num('start_time');
        const candles = await sim.getCandles({
          symbol: { symbol, region, code: symbol.split('.')[0], exchange: symbol.split('.').at(-1) as never } as never,
          period,
          start: windowStart === undefined ? start : Math.max(start ?? windowStart, windowStart), end: num('end_time'), count: num('count') ?? 100,
        });
        if (candles === undefined) return notFound();
        const { timestamp, open, high, low, close, volume, amount } = candles;
        return send(200, { data: { timestamp, open, high, low, close, volume, amount } });
      }
      if (url.pathname === '/v1/klines/ex-factors') {
        const symbols = (url.searchParams.get('symbols') ?? '').split(',');
        const refs = symbols.map((symbol) => ({ symbol, region: 'CN', code: symbol.split('.')[0], exchange: symbol.split('.').at(-1) }) as never);
        const found = await sim.getExFactors(refs);
        return send(200, { data: Object.fromEntries([...found].map(([s, list]) => [s, list.map((e) => ({ timestamp: e.timestamp, ex_factor: e.ex_factor }))])) });
      }
      return notFound();
    })();
  });
  await new Promise<void>((resolve) => vendor.server.listen(0, '127.0.0.1', resolve));
  vendor.base = `http://127.0.0.1:${(vendor.server.address() as AddressInfo).port}`;
  return vendor;
}

/**
 * A config file's routing and adapter blocks that send every market to the TickFlow adapter at
 * `vendor`; `http` is the adapter's http block's lines (indented by six spaces), `rest` what follows.
 */
export function tickflowConfigYaml(vendor: Pick<FakeVendor, 'base'>, http: string[], rest = ''): string {
  return `routing:
  markets: { CN: [tickflow], HK: [tickflow], US: [tickflow] }
adapters:
  tickflow:
    baseUrl: ${vendor.base}
    apiKey: vendor-secret
    http:
${http.map((line) => `      ${line}`).join('\n')}
${rest}
`;
}
