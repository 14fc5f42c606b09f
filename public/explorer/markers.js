// Ex-dividend markers for the price chart. No DOM and no imports: the same module runs in the
// page and in Node (test/explorer/markers.test.ts).

/**
 * One marker per bar that holds ex-dividend events: the first bar on or after each ex-date
 * (bars are labelled by their last day). Several events in one bar (weekly, monthly, yearly
 * charts) make one marker with the combined factor and how many there were. Each bar that has
 * events gets `xd` ({count, factor, timestamps}) for the legend; the others lose theirs.
 */
export function exDividendMarkers(bars, events) {
  if (bars.length === 0) return [];
  const first = bars[0].timestamp;
  const last = bars.at(-1).timestamp;
  const byBar = new Map();
  let index = 0;
  const sorted = [...(events ?? [])].filter((e) => e.timestamp >= first && e.timestamp <= last).sort((a, b) => a.timestamp - b.timestamp);
  for (const event of sorted) {
    while (index < bars.length && bars[index].timestamp < event.timestamp) index += 1;
    if (index >= bars.length) break;
    const group = byBar.get(index) ?? [];
    group.push(event);
    byBar.set(index, group);
  }
  const out = [];
  for (const [at, group] of byBar) {
    const factor = group.reduce((product, e) => product * e.ex_factor, 1);
    bars[at].xd = { count: group.length, factor, timestamps: group.map((e) => e.timestamp) };
    out.push({
      time: bars[at].time,
      position: 'aboveBar',
      shape: 'arrowDown',
      color: '#6b46c1',
      text: markerText(group.length, factor),
    });
  }
  for (let i = 0; i < bars.length; i += 1) if (!byBar.has(i)) delete bars[i].xd;
  return out;
}

export function markerText(count, factor) {
  return count === 1 ? `XD ×${factor.toFixed(4)}` : `XD ×${factor.toFixed(4)} (${count} events)`;
}
