// TypeBox schemas of the public contract (docs/contract.md): request parameters (validated by Fastify's
// AJV, errors mapped to reasons in src/http/validation.ts) and response shapes (documentation for
// /v1/openapi.json; bodies are sent pre-serialised, so they are never re-validated on the way out).
import { Type, type TSchema } from 'typebox';
import { ADJUST_TYPES, MINUTE_PERIODS, PERIODS } from './domain.ts';
import { FORMATS } from './http/formats/negotiate.ts';
import { MAX_BASE_BARS } from './service/candle-plan.ts';
import { ATTEMPT_CAUSES } from './upstream/attempts.ts';

const lit = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

const Num = Type.Number();
const Int = Type.Integer();
const Region = lit(['CN', 'HK', 'US']);

const UpstreamAttempt = Type.Object({
  adapter: Type.String({ description: 'The adapter id, as in the routing chain' }),
  cause: Type.Union(ATTEMPT_CAUSES.map((v) => Type.Literal(v)), {
    description: 'dns: the host name did not resolve; connect: refused, reset, unreachable or TLS; timeout: no answer within the deadline; '
      + 'http_status: a non-2xx answer other than 429; rate_limited: the vendor asked us to slow down (429); vendor_error: an error inside a 2xx answer; '
      + 'bad_response: an answer that could not be read; circuit_open, budget, queue: not asked (open circuit, spent outbound budget, full queue or too little deadline left); '
      + 'error: anything else',
  }),
  status: Type.Optional(Type.Integer({ description: "The vendor's HTTP status (http_status, rate_limited)" })),
  message: Type.String(),
});

const ErrorDetails = Type.Object({
  adapter: Type.Optional(Type.String({ description: '502/503/504: the adapter whose failure answers (the last one tried)' })),
  attempts: Type.Optional(Type.Array(UpstreamAttempt, { description: '502/503/504 after vendors were tried: every adapter of the chain tried, in order, with why it failed' })),
}, { additionalProperties: true, description: 'What the refusal is about; other fields per reason (docs/errors.md)' });

export const ErrorBody = Type.Object({
  code: Type.Integer({ description: 'The HTTP status' }),
  message: Type.String(),
  error: Type.String({ description: 'Stable UPPER_SNAKE reason' }),
  request_id: Type.String(),
  details: Type.Optional(ErrorDetails),
  retry_after_ms: Type.Optional(Type.Integer({ description: 'Only on 429' })),
}, { $id: 'Error', title: 'Error' });

export const Candles = Type.Object({
  timestamp: Type.Array(Int, { description: 'Epoch ms; end of the bar (minute periods) or 00:00 exchange-local of the last trading day covered' }),
  open: Type.Array(Num),
  high: Type.Array(Num),
  low: Type.Array(Num),
  close: Type.Array(Num),
  volume: Type.Array(Int, { description: 'Shares' }),
  amount: Type.Array(Num, { description: 'Trading currency' }),
  prev_close: Type.Array(Num, { description: "The previous bar's close in the same adjustment" }),
  open_interest: Type.Optional(Type.Array(Int, { description: 'Futures: contracts open at the end of the bar' })),
  settlement_price: Type.Optional(Type.Array(Num, { description: "Futures: the trading day's settlement price (the provisional one, the running volume-weighted average, until the day closes)" })),
}, { $id: 'Candles', title: 'Candles' });

export const Quote = Type.Object({
  symbol: Type.String(),
  region: Region,
  last_price: Num,
  open: Num,
  high: Num,
  low: Num,
  prev_close: Num,
  volume: Int,
  amount: Num,
  timestamp: Int,
  session: Type.Optional(lit(['pre_market', 'regular', 'lunch_break', 'after_hours', 'closed', 'halted'])),
  ext: Type.Object({
    type: lit(['cn_equity', 'hk_equity', 'us_equity', 'cn_futures']),
    name: Type.String(),
    amplitude: Num,
    change_amount: Num,
    change_pct: Num,
    turnover_rate: Type.Union([Num, Type.Null()]),
    open_interest: Type.Optional(Int),
    settlement_price: Type.Optional(Type.Union([Num, Type.Null()], { description: "Futures: today's settlement price; null until the day's close" })),
    prev_settlement_price: Type.Optional(Type.Number({ description: "Futures: the previous trading day's settlement price (change and limits are from it)" })),
  }),
}, { $id: 'Quote', title: 'Quote' });

export const Depth = Type.Object({
  symbol: Type.String(),
  region: Region,
  timestamp: Int,
  bid_prices: Type.Array(Num),
  bid_volumes: Type.Array(Int),
  ask_prices: Type.Array(Num),
  ask_volumes: Type.Array(Int),
}, { $id: 'Depth', title: 'Depth' });

