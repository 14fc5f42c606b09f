// Candlesticks with a volume pane and ex-dividend markers, plus today's intraday line, drawn with
// TradingView lightweight-charts (served from node_modules by the service itself).
import {
  CandlestickSeries, ColorType, HistogramSeries, LineSeries, createChart, createSeriesMarkers,
} from '/explorer/vendor/lightweight-charts.mjs';
import { chartTime } from './format.js';
import { exDividendMarkers } from './markers.js';
import { GREEN, RED } from './prefs.js';

/** The page's own font stack (CJK fallbacks included) for the axes and markers too. */
const fontFamily = () => getComputedStyle(document.documentElement).fontFamily;

/** The chart's text size (lightweight-charts' layout.fontSize default): marker labels are drawn in it. */
export const LABEL_FONT_PX = 12;
/** Room kept between two XD labels, and between a label and what is drawn under it, CSS px. */
const LABEL_GAP = 8;
const LABEL_CLEARANCE = 2;

let measurer;
/** A label's drawn width, measured in the font the chart draws it with. */
function labelWidth(text) {
  measurer ??= document.createElement('canvas').getContext('2d');
  measurer.font = `${LABEL_FONT_PX}px ${fontFamily()}`;
  return measurer.measureText(text).width;
}

// lightweight-charts' marker geometry (series-markers: size(), shapeMargin()): an arrow above a bar
// takes its margin and its height above the bar's high.
const ceiledOdd = (x) => { const c = Math.ceil(x); return c % 2 === 0 ? c - 1 : c; };
const ceiledEven = (x) => { const c = Math.ceil(x); return c % 2 === 0 ? c : c - 1; };
const markerSize = (barSpacing, coeff) => ceiledOdd(Math.min(Math.max(barSpacing, 12), 30) * coeff);
const arrowReach = (barSpacing) => Math.max(markerSize(barSpacing, 0.1), 3) + ceiledEven(markerSize(barSpacing, 1));

const baseOptions = (height) => ({
  height,
  autoSize: true,
  // The logo injects an inline <style> (blocked by our CSP) and links out with the page's address;
  // the footer credits TradingView instead.
  layout: { attributionLogo: false, background: { type: ColorType.Solid, color: '#ffffff' }, textColor: '#1f2933', fontFamily: fontFamily() },
  grid: { vertLines: { color: '#eef1f4' }, horzLines: { color: '#eef1f4' } },
  rightPriceScale: { borderColor: '#d5dbe1' },
  timeScale: { borderColor: '#d5dbe1', timeVisible: true, secondsVisible: false },
});

/** Bars of a columnar answer in chart time; `prevClose` is the close before each bar (for change %). */
function barsOf(zone, data) {
  return data.timestamp.map((ts, i) => ({
    time: chartTime(zone, ts),
    timestamp: ts,
    open: data.open[i],
    high: data.high[i],
    low: data.low[i],
    close: data.close[i],
    volume: data.volume[i],
    // Futures: contracts open at the bar's end (drawn as a line over the volume pane).
    openInterest: typeof data.open_interest?.[i] === 'number' ? data.open_interest[i] : null,
    // The answer's prev_close (same adjustment); without it, the bar before.
    prevClose: typeof data.prev_close?.[i] === 'number' ? data.prev_close[i] : (i > 0 ? data.close[i - 1] : null),
  }));
}

