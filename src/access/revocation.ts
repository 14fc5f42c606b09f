// Key reloads across instances (issue 10.4): a revoked key is refused everywhere within a second.
//
//   subscribeKeyReloads({ subscriber, keys, log, channel? }): () => Promise<void>   (unsubscribe)
//   publishKeyReload(redis, channel?): Promise<number>   instances told (PUBLISH's receiver count)
//   publishKeyReloadTo(url, timeoutMs?): Promise<number>  the same from a fresh connection (CLI)
//
// The CLI (revoke-key) and SIGHUP publish after changing or re-reading the keys file; every
// instance's subscriber re-reads its keys file at once. Pub/sub is fire-and-forget, so a subscriber
// that reconnects also reloads: a publish it missed while disconnected still takes effect.
import { resolve } from 'node:path';
import type { Redis } from 'ioredis';
import { createRedisClient, unsubscribeWithin } from '../redis/connection.ts';
import type { KeyStore } from './keys.ts';

// Not versioned (unlike keys, redis/keys.ts redisKey): the message is only "reload", and during a rolling
// upgrade the instances of both releases must hear a revocation. Classic pub/sub: on a Redis
// Cluster a PUBLISH on any node reaches subscribers on every node.
const KEY_RELOAD_CHANNEL = 'mdqs:keys:reload';

interface Log {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface KeyReloadOptions {
  /** A connection of its own (redis/connection.ts createSubscriber). */
  subscriber: Redis;
  keys: Pick<KeyStore, 'reload' | 'size'> & { readonly path?: string };
  log: Log;
  channel?: string;
}

export function subscribeKeyReloads(options: KeyReloadOptions): () => Promise<void> {
  const { subscriber, keys, log } = options;
  const channel = options.channel ?? KEY_RELOAD_CHANNEL;
  const reload = (why: string) => {
    try {
      keys.reload();
      log.info({ keys: keys.size, ...(keys.path !== undefined ? { keys_file: resolve(keys.path) } : {}), why }, 'keys reloaded');
    } catch (error) {
      log.error({ err: error, why }, 'keys reload failed; keeping the previous keys');
    }
  };
  const onMessage = (from: string) => {
    if (from === channel) reload('published');
  };
  let connectedOnce = false;
  const subscribe = () => void subscriber.subscribe(channel).catch((error: unknown) => log.error({ err: error }, 'key reload subscription failed'));
  const onReady = () => {
    if (connectedOnce) reload('redis reconnected');
    connectedOnce = true;
    // Again on every connection: a SUBSCRIBE sent while Redis was down failed, and ioredis renews
    // only subscriptions it saw confirmed.
    subscribe();
  };
  subscriber.on('message', onMessage);
  subscriber.on('ready', onReady);
  if (subscriber.status === 'ready') {
    connectedOnce = true;
    subscribe();
  }
  return async () => {
    subscriber.off('message', onMessage);
    subscriber.off('ready', onReady);
    await unsubscribeWithin(subscriber, channel);
  };
}

export async function publishKeyReload(redis: Redis, channel = KEY_RELOAD_CHANNEL): Promise<number> {
  return redis.publish(channel, String(Date.now()));
}

/** Connect, publish one reload, disconnect; rejects when Redis does not answer in `timeoutMs`. */
export async function publishKeyReloadTo(url: string, timeoutMs = 3000, channel = KEY_RELOAD_CHANNEL): Promise<number> {
  const redis = createRedisClient(url, { commandTimeoutMs: timeoutMs });
  try {
    if (redis.status !== 'ready') {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`Redis at ${url} did not answer within ${timeoutMs} ms`)), timeoutMs);
        redis.once('ready', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return await publishKeyReload(redis, channel);
  } finally {
    redis.disconnect();
  }
}
