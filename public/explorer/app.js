// The explorer page: key, symbol, period and adjust in; chart, quote, depth and intraday out.
// `window.__explorer` mirrors exactly what was handed to the chart and panels (for tests and
// debugging); it never holds the key.
import { api, describeError, keyStore, on } from './api.js';
import { createIntradayChart, createPriceChart } from './chart.js';
import { ZONES, chartTime, regionOf } from './format.js';
import { startLive as startTransport } from './live.js';
import { clearDepth, clearQuote, renderBadge, renderDepth, renderQuote } from './panels.js';
import { createSymbolSearch } from './symbols.js';

const CANDLE_COUNT = 300;
const MINUTE = new Set(['1m', '5m', '10m', '15m', '30m', '60m']);

const $ = (id) => document.getElementById(id);
const hook = {
  chart: null, intraday: null, quote: null, depth: null, markers: [],
  liveUpdates: 0, polls: 0, transport: '', badge: { upstream: '', simulated: false }, loads: 0,
};
window.__explorer = hook;

const state = { symbol: '', period: '1d', adjust: 'forward', generation: 0, live: undefined, exFactors: new Map() };
const price = createPriceChart($('price-chart'));
const intraday = createIntradayChart($('intraday-chart'));
const search = createSymbolSearch({ input: $('symbol'), datalist: $('symbol-list'), stateNode: $('search-state') });

const setStatus = (text) => { $('status').textContent = text; };
const notice = (id, text) => { $(id).textContent = text; };

// ---- where the data came from, and which symbols failed -----------------------------------

const failed = new Map();
const missing = new Map();
const listed = (map) => [...new Set([...map.values()].flat())].join(', ');

on('response', ({ path, headers }) => {
  const route = path.split('?')[0];
  const upstream = headers.get('x-upstream');
  if (upstream) {
    const simulated = headers.get('x-simulated') === 'true' || upstream.split(',').includes('sim');
    hook.badge = { upstream, simulated };
    renderBadge(hook.badge);
  }
  const failedNow = (headers.get('x-failed-symbols') ?? '').split(',').filter(Boolean);
  const missingNow = (headers.get('x-missing-symbols') ?? '').split(',').filter(Boolean);
  failed.set(route, failedNow);
  missing.set(route, missingNow);
  const f = listed(failed);
  const m = listed(missing);
  notice('notice-failed', f ? `The upstream failed for ${f} (X-Failed-Symbols): those symbols are missing from what is shown.` : '');
  notice('notice-missing', m ? `Unknown to the upstream: ${m} (X-Missing-Symbols).` : '');
});
on('notice', ({ text }) => notice('notice-rate', text));

async function showMeta() {
  try {
    const response = await fetch('/v1/meta', { cache: 'no-store', credentials: 'omit' });
    const { data } = await response.json();
    if (hook.badge.upstream === '') {
      const ids = data.adapters.map((a) => a.id).join(',');
      hook.badge = { upstream: ids, simulated: data.simulated === true };
      renderBadge(hook.badge);
    }
  } catch {
    renderBadge({ upstream: 'service metadata unavailable', simulated: false });
  }
}

// ---- the key -------------------------------------------------------------------------------

function showKeyState() {
  $('key-state').textContent = keyStore.get() ? 'key in use (kept in this tab only)' : 'no key yet';
}

$('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = $('api-key').value.trim();
  $('api-key').value = '';
  if (key === '') return;
  keyStore.set(key);
  showKeyState();
  setStatus('');
  void search.load();
  if (state.symbol) void loadAll();
});

$('key-forget').addEventListener('click', () => {
  keyStore.clear();
  state.live?.stop();
  showKeyState();
  setStatus('The key is forgotten. An API key is needed: enter one above.');
});

// ---- picking -------------------------------------------------------------------------------

$('pick-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const symbol = search.resolve($('symbol').value);
  if (symbol === undefined) {
    setStatus('Type a symbol such as 600519.SH, 00700.HK or AAPL.US, or part of a name from the list.');
    return;
  }
  $('symbol').value = symbol;
  state.symbol = symbol;
  void loadAll();
});

for (const id of ['period', 'adjust']) {
  $(id).addEventListener('change', () => {
    state[id] = $(id).value;
    if (state.symbol) void loadChart(state.generation);
  });
}

// ---- loading -------------------------------------------------------------------------------

function zoneOf(symbol) {
  return ZONES[regionOf(symbol)];
}

