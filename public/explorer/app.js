// The explorer page: key, symbol, period and adjust in; chart, quote, depth and intraday out.
// `window.__explorer` mirrors exactly what was handed to the chart and panels (for tests and
// debugging); it never holds the key.
import { ApiError, api, currentKey, describeError, errorTag, keySource, keyStore, loadAccess, on, serverAccess } from './api.js';
import { createIntradayChart, createPriceChart } from './chart.js';
import { ZONES, chartTime, periodStartOf, regionOf } from './format.js';
import { History, barsToCover, monthsBefore } from './history.js';
import { renderLegend } from './legend.js';
import { markerText } from './markers.js';
import { startLive as startTransport } from './live.js';
import { forgetMe, loadMe, me, noteRemaining } from './me.js';
import { clearDepth, clearQuote, renderBadge, renderDepth, renderQuote } from './panels.js';
import { COLOUR_MODES, loadColourMode, resolveColours, saveColourMode } from './prefs.js';
import { createSymbolSearch } from './symbols.js';

const CANDLE_COUNT = 300;
/** Bars asked for each time the user scrolls to the left edge. */
const OLDER_PAGE = 500;
/** The most bars one chart holds (range buttons stop there and say so). */
const MAX_BARS = 20_000;
const MINUTE = new Set(['1m', '5m', '10m', '15m', '30m', '60m']);
/** The symbol shown on opening, by the first market the plan has (CN without /v1/me). */
const DEFAULT_SYMBOLS = { CN: '600519.SH', HK: '00700.HK', US: 'AAPL.US' };
const RANGE_MONTHS = { '1M': 1, '3M': 3, '1Y': 12, '5Y': 60, All: Infinity };

const $ = (id) => document.getElementById(id);
const hook = {
  chart: null, intraday: null, quote: null, depth: null, markers: [], markerTimes: [], markerIndexes: [], legend: null,
  colours: null, range: null, keyState: '', live: 'off',
  liveUpdates: 0, polls: 0, transport: '', badge: { upstream: '', simulated: false }, loads: 0,
};
window.__explorer = hook;

const state = {
  symbol: '', picked: false, period: '1d', adjust: 'forward', generation: 0, live: undefined, exFactors: new Map(),
  history: null, colourMode: loadColourMode(), range: null,
};
const price = createPriceChart($('price-chart'), {
  // XD labels stay below the legend, however many lines it wraps to.
  reserveTop: () => ($('legend').hidden ? 0 : $('legend').offsetTop + $('legend').offsetHeight + 2),
});
const intraday = createIntradayChart($('intraday-chart'));
let searchInfo = '';
const search = createSymbolSearch({
  input: $('symbol'), datalist: $('symbol-list'), stateNode: $('search-state'),
  report(text, error) {
    if (error === undefined) searchInfo = text;
    sayProblem('search-state', error === undefined ? '' : text, error);
  },
});
/** Where things are drawn (CSS pixels inside #price-chart), for tests that point at a bar. */
hook.probe = {
  xOf: (index) => price.xOf(index),
  yOf: (value) => price.yOf(value),
  visibleRange: () => price.visibleRange(),
  xOfTime: (time) => price.xOfTime(time),
  xdLabels: () => price.xdLabels(),
  paneSize: () => price.paneSize(),
};

// ---- problems: each cause said once, in the most prominent place that has it ---------------

/** Where problems are said, most prominent first: a cause said in one is not repeated below it. */
const PROBLEM_SLOTS = ['status', 'notice-markers', 'intraday-error', 'quote-error', 'depth-error', 'search-state'];
const problems = new Map();

/**
 * What a failure is about, whichever call met it: a vendor or network outage, a rejected key or a
 * plan's limit fails the chart, the markers, the intraday line, the quote, the depth and the names
 * alike, and is one sentence on screen, not six.
 */
function causeOf(error, text) {
  if (!(error instanceof ApiError)) return text;
  if (error.status === 0) return 'network';
  if (error.status >= 500) return 'vendor';
  if (error.status === 401) return 'key';
  if (error.status === 429) return 'rate';
  if (error.status === 403) return `plan ${describeError(error)}`;
  return text;
}

