// GET /v1/me: what the presented key (or, without one, the free tier for this address) may call:
// its plan's markets, features and caps, its rate limit with what remains of it, its stream caps
// and its expiry. Never the key itself. The request counts against the limit like any other, and
// `remaining` is what the access hook's decision left: fleet-wide when Redis shares the limit
// (`shared: true`), this instance's count otherwise (no Redis, or Redis down: then `limit` is this
// instance's share, as in X-RateLimit-Limit). Clients ask here instead of caching 403s.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { FEATURES } from '../access/keys.ts';
import type { Market } from '../domain.ts';
import { AppError } from '../errors.ts';
import { keyOf } from './common.ts';
import type { AppContext } from './context.ts';
import { ERROR_RESPONSES } from './errors-doc.ts';

const MARKETS: readonly Market[] = ['CN', 'HK', 'US', 'CN_FUTURES'];

const Me = Type.Object({
  key_id: Type.Union([Type.String(), Type.Null()], { description: "The key's id from the keys file (as in logs); null for the free tier (no key)" }),
  anonymous: Type.Boolean({ description: 'true: no key was presented and the free tier answered; its limit counts per client address' }),
  plan: Type.String({ description: 'Plan name' }),
  markets: Type.Array(Type.String(), { description: 'Markets the plan grants (CN, HK, US, CN_FUTURES)' }),
  features: Type.Array(Type.String(), { description: `Features the plan grants (of ${FEATURES.join(', ')})` }),
  max_symbols: Type.Integer({ description: 'Symbols one request may list' }),
  max_bars: Type.Integer({ description: 'Base bars (bars × symbols) one candle request may need' }),
  rate_limit: Type.Object({
    limit: Type.Integer({ description: 'Requests admitted per window (X-RateLimit-Limit)' }),
    window_ms: Type.Integer({ description: 'The sliding window, ms' }),
    remaining: Type.Integer({ description: 'Requests left in the window, this one counted (X-RateLimit-Remaining)' }),
    reset_at: Type.Integer({ description: 'When the oldest admission leaves the window and one more request is free, epoch ms' }),
    shared: Type.Boolean({ description: 'true: counted fleet-wide through Redis; false: by this instance alone' }),
  }),
  stream: Type.Object({
    max_connections: Type.Integer({ description: 'Open /v1/ws/stream connections per key' }),
    max_subscriptions: Type.Integer({ description: 'Symbols subscribed at once over the key\'s connections' }),
  }),
  expires_at: Type.Union([Type.Integer(), Type.Null()], { description: 'When the key stops authenticating, epoch ms; null: never' }),
});

export default async function meRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get('/v1/me', {
    schema: {
      operationId: 'getMe',
      summary: 'What the key may call: plan, markets, features, caps, rate limit left',
      description: 'Any valid key may ask; without a key, the free tier for this address when the service has one (otherwise 401). '
        + 'The request counts against the limit like any other. The key itself is never returned.',
      tags: ['access'],
      response: { 200: Type.Object({ data: Me }), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const entry = keyOf(request);
    const decision = request.rateLimitDecision;
    if (decision === undefined) throw new AppError('INTERNAL_ERROR', 'no rate-limit decision for this request');
    const plan = entry.plan;
    const anonymous = entry.anonymous === true;
    const data = {
      key_id: anonymous ? null : entry.id,
      anonymous,
      plan: plan.name,
      markets: MARKETS.filter((m) => plan.markets.has(m)),
      features: FEATURES.filter((f) => plan.features.has(f)),
      max_symbols: plan.maxSymbols,
      max_bars: plan.maxBars,
      rate_limit: {
        limit: decision.limit,
        window_ms: plan.rateLimit.windowMs,
        remaining: decision.remaining,
        reset_at: ctx.now() + decision.resetMs,
        shared: decision.source === 'redis',
      },
      stream: { max_connections: plan.maxConnections, max_subscriptions: plan.maxSubscriptions },
      expires_at: entry.expiresAt ?? null,
    };
    return reply.header('cache-control', 'no-store').header('content-type', 'application/json; charset=utf-8').send(JSON.stringify({ data }));
  });
}
