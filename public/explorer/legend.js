// The legend over the price chart: open, high, low, close, volume and change % of the bar under
// the crosshair, or of the newest bar while the cursor is elsewhere; ex-dividend events of that bar.
import { formatPrice, formatVolumeShort } from './format.js';
import { markerText } from './markers.js';

const $ = (id) => document.getElementById(id);

/** Exchange-time label of a chart-time bar: a date, or a date and minute for intraday periods. */
export function barLabel(time, minute) {
  const iso = new Date(time * 1000).toISOString();
  return minute ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : iso.slice(0, 10);
}

/** The change of a bar against the close before it, as a fraction (null when unknown). */
export function changeOf(bar) {
  if (typeof bar.prevClose !== 'number' || bar.prevClose === 0) return null;
  return bar.close / bar.prevClose - 1;
}

/** Render one bar (or nothing) into the legend; returns what is shown, for the test hook. */
export function renderLegend(bar, { minute, hovered }) {
  const root = $('legend');
  if (bar === null) {
    root.hidden = true;
    return null;
  }
  root.hidden = false;
  const change = changeOf(bar);
  const direction = change === null || change === 0 ? 0 : Math.sign(change);
  const shown = {
    time: barLabel(bar.time, minute),
    timestamp: bar.timestamp,
    hovered,
    open: formatPrice(bar.open),
    high: formatPrice(bar.high),
    low: formatPrice(bar.low),
    close: formatPrice(bar.close),
    volume: formatVolumeShort(bar.volume),
    change: change === null ? '–' : `${change > 0 ? '+' : ''}${(change * 100).toFixed(2)}%`,
    xd: bar.xd === undefined ? '' : markerText(bar.xd.count, bar.xd.factor),
  };
  $('legend-time').textContent = shown.time;
  for (const field of ['open', 'high', 'low', 'close', 'volume', 'change']) $(`legend-${field}`).textContent = shown[field];
  $('legend-xd').textContent = shown.xd;
  for (const id of ['legend-close', 'legend-change']) {
    $(id).classList.toggle('up', direction > 0);
    $(id).classList.toggle('down', direction < 0);
  }
  root.dataset.hovered = String(hovered);
  return shown;
}
