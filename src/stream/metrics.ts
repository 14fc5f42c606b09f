// Stream metrics, registered on the app's registry (never the global one: tests build many apps).
import { Counter, Gauge, type Registry } from 'prom-client';

export interface StreamMetrics {
  connections: Gauge<'route'>;
  subscriptions: Gauge<'channel'>;
  messagesSent: Counter<'channel'>;
  conflations: Counter<'channel'>;
  slowClientCloses: Counter;
  refreshes: Counter<'channel'>;
  closed: Counter<'reason'>;
  resumes: Counter<'outcome'>;
  upstreamMode: Gauge<'adapter' | 'mode'>;
  upstreamSymbols: Gauge<'adapter' | 'channel'>;
  upstreamPushed: Counter<'adapter' | 'channel'>;
}

export function createStreamMetrics(registry: Registry): StreamMetrics {
  const registers = [registry];
  return {
    connections: new Gauge({ name: 'mdqs_ws_connections', help: 'Open WebSocket stream connections.', labelNames: ['route'], registers }),
    subscriptions: new Gauge({ name: 'mdqs_ws_subscriptions', help: 'Subscribed (connection, symbol) pairs per channel.', labelNames: ['channel'], registers }),
    messagesSent: new Counter({ name: 'mdqs_ws_messages_sent_total', help: 'Data frames (snapshots and updates) sent to clients.', labelNames: ['channel'], registers }),
    conflations: new Counter({ name: 'mdqs_ws_conflations_total', help: 'Symbol updates held back for a slow client and replaced by a newer value.', labelNames: ['channel'], registers }),
    slowClientCloses: new Counter({ name: 'mdqs_ws_slow_client_closes_total', help: 'Connections closed with 1013 because they could not keep up.', registers }),
    refreshes: new Counter({ name: 'mdqs_ws_refreshes_total', help: 'Batched reads of subscribed symbols through the service (one per channel per tick).', labelNames: ['channel'], registers }),
    closed: new Counter({ name: 'mdqs_stream_closed_total', help: 'Stream connections closed, by reason: client (the client closed), missed_pong, slow_consumer, key_revoked, key_expired, plan_forbids, too_many_connections, shutdown.', labelNames: ['reason'], registers }),
    resumes: new Counter({ name: 'mdqs_stream_resumes_total', help: 'Subscribes with `since`: replayed (every missed update sent from the replay log) or gap (beyond the log for at least one symbol: a snapshot marked with the missed range).', labelNames: ['outcome'], registers }),
    upstreamMode: new Gauge({ name: 'mdqs_stream_upstream_mode', help: "Per adapter with a push feed, its mode (1 for the current one): idle (not needed yet), push (subscribed on the vendor's feed), polling (the feed is down; symbols are polled each tick).", labelNames: ['adapter', 'mode'], registers }),
    upstreamSymbols: new Gauge({ name: 'mdqs_stream_upstream_symbols', help: "Symbols this instance holds subscribed on a vendor's push feed (one instance per symbol fleet-wide).", labelNames: ['adapter', 'channel'], registers }),
    upstreamPushed: new Counter({ name: 'mdqs_stream_upstream_pushed_total', help: "Values a vendor's push feed delivered for symbols this instance holds.", labelNames: ['adapter', 'channel'], registers }),
  };
}
