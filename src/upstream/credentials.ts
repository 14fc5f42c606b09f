// Vendors configured without a key they need (issue 43.5): said once at boot, at warn, instead of
// a vendor 401 on every call. Only TickFlow takes a key: its paid API (the default baseUrl, or
// `tier: paid`) refuses every call without one; the free tier (free-api.tickflow.org) is keyless.
// Eastmoney and Yahoo are keyless; the sim needs nothing.
import { TICKFLOW_FREE_HOST } from '../../adapters/tickflow/index.ts';
import { TICKFLOW_DEFAULTS } from '../../adapters/tickflow/options.ts';
import { adapterTypeOf } from '../../config/adapters.ts';

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

/** One line per adapter of `ids` whose block lacks a key its vendor needs. */
export function missingKeyWarnings(ids: Iterable<string>, blocks: Record<string, Record<string, unknown> | undefined>): string[] {
  const out: string[] = [];
  for (const id of ids) {
    const block = blocks[id] ?? {};
    if (adapterTypeOf(id, block) !== 'tickflow') continue;
    const baseUrl = typeof block.baseUrl === 'string' ? block.baseUrl : TICKFLOW_DEFAULTS.baseUrl;
    const host = hostOf(baseUrl);
    const tier = block.tier === 'paid' || block.tier === 'free' ? block.tier : host === TICKFLOW_FREE_HOST ? 'free' : 'paid';
    const key = typeof block.apiKey === 'string' ? block.apiKey.trim() : '';
    if (tier !== 'paid' || key !== '') continue;
    out.push(
      `adapters.${id}.apiKey is empty, but ${host ?? baseUrl} (tier paid) needs a key: the vendor will refuse every call (answered 502, `
      + `details.attempts cause http_status). Set it (MDQS__adapters__${id}__apiKey=…), or use the keyless free tier `
      + `(baseUrl: https://${TICKFLOW_FREE_HOST}).`,
    );
  }
  return out;
}
