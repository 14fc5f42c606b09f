// OpenAPI for the WebSocket routes: OpenAPI 3.0 cannot model a socket, so each route is a GET
// whose description lists the protocol and whose responses are the handshake's answers.
import { Type } from 'typebox';
import { refs } from '../schemas.ts';

const described = (description: string) => ({ ...refs.Error, description });

const PROTOCOL = `
WebSocket upgrade. Key: \`api_key\` query parameter or \`X-API-Key\` header. permessage-deflate is
supported; the server pings every 30 s (configurable) and drops a connection that missed a pong.

Client messages (JSON text):
- \`{"op":"subscribe","channel":"quotes"|"depth","symbols":["600519.SH",…]}\`; to resume after a
  reconnect add the last seq seen per symbol, \`"since":{"600519.SH":1234}\`: every update after it
  is replayed (instead of the snapshot), then live ones follow; beyond the replay log the current
  value comes marked \`"gap":true,"gap_from":1235,"gap_to":<seq>\`.
- \`{"op":"unsubscribe","channel":"quotes"|"depth","symbols":[…]}\`

Server messages:
- \`{"op":"subscribed","channel":"quotes","symbols":[…],"total":N}\`: the requested symbols now
  subscribed, and the connection's total on that channel.
- \`{"op":"unsubscribed","channel":"quotes","symbols":[…],"total":N}\`
- \`{"op":"quotes","data":[Quote…]}\` and \`{"op":"depth","data":[Depth…]}\`: the same shapes as
  GET /v1/quotes and /v1/depth. A snapshot of the newly added symbols follows each subscribe; then
  only symbols whose values changed are pushed, batched per tick, while their market is in session.
  Each element carries \`seq\`: the update's number, increasing by one per channel and symbol (the
  same on every instance; a snapshot carries the last one).
- \`{"op":"heartbeat","time":<ms>,"last_seq":{"quotes":{"600519.SH":1240},"depth":{}}}\`: every
  15 s (configurable), the last seq of each subscribed symbol.
- \`{"op":"error","code":400,"error":"INVALID_SYMBOL","message":"…","details":{…}}\`: the REST
  error fields (code is the HTTP-style status, error the stable reason). The connection stays open.
  Reasons: INVALID_PARAMETER (not JSON, unknown op or channel, empty symbols), INVALID_SYMBOL,
  SYMBOL_NOT_FOUND, NO_QUOTES_PERMISSION / NO_DEPTH_PERMISSION, MARKET_NOT_PERMITTED,
  TOO_MANY_SYMBOLS (the plan's max_subscriptions per key), RATE_LIMITED (the handshake and client
  messages count against the key's rate limit, the bucket of its HTTP requests; pushes never do;
  adds retry_after_ms), UPSTREAM_*. After a keys reload that changed the key's plan, an error frame
  (NO_DEPTH_PERMISSION, MARKET_NOT_PERMITTED, TOO_MANY_SYMBOLS) names the symbols unsubscribed in
  \`details.symbols\` and \`details.channel\`.

Limits: per key \`max_connections\` (default 10, refused with 429 TOO_MANY_CONNECTIONS at the
handshake) and \`max_subscriptions\` (default 200). A client that does not read is sent conflated
updates (latest value per symbol) and closed with 1013 when it stays behind or its send buffer
passes the bound. Messages above the payload limit close with 1009. On shutdown: 1001. A key
revoked or expired while connected: 4401 ("key revoked", "key expired"); a plan that no longer
permits the route: 4403; the newest connections past a lowered max_connections: 4429.`;

export function streamRouteSchema(legacy: boolean) {
  return {
    summary: legacy ? 'Legacy quotes-only WebSocket stream' : 'WebSocket stream of quotes and depth',
    description: legacy
      ? `The legacy form of /v1/ws/stream: quotes only; messages carry no channel, e.g. \`{"op":"subscribe","symbols":["600519.SH"]}\`.\n${PROTOCOL}`
      : PROTOCOL,
    tags: ['stream'],
    querystring: Type.Object({
      api_key: Type.Optional(Type.String({ description: 'The API key (or the X-API-Key header)' })),
    }),
    response: {
      101: { description: 'Switching Protocols: the WebSocket is open', type: 'null' },
      401: described('Missing or invalid API key (MISSING_API_KEY, INVALID_API_KEY)'),
      403: described(legacy ? 'The plan lacks quotes (NO_QUOTES_PERMISSION)' : 'The plan has neither quotes nor depth (NO_QUOTES_PERMISSION)'),
      426: described('A plain GET without the WebSocket upgrade (UPGRADE_REQUIRED)'),
      429: described('Rate limited (RATE_LIMITED) or too many stream connections for this key (TOO_MANY_CONNECTIONS)'),
      503: described('Shutting down (SHUTTING_DOWN)'),
    },
  };
}
