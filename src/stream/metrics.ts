// Stream metrics, registered on the app's registry (never the global one: tests build many apps).
import { Counter, Gauge, type Registry } from 'prom-client';

export interface StreamMetrics {
  connections: Gauge<'route'>;
  subscriptions: Gauge<'channel'>;
  messagesSent: Counter<'channel'>;
  conflations: Counter<'channel'>;
  slowClientCloses: Counter;
  refreshes: Counter<'channel'>;
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
  };
}
