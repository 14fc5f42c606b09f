// The quote panel, the five-level depth ladder and the data-source badge: plain DOM, text only
// (textContent everywhere, so nothing from the API is ever parsed as HTML).
import { SESSION_LABELS, ZONES, formatInZone, formatPct, formatPrice, formatSigned, formatVolume, regionOf } from './format.js';

const $ = (id) => document.getElementById(id);

function setText(id, text) {
  const node = $(id);
  if (node !== null) node.textContent = text;
}

function setDirection(node, value) {
  node.classList.toggle('up', value > 0);
  node.classList.toggle('down', value < 0);
}

export function renderQuote(quote) {
  const zone = ZONES[quote.region] ?? ZONES[regionOf(quote.symbol)];
  setText('quote-symbol', quote.symbol);
  setText('quote-name', quote.ext?.name ?? '');
  setText('quote-last', formatPrice(quote.last_price));
  setText('quote-change', formatSigned(quote.ext?.change_amount, 2));
  setText('quote-change-pct', formatPct(quote.ext?.change_pct));
  setText('quote-session', SESSION_LABELS[quote.session] ?? quote.session ?? 'unknown');
  setText('quote-time', `${formatInZone(zone, quote.timestamp)} ${zone}`);
  setText('quote-open', formatPrice(quote.open));
  setText('quote-high', formatPrice(quote.high));
  setText('quote-low', formatPrice(quote.low));
  setText('quote-prev-close', formatPrice(quote.prev_close));
  setText('quote-volume', formatVolume(quote.volume));
  for (const id of ['quote-last', 'quote-change', 'quote-change-pct']) setDirection($(id), quote.ext?.change_amount ?? 0);
  setText('quote-error', '');
}

export function clearQuote(message) {
  for (const id of ['quote-symbol', 'quote-name', 'quote-last', 'quote-change', 'quote-change-pct', 'quote-session', 'quote-time',
    'quote-open', 'quote-high', 'quote-low', 'quote-prev-close', 'quote-volume']) setText(id, '–');
  for (const id of ['quote-last', 'quote-change', 'quote-change-pct']) setDirection($(id), 0);
  setText('quote-error', message ?? '');
}

/**
 * Asks on top (level 5 down to 1), then bids (level 1 down to 5); empty levels stay blank. Prices
 * above the previous close take the up colour and those below it the down colour, as a ladder
 * on an exchange terminal does.
 */
export function renderDepth(depth, prevClose) {
  const body = $('depth-rows');
  const rows = [];
  for (let level = 5; level >= 1; level -= 1) {
    rows.push(row('ask', level, depth.ask_prices[level - 1], depth.ask_volumes[level - 1], prevClose));
  }
  for (let level = 1; level <= 5; level += 1) {
    rows.push(row('bid', level, depth.bid_prices[level - 1], depth.bid_volumes[level - 1], prevClose));
  }
  body.replaceChildren(...rows);
  setText('depth-error', '');
}

function row(side, level, price, volume, prevClose) {
  const tr = document.createElement('tr');
  tr.className = side;
  tr.dataset.side = side;
  tr.dataset.level = String(level);
  const label = document.createElement('th');
  label.scope = 'row';
  label.textContent = `${side === 'ask' ? 'Ask' : 'Bid'} ${level}`;
  const priceCell = document.createElement('td');
  priceCell.className = 'price';
  priceCell.textContent = price === undefined ? '' : formatPrice(price);
  if (typeof price === 'number' && typeof prevClose === 'number') setDirection(priceCell, price - prevClose);
  const volumeCell = document.createElement('td');
  volumeCell.className = 'volume';
  volumeCell.textContent = volume === undefined ? '' : formatVolume(volume);
  tr.append(label, priceCell, volumeCell);
  return tr;
}

export function clearDepth(message) {
  $('depth-rows').replaceChildren();
  setText('depth-error', message ?? '');
}

/** Where the data came from: the newest X-Upstream, and "simulated" whenever it is. */
export function renderBadge({ upstream, simulated }) {
  const badge = $('source-badge');
  badge.textContent = `Data: ${upstream || 'unknown'}${simulated ? ' · SIMULATED (not real market data)' : ''}`;
  badge.classList.toggle('simulated', simulated);
  badge.dataset.upstream = upstream || '';
  badge.dataset.simulated = String(simulated);
}