async function loadAll() {
  if (!keyStore.get()) {
    setStatus('An API key is needed (401 MISSING_API_KEY). Enter your key above; it is kept in this tab only.');
    return;
  }
  state.generation += 1;
  const generation = state.generation;
  state.live?.stop();
  setStatus('');
  clearQuote('');
  clearDepth('');
  hook.quote = null;
  hook.depth = null;
  hook.quoteError = null;
  hook.depthError = null;
  await Promise.all([loadChart(generation), loadIntraday(generation)]);
  if (generation !== state.generation) return;
  startLive(generation);
}

async function exFactorsOf(symbol) {
  if (state.exFactors.has(symbol)) return state.exFactors.get(symbol);
  try {
    const { data } = await api(`/v1/klines/ex-factors?symbols=${encodeURIComponent(symbol)}`);
    const events = data?.[symbol] ?? [];
    state.exFactors.set(symbol, events);
    notice('notice-markers', '');
    return events;
  } catch (error) {
    notice('notice-markers', `Ex-dividend markers unavailable: ${describeError(error)}`);
    return [];
  }
}

async function loadChart(generation) {
  const { symbol, period, adjust } = state;
  const query = new URLSearchParams({ symbol, period, adjust, count: String(CANDLE_COUNT) });
  $('chart-title').textContent = `${symbol} ${search.nameOf(symbol) ?? ''} · ${period} · ${adjust}`;
  try {
    const [{ data }, events] = await Promise.all([api(`/v1/klines?${query}`), exFactorsOf(symbol)]);
    if (generation !== state.generation || period !== state.period || adjust !== state.adjust) return;
    const shown = price.show(zoneOf(symbol), data, events, MINUTE.has(period));
    hook.chart = {
      symbol, period, adjust,
      count: shown.bars.length,
      lastClose: shown.bars.at(-1)?.close ?? null,
      lastTime: data.timestamp.at(-1) ?? null,
      closes: shown.bars.map((b) => b.close),
    };
    hook.markers = shown.markers.map((m) => m.text);
    hook.loads += 1;
    setStatus('');
  } catch (error) {
    if (generation !== state.generation) return;
    price.clear();
    hook.chart = { symbol, period, adjust, count: 0, lastClose: null, error: error.reason ?? String(error), status: error.status };
    hook.loads += 1;
    setStatus(describeError(error));
  }
}

async function loadIntraday(generation) {
  const symbol = state.symbol;
  try {
    const { data } = await api(`/v1/klines/intraday?symbol=${encodeURIComponent(symbol)}`);
    if (generation !== state.generation) return;
    const points = intraday.show(zoneOf(symbol), data);
    hook.intraday = { symbol, count: points.length, lastClose: data.close.at(-1) ?? null };
    $('intraday-error').textContent = '';
  } catch (error) {
    if (generation !== state.generation) return;
    intraday.clear();
    hook.intraday = { symbol, count: 0, error: error.reason ?? String(error) };
    $('intraday-error').textContent = describeError(error);
  }
}

/** Fold a live price into the newest candle when it belongs to it and the adjustment keeps traded prices. */
function foldIntoChart(quote) {
  const chart = hook.chart;
  if (chart === null || chart.lastTime === null || chart.symbol !== quote.symbol) return;
  if (state.adjust !== 'forward' && state.adjust !== 'none') return;
  const zone = zoneOf(quote.symbol);
  const lastBar = chartTime(zone, chart.lastTime);
  const now = chartTime(zone, quote.timestamp);
  const sameBar = MINUTE.has(chart.period)
    ? now <= lastBar && now > lastBar - Number.parseInt(chart.period, 10) * 60
    : Math.floor(now / 86_400) === Math.floor(lastBar / 86_400);
  if (sameBar) price.updateLast(quote.last_price);
}

function startLive(generation) {
  const symbol = state.symbol;
  notice('notice-live', '');
  state.live = startTransport(symbol, {
    onTransport(name) {
      if (generation === state.generation) hook.transport = name;
    },
    onQuote(quote) {
      if (generation !== state.generation) return;
      hook.polls += 1;
      if (hook.quote !== null && hook.quote.timestamp !== quote.timestamp) hook.liveUpdates += 1;
      hook.quote = quote;
      renderQuote(quote);
      foldIntoChart(quote);
      intraday.update(zoneOf(symbol), quote.timestamp, quote.last_price);
    },
    onDepth(depth) {
      if (generation !== state.generation) return;
      hook.depth = depth;
      renderDepth(depth);
    },
    onError(kind, error) {
      if (generation !== state.generation) return;
      const text = describeError(error);
      if (kind === 'quote') clearQuote(text);
      else clearDepth(text);
      hook[`${kind}Error`] = error.reason ?? String(error);
    },
  });
}

showKeyState();
void showMeta();
if (keyStore.get()) void search.load();
else setStatus('An API key is needed: enter your key above (it is kept in this tab only, and sent only in the X-API-Key header).');