const NullableNum = Type.Union([Num, Type.Null()]);
export const Instrument = Type.Object({
  code: Type.String(),
  exchange: lit(['SH', 'SZ', 'BJ', 'HK', 'US', 'SHF', 'DCE', 'ZCE', 'CFX', 'INE', 'GFE']),
  name: Type.String(),
  region: Region,
  symbol: Type.String(),
  type: lit(['stock', 'etf', 'index', 'bond', 'fund', 'futures', 'options', 'other']),
  ext: Type.Object({
    type: lit(['cn_equity', 'hk_equity', 'us_equity', 'cn_futures']),
    float_shares: NullableNum,
    limit_down: NullableNum,
    limit_up: NullableNum,
    listing_date: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
    tick_size: Num,
    total_shares: NullableNum,
    lot_size: Type.Optional(Int),
    multiplier: Type.Optional(Type.Number({ description: 'Futures: units of the underlying per contract' })),
    last_trade_date: Type.Optional(Type.String({ format: 'date', description: 'Futures: last trading day' })),
    product: Type.Optional(Type.String({ description: 'Futures: product code (au, i, SR, IF)' })),
    main_contract: Type.Optional(Type.Boolean({ description: "Futures: this contract is its product's main contract now" })),
    status: Type.Optional(Type.Union([Type.Literal('listed'), Type.Literal('suspended'), Type.Literal('delisted')], {
      description: 'Listing status, where known: listed, suspended (listed, trading halted) or delisted (the vendor lists it as delisted, or no longer knows a symbol the history store holds: the stored instrument answers). Absent: the vendor does not say',
    })),
    delisting_date: Type.Optional(Type.Union([Type.String({ format: 'date' }), Type.Null()], { description: 'Delisting date, where the vendor gives one' })),
  }),
}, { $id: 'Instrument', title: 'Instrument' });

const PerShare = (description: string) => Type.Optional(Type.Number({ description }));
export const ExFactor = Type.Object({
  timestamp: Int,
  ex_factor: Num,
  // Extensions (docs/contract.md#ex-factors-and-adjustment): the event's parts, per share, where the vendor has them.
  cash_dividend: PerShare('Cash dividend per share, pre-tax, in the trading currency'),
  bonus_ratio: PerShare('Bonus plus transfer shares per share (a split of n for 1: n − 1; a consolidation of n into 1: 1/n − 1)'),
  rights_ratio: PerShare('Rights shares offered per share'),
  rights_price: PerShare('Subscription price of a rights share'),
  parts_known: Type.Optional(Type.Boolean({ description: 'false: only ex_factor is known, and forward_exrights/backward_exrights use the ratio method for this event' })),
}, { $id: 'ExFactor', title: 'ExFactor' });

export const PoolSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  region: Region,
  category: Type.String(),
  symbol_count: Int,
}, { $id: 'UniverseSummary', title: 'UniverseSummary' });

export const PoolDetail = Type.Object({
  id: Type.String(),
  name: Type.String(),
  region: Region,
  category: Type.String(),
  symbol_count: Int,
  symbols: Type.Array(Type.String()),
  as_of: Type.Optional(Type.String({ format: 'date', description: 'With ?as_of: the members as recorded on the newest recorded day at or before it (history.record jobs with membership)' })),
  recorded_from: Type.Optional(Type.String({ format: 'date', description: 'With ?as_of: the first day whose membership is recorded' })),
}, { $id: 'UniverseDetail', title: 'UniverseDetail' });

export const SHARED_SCHEMAS = [ErrorBody, Candles, Quote, Depth, Instrument, ExFactor, PoolSummary, PoolDetail];

const ref = (schema: TSchema) => Type.Unsafe({ $ref: `${(schema as { $id?: string }).$id}#` });
export const dataOf = (schema: TSchema) => Type.Object({ data: schema });
export const refs = {
  Candles: ref(Candles),
  Quote: ref(Quote),
  Depth: ref(Depth),
  Instrument: ref(Instrument),
  ExFactor: ref(ExFactor),
  PoolSummary: ref(PoolSummary),
  PoolDetail: ref(PoolDetail),
  Error: ref(ErrorBody),
};

// ---- request parameters ------------------------------------------------------------------

const TimeMs = Type.Integer({ description: 'Epoch milliseconds, inclusive' });
const SymbolList = Type.String({ description: 'Comma-separated symbols, e.g. 600519.SH,00700.HK,AAPL.US', minLength: 1 });

// Which vendor series each adjust type equals (docs/contract.md#ex-factors-and-adjustment).
const ADJUST_DESCRIPTION = 'Default forward. none: raw prices. forward / backward: the ratio method (forward = Yahoo adjclose, '
  + 'TickFlow forward/backward). forward_additive / backward_additive: the difference method (Tencent qfq). Extensions: '
  + 'forward_exrights = Eastmoney qfq (fqt=1) and the A-share terminals\' 前复权; backward_exrights = Eastmoney hfq (fqt=2), '
  + 'built from each event\'s ex-rights reference price (cash subtracted, bonus and rights shares divide).';