function sayProblem(slot, text, error) {
  if (text === '') problems.delete(slot);
  else problems.set(slot, { text, error, cause: causeOf(error, text) });
  const said = new Set();
  for (const name of PROBLEM_SLOTS) {
    const problem = problems.get(name);
    const shown = problem !== undefined && !said.has(problem.cause);
    if (problem !== undefined) said.add(problem.cause);
    const node = $(name);
    if (name === 'search-state') node.textContent = shown ? problem.text : searchInfo;
    else node.textContent = shown ? problem.text : '';
    if (name === 'status') node.title = shown && problem.error !== undefined ? errorTag(problem.error) : '';
  }
  hook.problems = [...problems].map(([name, p]) => ({ slot: name, cause: p.cause }));
}

const setStatus = (text, error) => sayProblem('status', text, error);
const notice = (id, text) => { $(id).textContent = text; };
const zoneOf = (symbol) => ZONES[regionOf(symbol)];

// ---- where the data came from, which symbols failed, whether the key is accepted -----------

const failed = new Map();
const missing = new Map();
/** What each route's data is called on screen. */
const ROUTE_WORDS = {
  '/v1/klines': 'candles', '/v1/klines/ex-factors': 'ex-dividend markers', '/v1/klines/intraday': 'intraday line',
  '/v1/quotes': 'quote', '/v1/depth': 'depth', '/v1/instruments': 'names',
};

function failedNotice() {
  const bySymbol = new Map();
  for (const [route, symbols] of failed) {
    for (const symbol of symbols) bySymbol.set(symbol, [...(bySymbol.get(symbol) ?? []), ROUTE_WORDS[route] ?? 'data']);
  }
  return [...bySymbol].map(([symbol, what]) => `${symbol}: vendor unavailable for the ${[...new Set(what)].join(' and ')}, try again.`).join(' ');
}

