// The market explorer at /explorer: static files from public/explorer/ plus TradingView's
// lightweight-charts straight from node_modules (no build step, nothing fetched from elsewhere).
// Keyless and outside the rate limit: the page asks for the key itself and sends it on each
// /v1 call, which is where the key's limit is counted. /explorer/access.json tells the page which
// way in needs no typing: the documented demo key (only while it is enabled and flagged `demo`, so
// a real key is never named) and the free tier's plan (requests without a key).
import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';
import type { KeyStore } from '../access/keys.ts';
import { AppError } from '../errors.ts';
import { DEMO_KEY } from '../http/docs.ts';
import type { AppContext } from './context.ts';

export const EXPLORER_ROOT = fileURLToPath(new URL('../../public/explorer/', import.meta.url));
export const CHARTS_FILE = 'lightweight-charts.standalone.production.mjs';
/** The package's dist folder, found through its own entry point rather than a fixed node_modules path. */
export const CHARTS_DIR = dirname(fileURLToPath(import.meta.resolve('lightweight-charts')));

/** Only the service's own origin; no inline script or style; no framing. */
export const EXPLORER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The page revalidates on every load (it names the asset versions); assets are reused for an hour. */
export const HTML_CACHE = 'no-cache';
export const ASSET_CACHE = 'public, max-age=3600';
export const VENDOR_CACHE = 'public, max-age=86400';

const publicRoute = { public: true, rateLimit: false } as const;

export interface ExplorerAccess {
  /** The documented public demo key while the keys file enables it with `demo: true`; else null. */
  demo_key: string | null;
  /** What requests without a key get (the keys file's `anonymous` block); null when a key is required. */
  free_tier: { plan: string; markets: string[]; features: string[] } | null;
}

/** Read per request: a SIGHUP reload of the keys file changes the answer without a restart. */
export function explorerAccess(keys: KeyStore): ExplorerAccess {
  const free = keys.anonymous;
  return {
    demo_key: keys.lookup(DEMO_KEY)?.demo === true ? DEMO_KEY : null,
    free_tier: free === undefined ? null : { plan: free.plan.name, markets: [...free.plan.markets], features: [...free.plan.features] },
  };
}

export default async function explorerRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  // Served files are fixed at startup: a name outside this list is a 404, never a path lookup.
  const assets = new Set(readdirSync(EXPLORER_ROOT).filter((name) => /^[a-z0-9-]+\.(js|css|svg)$/.test(name)));

  await app.register(async (scope) => {
    await scope.register(fastifyStatic, { root: [EXPLORER_ROOT, CHARTS_DIR], serve: false });

    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.header('content-security-policy', EXPLORER_CSP);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      return payload;
    });

    const send = (reply: FastifyReply, file: string, root: string, cacheControl: string) => {
      reply.header('cache-control', cacheControl);
      return reply.sendFile(file, root, { cacheControl: false });
    };

    const page = { config: publicRoute, schema: { hide: true } };
    scope.get('/explorer', page, (_request, reply) => send(reply, 'index.html', EXPLORER_ROOT, HTML_CACHE));
    scope.get('/explorer/', page, (_request, reply) => send(reply, 'index.html', EXPLORER_ROOT, HTML_CACHE));
    scope.get('/explorer/access.json', page, (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return explorerAccess(ctx.keys);
    });
    scope.get('/explorer/vendor/lightweight-charts.mjs', page, (_request, reply) => send(reply, CHARTS_FILE, CHARTS_DIR, VENDOR_CACHE));
    scope.get<{ Params: { file: string } }>('/explorer/:file', page, (request, reply) => {
      const file = request.params.file;
      if (!assets.has(file)) throw new AppError('NOT_FOUND', `no explorer file ${file.slice(0, 60)}`);
      return send(reply, file, EXPLORER_ROOT, ASSET_CACHE);
    });
  });
}
