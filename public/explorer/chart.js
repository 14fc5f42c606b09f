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
    // The answer's prev_close (same adjustment); without it, the bar before.
    prevClose: typeof data.prev_close?.[i] === 'number' ? data.prev_close[i] : (i > 0 ? data.close[i - 1] : null),
  }));
}

export function createPriceChart(container) {
  const chart = createChart(container, baseOptions(420));
  const candles = chart.addSeries(CandlestickSeries, {});
  // Room above the highest candle for the legend.
  candles.priceScale().applyOptions({ scaleMargins: { top: 0.14, bottom: 0.06 } });
  const volume = chart.addSeries(HistogramSeries, { priceFormat: { type: 'volume' }, priceLineVisible: false }, 1);
  const markerPlugin = createSeriesMarkers(candles, []);
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
    placed = exDividendMarkers(bars, events);
    labelMarkers();
  }

  /**
   * Every marker keeps its arrow; its text is drawn only where it does not run into the previous
   * label (a quarterly chart of 25 years has a marker on nearly every bar). The legend names the
   * events of any bar under the cursor.
   */
  let labelled = '';
  function labelMarkers() {
    const shown = [];
    const width = chart.timeScale().width();
    let lastRight = 0;
    for (const marker of placed) {
      const x = chart.timeScale().timeToCoordinate(marker.time);
      const half = (marker.text.length * 7.5) / 2;
      const fits = x !== null && x - half >= lastRight + 14 && x + half <= width;
      if (fits) lastRight = x + half;
      shown.push(fits ? marker : { ...marker, text: '' });
    }
    const key = shown.map((m) => `${m.time}:${m.text}`).join('|');
    if (key === labelled && shown.length > 0) return;
    labelled = key;
    markerPlugin.setMarkers(shown);
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
  chart.timeScale().subscribeSizeChange(() => {
    if (placed.length > 0) requestAnimationFrame(labelMarkers);
  });
  chart.timeScale().subscribeVisibleLogicalRangeChange((range) => {
    if (placed.length > 0) requestAnimationFrame(labelMarkers);
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
      labelMarkers();
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
      markerPlugin.setMarkers([]);
      labelled = '';
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