/** `reserveTop()`: CSS px at the top of the chart that labels keep clear of (the legend drawn over it). */
export function createPriceChart(container, { reserveTop = () => 0 } = {}) {
  const chart = createChart(container, baseOptions(420));
  const candles = chart.addSeries(CandlestickSeries, {});
  // Room above the highest candle for the legend.
  candles.priceScale().applyOptions({ scaleMargins: { top: 0.14, bottom: 0.06 } });
  const volume = chart.addSeries(HistogramSeries, { priceFormat: { type: 'volume' }, priceLineVisible: false }, 1);
  // A futures contract's open interest under the candles, on its own scale beside the volume.
  const openInterest = chart.addSeries(LineSeries, {
    color: '#8e44ad', lineWidth: 1, priceScaleId: 'left', priceFormat: { type: 'volume' }, priceLineVisible: false, lastValueVisible: false,
  }, 1);
  const openInterestOf = () => bars.filter((b) => b.openInterest !== null).map((b) => ({ time: b.time, value: b.openInterest }));
  // Markers do not widen the price scale: label heights follow the scale, so the scale must not follow them.
  const markerPlugin = createSeriesMarkers(candles, [], { autoScale: false });
  const panes = chart.panes();
  if (panes[1] !== undefined) panes[1].setHeight(110);
  let bars = [];
  let events = [];
  let placed = [];
  let colours = { up: RED, down: GREEN };
  let legendListener = () => {};
  let leftEdgeListener = () => {};
  let userMoved = false;

  const volumeOf = (bar) => ({ time: bar.time, value: bar.volume, color: `${bar.close >= bar.open ? colours.up : colours.down}80` });

  function paint() {
    candles.applyOptions({
      upColor: colours.up, downColor: colours.down, borderUpColor: colours.up, borderDownColor: colours.down,
      wickUpColor: colours.up, wickDownColor: colours.down,
    });
    candles.setData(bars.map(({ time, open, high, low, close }) => ({ time, open, high, low, close })));
    volume.setData(bars.map(volumeOf));
    const interest = openInterestOf();
    openInterest.setData(interest);
    chart.applyOptions({ leftPriceScale: { visible: interest.length > 0 } });
    placed = exDividendMarkers(bars, events);
    labelMarkers();
    relabelSoon();
  }

  /**
   * Every marker keeps its arrow; its label is drawn only where it has room. Labels are placed
   * newest first: one that would run into a label already placed (a weekly chart over five years
   * has a marker every few bars) or leave the chart is left out, and the legend names the events
   * of any bar under the cursor. A label is a text-only marker set just above the highest candle
   * or arrow under its whole width, so it never sits on a neighbour's candle or arrow either.
   */
  let labelled = '';
  let labels = [];
  function labelMarkers() {
    const timeScale = chart.timeScale();
    const width = timeScale.width();
    const reach = arrowReach(timeScale.options().barSpacing);
    const textOffset = LABEL_FONT_PX * 1.1; // lightweight-charts draws the text 0.6 em above its price, centred
    const ceiling = Math.max(LABEL_FONT_PX / 2, reserveTop());
    labels = [];
    let leftmost = Infinity;
    for (let k = placed.length - 1; k >= 0; k -= 1) {
      const marker = placed[k];
      const x = timeScale.timeToCoordinate(marker.time);
      if (x === null) continue;
      const half = labelWidth(marker.text) / 2;
      const left = x - half;
      const right = x + half;
      if (left < 0 || right > width || right > leftmost - LABEL_GAP) continue;
      // The highest thing drawn under the label: candle highs, and the arrows of marked bars.
      const from = Math.max(0, Math.floor(timeScale.coordinateToLogical(left - LABEL_CLEARANCE) ?? 0));
      const to = Math.min(bars.length - 1, Math.ceil(timeScale.coordinateToLogical(right + LABEL_CLEARANCE) ?? bars.length - 1));
      let top = Infinity;
      for (let i = from; i <= to; i += 1) {
        const y = candles.priceToCoordinate(bars[i].high);
        if (y !== null) top = Math.min(top, bars[i].xd === undefined ? y : y - reach);
      }
      // The label's baseline price: its box ends LABEL_CLEARANCE px above that; room for it below the legend.
      const base = top - LABEL_CLEARANCE + LABEL_FONT_PX * 0.1;
      if (!Number.isFinite(top) || base - textOffset < ceiling) continue;
      const price = candles.coordinateToPrice(base);
      if (price === null) continue;
      leftmost = left;
      labels.push({ time: marker.time, position: 'atPriceTop', price, shape: 'arrowDown', size: 0, color: marker.color, text: marker.text });
    }
    const arrows = placed.map((m) => ({ ...m, text: '' }));
    // Series markers go in time order; a label follows its bar's arrow.
    const shown = [...arrows, ...labels].sort((a, b) => a.time - b.time || a.text.length - b.text.length);
    const key = shown.map((m) => `${m.time}:${m.text}:${m.price?.toPrecision(6) ?? ''}`).join('|');
    if (key === labelled && shown.length > 0) return;
    labelled = key;
    markerPlugin.setMarkers(shown);
  }
  /** Labels are placed from the chart's coordinates: after it has drawn a change, not before. */
  let relabelPending = false;
  function relabelSoon() {
    if (relabelPending || placed.length === 0) return;
    relabelPending = true;
    requestAnimationFrame(() => requestAnimationFrame(() => {
      relabelPending = false;
      labelMarkers();
    }));
  }

  const barAt = (time) => {
    // Bars are in time order: a binary search for the bar at this chart time.
    let lo = 0;
    let hi = bars.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (bars[mid].time === time) return mid;
      if (bars[mid].time < time) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  };

  // The legend follows the crosshair and falls back to the newest bar when the cursor leaves.
  chart.subscribeCrosshairMove((param) => {
    const index = param.time === undefined || param.point === undefined ? -1 : barAt(param.time);
    legendListener(index >= 0 ? bars[index] : bars.at(-1) ?? null, index >= 0);
  });

  // Older history is loaded once the user (not the page itself) brings the left edge into view.
  for (const type of ['pointerdown', 'wheel', 'touchstart', 'keydown']) {
    container.addEventListener(type, () => { userMoved = true; }, { passive: true });
  }
  chart.timeScale().subscribeSizeChange(relabelSoon);
  chart.timeScale().subscribeVisibleLogicalRangeChange((range) => {
    relabelSoon();
    if (range !== null && userMoved && bars.length > 0 && range.from < 10) leftEdgeListener();
  });

  return {
    /** Replace everything; returns what was handed to the series (for the test hook). */
    show(zone, data, exFactors, minute) {
      container.classList.remove('blank');
      chart.applyOptions({ timeScale: { timeVisible: minute } });
      bars = barsOf(zone, data);
      events = exFactors ?? [];
      userMoved = false;
      paint();
      chart.timeScale().fitContent();
      relabelSoon();
      legendListener(bars.at(-1) ?? null, false);
      return { bars, markers: placed };
    },
    /** Older bars in front of the loaded ones; the bars on screen stay where they are. */
    prepend(zone, older) {
      if (older.timestamp.length === 0) return { bars, markers: placed, added: 0 };
      const added = barsOf(zone, older);
      if (bars.length > 0 && bars[0].prevClose === null) bars[0] = { ...bars[0], prevClose: added.at(-1).close };
      const range = chart.timeScale().getVisibleLogicalRange();
      bars = [...added, ...bars];
      paint();
      if (range !== null) chart.timeScale().setVisibleLogicalRange({ from: range.from + added.length, to: range.to + added.length });
      return { bars, markers: placed, added: added.length };
    },
    setColours(next) {
      colours = next;
      paint();
      legendListener(bars.at(-1) ?? null, false);
    },
    colours: () => {
      const o = candles.options();
      return { up: o.upColor, down: o.downColor, wickUp: o.wickUpColor, wickDown: o.wickDownColor };
    },
    /** Fold a live price into the newest bar (it is the partial current bar during a session). */
    updateLast(price) {
      const last = bars.at(-1);
      if (last === undefined || typeof price !== 'number') return;
      const next = { ...last, close: price, high: Math.max(last.high, price), low: Math.min(last.low, price) };
      bars[bars.length - 1] = next;
      candles.update({ time: next.time, open: next.open, high: next.high, low: next.low, close: next.close });
      volume.update(volumeOf(next));
      // A new high can move the price scale: labels follow it.
      relabelSoon();
    },
    /** Show [from, to] (chart-time seconds); `to` defaults to the newest bar. */
    setRange(from, to = bars.at(-1)?.time) {
      if (bars.length === 0 || to === undefined) return;
      chart.timeScale().setVisibleRange({ from: Math.max(from, bars[0].time), to });
    },
    fitAll() {
      chart.timeScale().fitContent();
    },
    visibleRange() {
      const range = chart.timeScale().getVisibleRange();
      return range === null ? null : { from: range.from, to: range.to };
    },
    /** Where chart time `time` is drawn, in CSS pixels from the chart's left edge (or null). */
    xOfTime(time) {
      return chart.timeScale().timeToCoordinate(time);
    },
    /** The price pane's drawing area, CSS px: labels and candles live inside it. */
    paneSize() {
      return { width: chart.timeScale().width(), height: chart.panes()[0]?.getHeight() ?? null };
    },
    /** Where the bar at `index` is drawn, in CSS pixels from the chart's left edge (or null). */
    xOf(index) {
      const bar = bars[index];
      return bar === undefined ? null : chart.timeScale().timeToCoordinate(bar.time);
    },
    /** Where a price is drawn, in CSS pixels from the chart's top edge (or null). */
    yOf(value) {
      return candles.priceToCoordinate(value);
    },
    bars: () => bars,
    /** The open-interest points drawn now (futures; empty otherwise), for tests. */
    openInterest: () => openInterest.data().map((p) => p.value),
    /** The XD labels drawn now: the text-only markers handed to the chart (for tests). */
    xdLabels: () => markerPlugin.markers().filter((m) => m.text !== '').map((m) => ({ time: m.time, price: m.price, text: m.text })),
    onLegend(listener) {
      legendListener = listener;
    },
    onLeftEdge(listener) {
      leftEdgeListener = listener;
    },
    /** No data, no axes, no markers: the chart area is blank until the next symbol loads. */
    clear() {
      bars = [];
      events = [];
      placed = [];
      candles.setData([]);
      volume.setData([]);
      openInterest.setData([]);
      markerPlugin.setMarkers([]);
      labelled = '';
      labels = [];
      container.classList.add('blank');
      legendListener(null, false);
    },
  };
}

export function createIntradayChart(container) {
  const chart = createChart(container, baseOptions(180));
  const line = chart.addSeries(LineSeries, { color: '#2962ff', lineWidth: 2 });
  let points = [];
  return {
    show(zone, data) {
      container.classList.remove('blank');
      points = data.timestamp.map((ts, i) => ({ time: chartTime(zone, ts), value: data.close[i] }));
      line.setData(points);
      chart.timeScale().fitContent();
      return points;
    },
    /** A live price at the end of its minute (bars are labelled by their end). */
    update(zone, timestampMs, price) {
      if (typeof price !== 'number') return;
      const minuteEnd = Math.ceil(timestampMs / 60_000) * 60_000;
      const time = chartTime(zone, minuteEnd);
      const last = points.at(-1);
      if (last !== undefined && time < last.time) return;
      const point = { time, value: price };
      if (last !== undefined && last.time === time) points[points.length - 1] = point;
      else points.push(point);
      line.update(point);
    },
    clear() {
      points = [];
      line.setData([]);
      container.classList.add('blank');
    },
  };
}