export const Adjust = Type.Union(ADJUST_TYPES.map((v) => Type.Literal(v)), { description: ADJUST_DESCRIPTION });

// The answer's format (issue 26; docs/formats.md): wins over the Accept header.
export const FormatParam = Type.Optional(Type.Union(FORMATS.map((v) => Type.Literal(v)), {
  description: 'Default json (or what Accept asks for: application/json, text/csv, application/vnd.apache.arrow.stream, application/vnd.apache.parquet). csv, arrow and parquet answer one typed table; batch answers in long form with a symbol column.',
}));

// What `count` promises, and every limit that can make an answer shorter (docs/contract.md#limits).
const CANDLE_COUNT = `Default 100; the newest \`count\` bars inside the range, 1 to 10000 (outside it: 400 INVALID_COUNT, never clamped). `
  + `Limits: at most ${MAX_BASE_BARS['1m'].toLocaleString('en-US')} one-minute bars (minute periods) or ${MAX_BASE_BARS['1d'].toLocaleString('en-US')} daily bars (1d and longer) are read per symbol and request (base-bars): `
  + 'a count that needs more comes short, e.g. for count=10000 about 8,000 bars at 15m, 4,000 at 30m and 2,000 to 2,154 at 60m, with X-Limited-By: base-bars; limit=120000 and the next page in X-Next-End-Time and Link '
  + '(batch: X-Truncated-Symbols). The plan\'s max_bars (symbols × base bars) is never a shortening: past it the request is 400 REQUEST_TOO_LARGE. '
  + 'A vendor\'s own history ends where it ends (no next page): minute bars reach back five trading days at Eastmoney and 29 days at Yahoo, unless the history store holds more.';

export const KlinesQuery = Type.Object({
  symbol: Type.String({ minLength: 1, description: 'e.g. 600519.SH' }),
  period: Type.Optional(lit(PERIODS)),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: CANDLE_COUNT })),
  start_time: Type.Optional(TimeMs),
  end_time: Type.Optional(TimeMs),
  adjust: Type.Optional(Adjust),
  format: FormatParam,
});

export const KlinesBatchQuery = Type.Object({
  symbols: SymbolList,
  period: Type.Optional(lit(PERIODS)),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: CANDLE_COUNT })),
  start_time: Type.Optional(TimeMs),
  end_time: Type.Optional(TimeMs),
  adjust: Type.Optional(Adjust),
  format: FormatParam,
});

export const IntradayQuery = Type.Object({
  symbol: Type.String({ minLength: 1 }),
  period: Type.Optional(lit(MINUTE_PERIODS)),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Default: all of the session' })),
  format: FormatParam,
});

export const IntradayBatchQuery = Type.Object({
  symbols: SymbolList,
  period: Type.Optional(lit(MINUTE_PERIODS)),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  format: FormatParam,
});

export const ExFactorsQuery = Type.Object({
  symbols: SymbolList,
  start_time: Type.Optional(TimeMs),
  end_time: Type.Optional(TimeMs),
  format: FormatParam,
});

export const SymbolQuery = Type.Object({ symbol: Type.String({ minLength: 1 }) });
export const SymbolsQuery = Type.Object({ symbols: SymbolList });
export const InstrumentsQuery = Type.Object({ symbols: SymbolList, format: FormatParam });
/** The query of a table route's POST (the body carries the rest). */
export const FormatQuery = Type.Object({ format: FormatParam });

export const QuotesQuery = Type.Object({
  symbols: Type.Optional(Type.String({ description: 'Comma-separated symbols (exactly one of symbols, universes)' })),
  universes: Type.Optional(Type.String({ description: 'Comma-separated pool ids: CN_Stock, CN_ETF, HK_Stock, US_Stock, CN_Index, HK_Index, US_Index (TickFlow aliases CN_Equity_A, HK_Equity, US_Equity)' })),
  format: FormatParam,
});

const StringList = Type.Array(Type.String(), { description: 'A list of strings' });
export const QuotesBody = Type.Object({
  symbols: Type.Optional(StringList),
  universes: Type.Optional(StringList),
});
export const InstrumentsBody = Type.Object({ symbols: StringList });
const AsOf = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD: the members as recorded that day (the recorder\'s membership snapshots); 404 before recording began',
});
export const UniversesBatchBody = Type.Object({ ids: StringList, as_of: Type.Optional(AsOf) });
export const UniverseParams = Type.Object({ id: Type.String() });
export const UniverseQuery = Type.Object({ as_of: Type.Optional(AsOf) });
