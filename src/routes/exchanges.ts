// GET /v1/exchanges and GET /v1/exchanges/{exchange}/instruments (TickFlow's shapes,
// docs/vendors.md#tickflow-responses). Members come from the adapters' pool lists (the same loader
// and caches as /v1/universes), details from the instruments loader; both need `instruments`.
// The futures exchanges (SHF, DCE, ZCE, CFX, INE, GFE; market CN_FUTURES) list the contracts their
// products' rules have live today (src/markets/futures-contracts.ts) that the adapters know, each
// product's main contract marked by `ext.main_contract`.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Exchange, InstrumentType, Market, PoolId, Region, SymbolRef } from '../domain.ts';
import { emptyStatus, mergeStatus, type DataStatus } from '../data/status.ts';
import { AppError } from '../errors.ts';
import { localDate } from '../markets/calendar.ts';
import { FUTURES, FUTURES_EXCHANGES } from '../markets/futures.ts';
import { liveContracts } from '../markets/futures-contracts.ts';
import { parseSymbol } from '../markets/symbols.ts';
import { refs } from '../schemas.ts';
import { access, keyOf, requireAccess } from './common.ts';
import type { RouteContext } from './context.ts';
import { ERROR_RESPONSES } from './errors-doc.ts';

const EXCHANGES: readonly { exchange: Exchange; region: Region; pools: readonly PoolId[] }[] = [
  { exchange: 'SH', region: 'CN', pools: ['CN_Stock', 'CN_ETF', 'CN_Index'] },
  { exchange: 'SZ', region: 'CN', pools: ['CN_Stock', 'CN_ETF', 'CN_Index'] },
  { exchange: 'BJ', region: 'CN', pools: ['CN_Stock', 'CN_Index'] },
  { exchange: 'HK', region: 'HK', pools: ['HK_Stock', 'HK_Index'] },
  { exchange: 'US', region: 'US', pools: ['US_Stock', 'US_Index'] },
  ...FUTURES_EXCHANGES.map((exchange) => ({ exchange, region: 'CN' as const, pools: [] as PoolId[] })),
];

/** The plan market an exchange's instruments need. */
function marketOfExchange(exchange: Exchange, region: Region): Market {
  return (FUTURES_EXCHANGES as readonly string[]).includes(exchange) ? 'CN_FUTURES' : region;
}

/** Contracts of the exchange's products live on `date` (the rules' list; the adapters say which they know). */
function futuresMembers(exchange: Exchange, date: string): SymbolRef[] {
  const out: SymbolRef[] = [];
  for (const product of FUTURES.products.values()) {
    if (product.exchange !== exchange) continue;
    for (const contract of liveContracts(product, date)) {
      const ref = parseSymbol(`${contract.code}.${exchange}`);
      if (ref !== undefined) out.push(ref);
    }
  }
  return out;
}

const TYPES: readonly InstrumentType[] = ['stock', 'etf', 'index', 'bond', 'fund', 'futures', 'options', 'other'];

const ExchangeSummary = Type.Object({
  exchange: Type.String({ description: 'SH, SZ, BJ, HK, US; futures: SHF, DCE, ZCE, CFX, INE, GFE' }),
  region: Type.String({ description: 'CN, HK, US' }),
  count: Type.Integer({ description: 'Instruments listed on the exchange' }),
});

const ExchangeInstruments = Type.Object({
  exchange: Type.String(),
  count: Type.Integer({ description: 'Length of data' }),
  data: Type.Array(refs.Instrument),
});