on('response', ({ path, status, reason, headers, key }) => {
  // An answer to a key no longer in use (one entered or forgotten meanwhile) says nothing of this one.
  if (key !== currentKey()) return;
  const route = path.split('?')[0];
  const upstream = headers.get('x-upstream');
  if (upstream) {
    const simulated = headers.get('x-simulated') === 'true' || upstream.split(',').includes('sim');
    hook.badge = { upstream, simulated };
    renderBadge(hook.badge);
  }
  if (status === 401 && reason === 'INVALID_API_KEY') showKeyState('rejected');
  else if (status >= 200 && status < 300 && route !== '/v1/me') showKeyState('accepted');
  if (status >= 200 && status < 300) noteRemaining(headers);
  failed.set(route, (headers.get('x-failed-symbols') ?? '').split(',').filter(Boolean));
  missing.set(route, (headers.get('x-missing-symbols') ?? '').split(',').filter(Boolean));
  const unknown = [...new Set([...missing.values()].flat())];
  notice('notice-failed', failedNotice());
  notice('notice-missing', unknown.length > 0 ? `${unknown.join(', ')}: unknown symbol${unknown.length > 1 ? 's' : ''}.` : '');
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

const KEY_STATES = {
  none: 'no key yet',
  checking: 'checking the key…',
  accepted: 'key accepted (kept in this tab only)',
  rejected: 'key rejected (401)',
  demo: 'the public demo key (local use only): paste your own to use it instead',
  free: 'no key: free tier',
};

function showKeyState(name) {
  const source = keySource();
  const next = source === 'own' ? name : source === 'none' ? 'none' : source;
  // A rejected key stays rejected until another key is entered.
  if (hook.keyState === 'rejected' && next === 'accepted') return;
  hook.keyState = next;
  const node = $('key-state');
  node.textContent = KEY_STATES[next];
  node.classList.toggle('accepted', next === 'accepted');
  node.classList.toggle('rejected', next === 'rejected');
  // A rejected key is fixed in the key box: on a phone it comes out from behind "More".
  if (next === 'rejected') {
    document.body.classList.add('controls-open');
    $('controls-toggle').setAttribute('aria-expanded', 'true');
  }
}

/** What the plan in use allows (from /v1/me, or the free tier's plan); null when unknown. */
function planFeatures() {
  const features = me()?.features ?? (keySource() === 'free' ? serverAccess().free_tier?.features : undefined);
  return Array.isArray(features) ? new Set(features) : null;
}
const planHas = (feature) => planFeatures()?.has(feature) ?? true;

/** Minute periods a plan lacks are greyed out; one quiet line says what a key would add. */
function showPlanLimits() {
  for (const option of $('period').options) option.disabled = MINUTE.has(option.value) && !planHas('klines_minute');
  const words = (list) => list.join(', ').replace(/, ([^,]*)$/, ' and $1');
  const panels = [['klines_daily', 'daily and longer bars'], ['ex_factors', 'ex-dividend markers'], ['quotes', 'quotes'], ['depth', 'depth'],
    ['intraday', 'the intraday line'], ['klines_minute', 'minute bars']];
  const has = panels.filter(([feature]) => planHas(feature)).map(([, text]) => text);
  const missing = panels.filter(([feature]) => !planHas(feature)).map(([, text]) => text);
  const plan = me()?.plan ?? serverAccess().free_tier?.plan ?? '';
  const who = keySource() === 'free' ? `No key: the free tier (plan ${plan})` : `Plan ${plan}`;
  const needs = keySource() === 'free' ? 'need a key' : 'need another plan';
  $('notice-plan').textContent = missing.length === 0 ? ''
    : `${who} includes ${has.length > 0 ? words(has) : 'none of the charts'}; ${words(missing)} ${needs}.`;
}

/** A way in: what the plan allows, the symbol list, and a chart without typing anything. */
async function start() {
  void search.load();
  const answer = await loadMe();
  if (answer === 'stale') return;
  if (answer === 'ok') showKeyState('accepted');
  // A rejected key is said beside the key box now, and at the top by the chart's own 401.
  if (answer === 'rejected') showKeyState('rejected');
  showPlanLimits();
  // Until the user picks a symbol, the default follows the plan of the key in use.
  if (!state.picked) {
    const market = me()?.markets?.find((m) => DEFAULT_SYMBOLS[m] !== undefined) ?? serverAccess().free_tier?.markets?.find((m) => DEFAULT_SYMBOLS[m] !== undefined) ?? 'CN';
    state.symbol = DEFAULT_SYMBOLS[market];
    $('symbol').value = state.symbol;
  }
  if (MINUTE.has(state.period) && !planHas('klines_minute')) {
    state.period = '1d';
    $('period').value = '1d';
  }
  await loadAll();
}

/** The key box shows the public demo key while it is the one in use (it is no secret). */
function showKeyBox() {
  const input = $('api-key');
  const demo = keySource() === 'demo' ? serverAccess().demo_key : null;
  input.type = demo === null ? 'password' : 'text';
  input.value = demo ?? '';
}
$('api-key').addEventListener('input', () => { $('api-key').type = 'password'; });

$('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = $('api-key').value.trim();
  $('api-key').value = '';
  if (key === '') return;
  keyStore.set(key);
  keyChanged();
  $('api-key').type = 'password';
  hook.keyState = '';
  showKeyState('checking');
  setStatus('');
  void start();
});

/** Another key: what the old one was answered (ex-dividend events, the chart on screen) is asked again. */
function keyChanged() {
  state.exFactors.clear();
  hook.chart = null;
}

$('key-forget').addEventListener('click', () => {
  keyStore.clear();
  keyChanged();
  state.live?.stop();
  forgetMe();
  hook.keyState = '';
  showKeyBox();
  showKeyState('none');
  showLive('off');
  if (keySource() === 'none') {
    setStatus('The key is forgotten. An API key is needed: enter one above.');
    return;
  }
  // The server's own way in takes over: the demo key or the free tier.
  void start();
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
  state.picked = true;
  void loadAll();
});

for (const id of ['period', 'adjust']) {
  $(id).addEventListener('change', () => {
    state[id] = $(id).value;
    if (state.symbol) void loadChart(state.generation);
  });
}

// ---- colours -------------------------------------------------------------------------------

function applyColours() {
  const colours = resolveColours(state.colourMode, state.symbol);
  document.body.dataset.colours = colours.scheme;
  price.setColours(colours);
  hook.colours = { mode: state.colourMode, scheme: colours.scheme, ...price.colours() };
}

$('colours').value = state.colourMode;
$('colours').addEventListener('change', () => {
  const mode = $('colours').value;
  state.colourMode = COLOUR_MODES.includes(mode) ? mode : 'auto';
  saveColourMode(state.colourMode);
  applyColours();
});

// ---- the legend ----------------------------------------------------------------------------

price.onLegend((bar, hovered) => {
  hook.legend = renderLegend(bar, { minute: MINUTE.has(hook.chart?.period ?? state.period), hovered });
});

// ---- loading -------------------------------------------------------------------------------

/** The live-updates line of the footer says what actually runs. */
const LIVE_TEXT = {
  off: 'Live updates: off (no key, or no symbol on screen).',
  plan: 'Live updates: off (the plan in use has no quotes or depth).',
  connecting: 'Live updates: connecting to the WebSocket stream (/v1/ws/stream)…',
  stream: 'Live updates: pushed over the WebSocket stream (/v1/ws/stream) as the market moves.',
  polling: 'Live updates: the WebSocket stream is unavailable, so the page asks /v1/quotes and /v1/depth every 2 s while the market is open.',
};

function showLive(name) {
  hook.live = name;
  $('live-state').textContent = LIVE_TEXT[name];
}

/** Reasons that concern the symbol or the key as a whole: the live panels would only repeat them. */
const WHOLE_FAILURES = new Set(['SYMBOL_NOT_FOUND', 'INVALID_SYMBOL', 'INVALID_API_KEY', 'MISSING_API_KEY']);

async function loadAll() {
  if (keySource() === 'none') {
    setStatus('An API key is needed: enter your key above (it is kept in this tab only).');
    return;
  }
  state.generation += 1;
  const generation = state.generation;
  state.live?.stop();
  setStatus('');
  for (const slot of ['notice-markers', 'intraday-error', 'quote-error', 'depth-error']) sayProblem(slot, '');
  clearQuote('');
  clearDepth('');
  hook.quote = null;
  hook.depth = null;
  hook.quoteError = null;
  hook.depthError = null;
  await Promise.all([loadChart(generation), loadIntraday(generation)]);
  if (generation !== state.generation) return;
  if (WHOLE_FAILURES.has(hook.chart?.error)) {
    // One plain sentence at the top is enough: no panel repeats it.
    if (hook.intraday?.error !== undefined) sayProblem('intraday-error', `No intraday line for ${state.symbol}.`);
    showLive('off');
    return;
  }
  if (!planHas('quotes') && !planHas('depth')) {
    showLive('plan');
    return;
  }
  startLive(generation);
}

async function exFactorsOf(symbol) {
  if (state.exFactors.has(symbol)) return state.exFactors.get(symbol);
  // A plan without ex-factors draws no markers; the plan's line says so.
  if (!planHas('ex_factors')) return [];
  try {
    const { data } = await api(`/v1/klines/ex-factors?symbols=${encodeURIComponent(symbol)}`);
    const events = data?.[symbol] ?? [];
    state.exFactors.set(symbol, events);
    sayProblem('notice-markers', '');
    return events;
  } catch (error) {
    if (WHOLE_FAILURES.has(error.reason)) return [];
    sayProblem('notice-markers', `Ex-dividend markers unavailable: ${describeError(error, { symbol })}`, error);
    return [];
  }
}

/** The hook's view of the chart, from what the chart series hold. */
function chartHook(extra = {}) {
  const { symbol, period, adjust } = state.history.params;
  const bars = price.bars();
  const indexes = bars.flatMap((b, i) => (b.xd === undefined ? [] : [i]));
  hook.markers = indexes.map((i) => markerText(bars[i].xd.count, bars[i].xd.factor));
  hook.markerTimes = indexes.map((i) => bars[i].time);
  hook.markerIndexes = indexes;
  hook.chart = {
    symbol, period, adjust,
    count: bars.length,
    lastClose: bars.at(-1)?.close ?? null,
    lastTime: bars.at(-1)?.timestamp ?? null,
    firstTime: bars[0]?.timestamp ?? null,
    closes: bars.map((b) => b.close),
    timestamps: bars.map((b) => b.timestamp),
    openInterest: price.openInterest(),
    pages: state.history.pages,
    exhausted: state.history.exhausted,
    nextEndTime: state.history.nextEndTime ?? null,
    ...extra,
  };
}

function resetRange() {
  state.range = null;
  hook.range = null;
  for (const button of $('ranges').querySelectorAll('button')) button.setAttribute('aria-pressed', 'false');
}

async function loadChart(generation) {
  const { symbol, period, adjust } = state;
  const params = { symbol, period, adjust };
  const query = new URLSearchParams({ ...params, count: String(CANDLE_COUNT) });
  resetRange();
  $('chart-note').textContent = '';
  $('price-empty').textContent = `Loading ${symbol}…`;
  try {
    const [first, events] = await Promise.all([api(`/v1/klines?${query}`), exFactorsOf(symbol)]);
    if (generation !== state.generation || period !== state.period || adjust !== state.adjust) return;
    state.history = new History(params, first, (older) => api(`/v1/klines?${older}`), { periodStart: periodStartOf(period, zoneOf(symbol)) });
    $('chart-title').textContent = `${symbol} ${search.nameOf(symbol) ?? ''} · ${period} · ${adjust}`;
    applyColours();
    price.show(zoneOf(symbol), state.history.data, events, MINUTE.has(period));
    chartHook();
    hook.loads += 1;
    setStatus('');
  } catch (error) {
    if (generation !== state.generation) return;
    // Nothing of the previous chart stays: no bars, no axes, no title, no legend.
    state.history = null;
    price.clear();
    $('chart-title').textContent = 'Candles';
    const text = describeError(error, { symbol });
    $('price-empty').textContent = `No chart for ${symbol}.`;
    hook.markers = [];
    hook.markerTimes = [];
    hook.markerIndexes = [];
    hook.chart = { symbol, period, adjust, count: 0, lastClose: null, lastTime: null, closes: [], error: error.reason ?? String(error), status: error.status, message: text };
    hook.loads += 1;
    setStatus(text, error);
  }
}

/** One older page in front of the chart; resolves with the number of bars added. */
async function loadOlder(count) {
  const history = state.history;
  if (history === null || history.exhausted) return 0;
  const generation = state.generation;
  const { symbol } = history.params;
  $('chart-note').textContent = 'Loading older bars…';
  try {
    const older = await history.older(count);
    if (history !== state.history || generation !== state.generation) return 0;
    const { added } = price.prepend(zoneOf(symbol), older);
    chartHook();
    $('chart-note').textContent = history.exhausted ? `Start of the history: the first bar is ${new Date(history.firstTimestamp ?? 0).toISOString().slice(0, 10)}.` : '';
    return added;
  } catch (error) {
    if (history === state.history) $('chart-note').textContent = `Older bars unavailable: ${describeError(error, { symbol })}`;
    return 0;
  }
}

price.onLeftEdge(() => {
  if (state.history !== null && state.history.pending === undefined && !state.history.exhausted) void loadOlder(OLDER_PAGE);
});

/** A range button: load enough history for it (at most MAX_BARS bars), then show it. */
async function showRange(name) {
  const history = state.history;
  if (history === null || history.count === 0) return;
  state.range = name;
  for (const button of $('ranges').querySelectorAll('button')) button.setAttribute('aria-pressed', String(button.dataset.range === name));
  const months = RANGE_MONTHS[name];
  const lastTime = price.bars().at(-1).time;
  const from = months === Infinity ? -Infinity : monthsBefore(lastTime, months);
  while (history === state.history && !history.exhausted && price.bars()[0].time > from && history.count < MAX_BARS) {
    const wanted = months === Infinity ? 5000 : barsToCover(history.params.period, price.bars()[0].time - from);
    const added = await loadOlder(Math.min(wanted, MAX_BARS - history.count));
    if (added === 0 && !history.exhausted) break; // a failed page: its note is on screen
  }
  if (history !== state.history || state.range !== name) return;
  if (months === Infinity) price.fitAll();
  else price.setRange(from, lastTime);
  if (history.count >= MAX_BARS && !history.exhausted && price.bars()[0].time > from) {
    $('chart-note').textContent = `Showing the newest ${MAX_BARS.toLocaleString('en-US')} bars; choose a longer period for more.`;
  }
  hook.range = { name, from: Number.isFinite(from) ? from : null, to: lastTime, loaded: history.count };
}

for (const button of $('ranges').querySelectorAll('button')) {
  button.addEventListener('click', () => void showRange(button.dataset.range));
}

async function loadIntraday(generation) {
  const symbol = state.symbol;
  if (!planHas('intraday')) {
    intraday.clear();
    hook.intraday = { symbol, count: 0, error: 'FEATURE_NOT_PERMITTED' };
    return;
  }
  try {
    const { data } = await api(`/v1/klines/intraday?symbol=${encodeURIComponent(symbol)}`);
    if (generation !== state.generation) return;
    const points = intraday.show(zoneOf(symbol), data);
    hook.intraday = { symbol, count: points.length, lastClose: data.close.at(-1) ?? null };
    sayProblem('intraday-error', '');
  } catch (error) {
    if (generation !== state.generation) return;
    intraday.clear();
    hook.intraday = { symbol, count: 0, error: error.reason ?? String(error) };
    sayProblem('intraday-error', describeError(error, { symbol }), error);
  }
}

/** Fold a live price into the newest candle when it belongs to it and the adjustment keeps traded prices. */
function foldIntoChart(quote) {
  const chart = hook.chart;
  if (chart === null || chart.count === 0 || typeof chart.lastTime !== 'number' || chart.symbol !== quote.symbol) return;
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
  showLive('connecting');
  state.live = startTransport(symbol, {
    onTransport(name) {
      if (generation !== state.generation) return;
      hook.transport = name;
      showLive(name);
    },
    onQuote(quote) {
      if (generation !== state.generation) return;
      hook.polls += 1;
      if (hook.quote !== null && hook.quote.timestamp !== quote.timestamp) hook.liveUpdates += 1;
      hook.quote = quote;
      renderQuote(quote);
      sayProblem('quote-error', '');
      foldIntoChart(quote);
      intraday.update(zoneOf(symbol), quote.timestamp, quote.last_price);
    },
    onDepth(depth) {
      if (generation !== state.generation) return;
      hook.depth = depth;
      renderDepth(depth, hook.quote?.symbol === symbol ? hook.quote.prev_close : undefined);
      sayProblem('depth-error', '');
    },
    onError(kind, error) {
      if (generation !== state.generation) return;
      if (kind === 'quote') clearQuote('');
      else clearDepth('');
      sayProblem(`${kind}-error`, describeError(error, { symbol }), error);
      hook[`${kind}Error`] = error.reason ?? String(error);
    },
  });
}

// ---- the phone layout: the chart first, the settings behind one button ---------------------

$('controls-toggle').addEventListener('click', () => {
  const open = !document.body.classList.contains('controls-open');
  document.body.classList.toggle('controls-open', open);
  $('controls-toggle').setAttribute('aria-expanded', String(open));
});

// ---- opening: a chart straight away when the server offers a way in ------------------------

async function boot() {
  applyColours();
  void showMeta();
  await loadAccess();
  showKeyBox();
  hook.access = keySource();
  if (keySource() === 'none') {
    showKeyState('none');
    // Nothing works without a key: the settings (with the key box) stay open on a phone too.
    document.body.classList.add('controls-open');
    $('controls-toggle').setAttribute('aria-expanded', 'true');
    $('price-empty').textContent = 'No chart yet: enter a key above.';
    setStatus('An API key is needed: enter your key above (it is kept in this tab only, and sent only in the X-API-Key header).');
    return;
  }
  showKeyState(keySource() === 'own' ? 'checking' : keySource());
  await start();
}
void boot();
