// Candlesticks with a volume pane and ex-dividend markers, plus today's intraday line, drawn with
// TradingView lightweight-charts (served from node_modules by the service itself).
import {
  CandlestickSeries, ColorType, HistogramSeries, LineSeries, createChart, createSeriesMarkers,
} from '/explorer/vendor/lightweight-charts.mjs';
import { chartTime } from './format.js';

const UP = '#26a69a';
const DOWN = '#ef5350';

const baseOptions = (height) => ({
  height,
  autoSize: true,
  // The logo injects an inline <style> (blocked by our CSP) and links out with the page's address;
  // the footer credits TradingView instead.
  layout: { attributionLogo: false, background: { type: ColorType.Solid, color: '#ffffff' }, textColor: '#1f2933' },
  grid: { vertLines: { color: '#eef1f4' }, horzLines: { color: '#eef1f4' } },
  rightPriceScale: { borderColor: '#d5dbe1' },
  timeScale: { borderColor: '#d5dbe1', timeVisible: true, secondsVisible: false },
});

export function createPriceChart(container) {
  const chart = createChart(container, baseOptions(420));
  const candles = chart.addSeries(CandlestickSeries, {
    upColor: UP, downColor: DOWN, borderUpColor: UP, borderDownColor: DOWN, wickUpColor: UP, wickDownColor: DOWN,
  });
  const volume = chart.addSeries(HistogramSeries, { priceFormat: { type: 'volume' }, priceLineVisible: false }, 1);
  const markers = createSeriesMarkers(candles, []);
  const panes = chart.panes();
  if (panes[1] !== undefined) panes[1].setHeight(110);
  let bars = [];

  return {
    /** Replace everything; returns what was handed to the series (for the test hook). */
    show(zone, data, exFactors, minute) {
      chart.applyOptions({ timeScale: { timeVisible: minute } });
      bars = data.timestamp.map((ts, i) => ({
        time: chartTime(zone, ts), open: data.open[i], high: data.high[i], low: data.low[i], close: data.close[i],
      }));
      candles.setData(bars);
      volume.setData(data.timestamp.map((ts, i) => ({
        time: bars[i].time, value: data.volume[i], color: data.close[i] >= data.open[i] ? `${UP}80` : `${DOWN}80`,
      })));
      const placed = exDividendMarkers(zone, data.timestamp, bars, exFactors);
      markers.setMarkers(placed);
      chart.timeScale().fitContent();
      return { bars, markers: placed };
    },
    /** Fold a live price into the newest bar (it is the partial current bar during a session). */
    updateLast(price) {
      const last = bars.at(-1);
      if (last === undefined || typeof price !== 'number') return;
      const next = { ...last, close: price, high: Math.max(last.high, price), low: Math.min(last.low, price) };
      bars[bars.length - 1] = next;
      candles.update(next);
    },
    clear() {
      bars = [];
      candles.setData([]);
      volume.setData([]);
      markers.setMarkers([]);
    },
  };
}

/** A marker on the first bar on or after each ex-date inside the shown range. */
function exDividendMarkers(zone, timestamps, bars, events) {
  if (timestamps.length === 0) return [];
  const first = timestamps[0];
  const last = timestamps.at(-1);
  const out = [];
  for (const event of events ?? []) {
    if (event.timestamp < first || event.timestamp > last) continue;
    const index = timestamps.findIndex((ts) => ts >= event.timestamp);
    if (index < 0) continue;
    out.push({
      time: bars[index].time,
      position: 'aboveBar',
      shape: 'arrowDown',
      color: '#6b46c1',
      text: `XD ×${event.ex_factor.toFixed(4)}`,
    });
  }
  return out;
}

export function createIntradayChart(container) {
  const chart = createChart(container, baseOptions(180));
  const line = chart.addSeries(LineSeries, { color: '#2962ff', lineWidth: 2 });
  let points = [];
  return {
    show(zone, data) {
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
    },
  };
}
