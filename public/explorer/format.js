// Exchange time zones and number formatting for the panels and the chart.

export const ZONES = { CN: 'Asia/Shanghai', HK: 'Asia/Hong_Kong', US: 'America/New_York' };

/** Region of a symbol from its exchange suffix (docs/contract.md#symbols-regions-pools). */
export function regionOf(symbol) {
  const exchange = symbol.slice(symbol.lastIndexOf('.') + 1).toUpperCase();
  if (exchange === 'HK') return 'HK';
  if (exchange === 'US') return 'US';
  return 'CN';
}

const partFormatters = new Map();
function partsIn(zone, ms) {
  let formatter = partFormatters.get(zone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    partFormatters.set(zone, formatter);
  }
  const parts = {};
  for (const { type, value } of formatter.formatToParts(new Date(ms))) parts[type] = value;
  return parts;
}

/** The zone's UTC offset at that instant, ms. */
export function zoneOffsetMs(zone, ms) {
  const p = partsIn(zone, ms);
  const wall = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
  return wall - Math.floor(ms / 1000) * 1000;
}

/** Seconds whose UTC reading is the exchange's wall clock: the chart then labels bars in exchange time. */
export function chartTime(zone, ms) {
  return Math.round((ms + zoneOffsetMs(zone, ms)) / 1000);
}

/** The instant (epoch ms) at which the zone's wall clock reads `wallMs` (a UTC reading of local time). */
export function instantOfWall(zone, wallMs) {
  const guess = wallMs - zoneOffsetMs(zone, wallMs);
  return wallMs - zoneOffsetMs(zone, guess);
}

/** Periods whose bars are labelled by their last trading day (the week's, month's, …). */
const CALENDAR_PERIODS = new Set(['1w', '1M', '1Q', '1Y']);

/**
 * The start (epoch ms, local midnight) of the period a bar belongs to: Monday for 1w, the 1st for
 * 1M, the quarter's and the year's first day; a minute or daily bar is its own start. Older pages
 * end just before it, so a weekly bar is never cut in two (bars are labelled by their last day).
 */
export function periodStartOf(period, zone) {
  if (!CALENDAR_PERIODS.has(period)) return (timestamp) => timestamp;
  return (timestamp) => {
    const wall = new Date(chartTime(zone, timestamp) * 1000);
    let month = wall.getUTCMonth();
    let day = wall.getUTCDate();
    if (period === '1w') day -= (wall.getUTCDay() + 6) % 7;
    else if (period === '1M') day = 1;
    else if (period === '1Q') [month, day] = [month - (month % 3), 1];
    else [month, day] = [0, 1];
    return instantOfWall(zone, Date.UTC(wall.getUTCFullYear(), month, day));
  };
}

/** "2025-06-18 10:15:30" in the zone. */
export function formatInZone(zone, ms) {
  const p = partsIn(zone, ms);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

export function formatPrice(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '–';
  return value.toFixed(Math.abs(value) < 10 ? 3 : 2);
}

export function formatSigned(value, digits = 2) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '–';
  return `${value > 0 ? '+' : ''}${value.toFixed(digits)}`;
}

/** A fraction (0.0123) as a percentage ("+1.23%"). */
export function formatPct(fraction) {
  if (typeof fraction !== 'number' || !Number.isFinite(fraction)) return '–';
  return `${formatSigned(fraction * 100, 2)}%`;
}

export function formatVolume(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US');
}

/** 4,551,200 → "4.55M"; 1,234 → "1,234". */
export function formatVolumeShort(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '–';
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${(value / 1e9).toFixed(2)}B`;
  if (abs >= 1e6) return `${(value / 1e6).toFixed(2)}M`;
  if (abs >= 1e4) return `${(value / 1e3).toFixed(1)}K`;
  return value.toLocaleString('en-US');
}

export const SESSION_LABELS = {
  pre_market: 'pre-market',
  regular: 'open (regular session)',
  lunch_break: 'lunch break',
  after_hours: 'after hours',
  closed: 'closed',
  halted: 'halted',
};