export default async function exchangeRoutes(app: FastifyInstance, ctx: RouteContext & { now: () => number }): Promise<void> {
  /** Symbols of the exchange, from its pools; undefined when no adapter lists any of them. */
  const members = async (exchange: Exchange, region: Region, pools: readonly PoolId[], status: DataStatus): Promise<SymbolRef[] | undefined> => {
    if (pools.length === 0) {
      // A futures exchange: the live contracts the adapters know.
      const list = futuresMembers(exchange, localDate('CN', ctx.now()));
      const known = list.length === 0 ? undefined : await ctx.service.instruments(list);
      if (known !== undefined) mergeStatus(status, known.status);
      const out = list.filter((ref) => known?.items.has(ref.symbol));
      return out.length === 0 ? undefined : out;
    }
    const lists = await Promise.all(pools.map((id) => ctx.service.pool(id, region)));
    if (lists.every((l) => l.value === undefined)) return undefined;
    const seen = new Set<string>();
    const out: SymbolRef[] = [];
    for (const list of lists) {
      mergeStatus(status, list.status);
      for (const symbol of list.value?.symbols ?? []) {
        const ref = parseSymbol(symbol);
        if (ref === undefined || ref.exchange !== exchange || seen.has(ref.symbol)) continue;
        seen.add(ref.symbol);
        out.push(ref);
      }
    }
    return out;
  };

  app.get('/v1/exchanges', {
    config: access(() => ({ features: ['instruments'] })),
    schema: {
      operationId: 'getExchanges',
      summary: 'Exchanges and how many instruments each lists',
      description: "Only the exchanges of the key's plan markets are listed. Needs the `instruments` feature.",
      tags: ['reference'],
      response: { 200: Type.Object({ data: Type.Array(ExchangeSummary) }), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    requireAccess(request);
    const markets = keyOf(request).plan.markets;
    const granted = EXCHANGES.filter((e) => markets.has(marketOfExchange(e.exchange, e.region)));
    return ctx.responder.respond(request, reply, { key: `exchanges|${granted.map((e) => e.exchange).join(',')}`, resource: 'pools' }, async () => {
      const status = emptyStatus();
      const counted = await Promise.all(granted.map(async (e) => ({ e, list: await members(e.exchange, e.region, e.pools, status) })));
      const data = counted.flatMap(({ e, list }) => (list === undefined ? [] : [{ exchange: e.exchange, region: e.region, count: list.length }]));
      return { body: { data }, status };
    });
  });

  app.get<{ Params: { exchange: string }; Querystring: { type?: InstrumentType } }>('/v1/exchanges/:exchange/instruments', {
    // An unknown exchange is refused (404) by the handler before access is checked.
    config: access((request) => {
      const spec = EXCHANGES.find((e) => e.exchange === (request.params as { exchange: string }).exchange.toUpperCase());
      return { features: ['instruments'], regions: spec === undefined ? [] : [marketOfExchange(spec.exchange, spec.region)] };
    }),
    schema: {
      operationId: 'getExchangeInstruments',
      summary: 'Every instrument of one exchange',
      description: 'TickFlow shape `{exchange, count, data}`. Exchange codes SH, SZ, BJ, HK, US and the futures exchanges SHF, DCE, ZCE, CFX, INE, GFE (case-insensitive; plan market CN_FUTURES): their contracts live today, each product\'s main contract with `ext.main_contract: true`; unknown: 404 NOT_FOUND. `type` filters by instrument type.',
      tags: ['reference'],
      params: Type.Object({ exchange: Type.String() }),
      querystring: Type.Object({ type: Type.Optional(Type.Union(TYPES.map((t) => Type.Literal(t)))) }),
      response: { 200: ExchangeInstruments, ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const code = request.params.exchange.toUpperCase();
    const spec = EXCHANGES.find((e) => e.exchange === code);
    if (spec === undefined) {
      throw new AppError('NOT_FOUND', `unknown exchange '${code.slice(0, 16)}'; known: ${EXCHANGES.map((e) => e.exchange).join(', ')}`, {
        details: { exchange: code.slice(0, 16) },
      });
    }
    requireAccess(request);
    const type = request.query.type;
    return ctx.responder.respond(request, reply, { key: `exchange-instruments|${code}|${type ?? ''}`, resource: 'instruments' }, async () => {
      const status = emptyStatus();
      const list = await members(spec.exchange, spec.region, spec.pools, status);
      if (list === undefined) {
        throw new AppError('NOT_FOUND', `the configured adapters list no instruments for exchange ${code}`, { details: { exchange: code } });
      }
      const result = list.length === 0 ? undefined : await ctx.service.instruments(list);
      if (result !== undefined) mergeStatus(status, result.status);
      const data = list.flatMap((ref) => {
        const item = result?.items.get(ref.symbol);
        return item === undefined || (type !== undefined && item.type !== type) ? [] : [item];
      });
      return { body: { exchange: code, count: data.length, data }, failed: result?.failed, status };
    });
  });
}
