// Symbol search over the pools' members (/v1/universes) with names from /v1/instruments, looked up
// lazily for the suggestions on screen, in chunks the key's plan allows.
import { api, describeError } from './api.js';
import { regionOf } from './format.js';

// Two-letter suffixes, and the three-letter futures exchanges (au2604.SHF, SR605.ZCE).
const SYMBOL_SHAPE = /^[A-Za-z0-9][A-Za-z0-9.\-]*\.[A-Za-z]{2,3}$/;

/** "700.hk" → "00700.HK" (docs/contract.md#symbols-regions-pools); anything else only upper-cases the exchange. */
export function normaliseSymbol(text) {
  const raw = text.trim();
  const dot = raw.lastIndexOf('.');
  if (dot <= 0) return raw.toUpperCase();
  const exchange = raw.slice(dot + 1).toUpperCase();
  let code = raw.slice(0, dot);
  if (exchange === 'HK' && /^\d{1,5}$/.test(code)) code = code.padStart(5, '0');
  if (exchange === 'US') code = code.toUpperCase();
  return `${code}.${exchange}`;
}

/**
 * `report(text, error)` receives what the search has to say: a line about the list (no error) or a
 * failure (with its ApiError, so the page can say one cause once); without it the text goes to `stateNode`.
 */
export function createSymbolSearch({ input, datalist, stateNode, report }) {
  /** symbol → {symbol, pool, name?} in pool order. */
  const entries = new Map();
  let namesBlocked = '';
  let chunk = 20;
  /** Markets the key's plan lacks: their names are not asked for again. */
  const deniedMarkets = new Set();

  const say = report ?? ((text) => { stateNode.textContent = text; });

  function render(list) {
    const options = list.slice(0, 200).map((entry) => {
      const option = document.createElement('option');
      option.value = entry.symbol;
      option.label = entry.name ? `${entry.name} · ${entry.pool}` : entry.pool;
      return option;
    });
    datalist.replaceChildren(...options);
  }

  function matches(query) {
    const q = query.trim().toUpperCase();
    const all = [...entries.values()];
    if (q === '') return all;
    return all.filter((e) => e.symbol.startsWith(q) || e.symbol.includes(q) || (e.name ?? '').toUpperCase().includes(q));
  }

  async function lookupNames(symbols) {
    const wanted = symbols.filter((s) => entries.get(s)?.name === undefined && !deniedMarkets.has(regionOf(s)));
    if (wanted.length === 0 || namesBlocked !== '') return;
    for (let i = 0; i < wanted.length; i += chunk) {
      const part = wanted.slice(i, i + chunk);
      try {
        const { data } = await api(`/v1/instruments?symbols=${encodeURIComponent(part.join(','))}`);
        for (const instrument of data ?? []) {
          const entry = entries.get(instrument.symbol) ?? { symbol: instrument.symbol, pool: instrument.exchange };
          entry.name = instrument.name;
          entries.set(instrument.symbol, entry);
        }
      } catch (error) {
        const max = error.body?.details?.max_symbols;
        if (error.reason === 'TOO_MANY_SYMBOLS' && Number.isInteger(max) && max < chunk) {
          chunk = max;
          i -= max; // the loop adds `chunk` back: retry this part in smaller pieces
          continue;
        }
        const markets = error.body?.details?.missing_markets;
        if (error.status === 403 && Array.isArray(markets) && markets.length > 0 && !error.body.details.missing_features) {
          for (const market of markets) deniedMarkets.add(market);
          say(`Names of ${[...deniedMarkets].join(', ')} symbols unavailable: ${describeError(error)}`, error);
          return lookupNames(wanted.slice(i));
        }
        namesBlocked = `Names unavailable: ${describeError(error)}`;
        say(namesBlocked, error);
        return;
      }
    }
    render(matches(input.value));
  }

  input.addEventListener('input', () => {
    const found = matches(input.value);
    render(found);
    void lookupNames(found.slice(0, 10).map((e) => e.symbol));
  });

  return {
    /** Pool members for the suggestions; any valid key may read pools. */
    async load() {
      try {
        const { data: summaries } = await api('/v1/universes');
        const ids = (summaries ?? []).map((s) => s.id);
        const { data: pools } = ids.length > 0 ? await api('/v1/universes/batch', { body: { ids } }) : { data: {} };
        for (const [id, pool] of Object.entries(pools ?? {})) {
          for (const symbol of pool.symbols ?? []) {
            if (!entries.has(symbol)) entries.set(symbol, { symbol, pool: `${pool.name} (${id})` });
          }
        }
        say(`${entries.size} symbols in ${ids.length} pools; type a code or a name`);
        render(matches(input.value));
        void lookupNames([...entries.keys()].slice(0, 10));
      } catch (error) {
        say(`Symbol list unavailable: ${describeError(error)} You can still type a symbol such as 600519.SH.`, error);
      }
    },
    /** What the user typed as a symbol: a pool member, a known name, or anything shaped like a symbol. */
    resolve(text) {
      const trimmed = text.trim();
      if (trimmed === '') return undefined;
      const normal = normaliseSymbol(trimmed);
      if (entries.has(normal)) return normal;
      const byName = [...entries.values()].find((e) => e.name !== undefined && e.name === trimmed);
      if (byName !== undefined) return byName.symbol;
      if (SYMBOL_SHAPE.test(trimmed)) return normal;
      return matches(trimmed)[0]?.symbol;
    },
    nameOf: (symbol) => entries.get(symbol)?.name,
    size: () => entries.size,
  };
}
