// Resume: a subscribe with `since` (the last seq the client saw per symbol) gets what it missed
// instead of a snapshot. The hub subscribes the symbols first and holds their live updates on the
// client (client.resuming) from that moment; the replay log is read after, so every update is in
// the log read or among those held, and the seqs sort out the overlap: no duplicate, no gap.
import type { StreamMetrics } from './metrics.ts';
import type { Client, Outbox } from './outbox.ts';
import { dataFrame, type Channel } from './protocol.ts';
import { withSeq, type Replay, type Sequencer } from './sequencer.ts';
import type { Subscriptions } from './subscriptions.ts';

/** What a resume uses of the hub. */
export interface ResumeParts {
  sequencer: Sequencer;
  subscriptions: Subscriptions;
  outbox: Outbox;
  metrics: StreamMetrics;
}

/**
 * What a resuming client missed, per symbol after its `since`: every update from the replay
 * log, or beyond the log the current value marked `"gap":true` with the missed range. Then the
 * live updates held meanwhile that come after it: no duplicate, no gap.
 */
export async function resume(parts: ResumeParts, client: Client, channel: Channel, resumed: Map<string, number>, snapshot: ReadonlyMap<string, unknown>): Promise<void> {
  const symbols = [...resumed.keys()];
  // What this instance applied before holding began reaches the client only through the replay:
  // the replay must get that far (what comes after is held), or the symbol is a gap.
  const requests = symbols.map((symbol) => ({ symbol, since: resumed.get(symbol) as number, needed: parts.subscriptions.get(channel, symbol)?.seq ?? 0 }));
  let replays: Replay[];
  try {
    replays = await parts.sequencer.replayMany(channel, requests);
  } catch {
    replays = symbols.map(() => ({ complete: false, latest: 0 }));
  }
  const held = client.resuming?.[channel];
  if (client.closed || held === undefined) return;
  // Rounds: the i-th missed update of every symbol in one frame, in order per symbol.
  const rounds: [string, string][][] = [];
  const gaps: [string, string][] = [];
  const sent = new Map<string, number>();
  for (const [i, symbol] of symbols.entries()) {
    const replay = replays[i];
    const since = resumed.get(symbol) as number;
    if (replay.complete) {
      for (const [round, update] of replay.updates.entries()) (rounds[round] ??= []).push([symbol, withSeq(update.json, update.seq)]);
      sent.set(symbol, replay.updates.at(-1)?.seq ?? since);
      continue;
    }
    // Beyond the log: the newest value known here stands for everything missed.
    const entry = parts.subscriptions.get(channel, symbol);
    const [json, seq] = entry !== undefined && entry.seq >= replay.latest ? [entry.raw, entry.seq] : [JSON.stringify(snapshot.get(symbol)), replay.latest];
    const gapFrom = since < seq ? since + 1 : 1;
    gaps.push([symbol, withSeq(json, seq, `,"gap":true,"gap_from":${gapFrom},"gap_to":${seq}`)]);
    sent.set(symbol, seq);
  }
  parts.metrics.resumes.inc({ outcome: gaps.length > 0 ? 'gap' : 'replayed' });
  // [symbol, element] pairs: a client behind gets the latest of each, as for live updates.
  const send = (pairs: [string, string][]) => {
    if (pairs.length === 0) return;
    parts.outbox.deliver(client, channel, Buffer.from(dataFrame(channel, pairs.map(([, element]) => element))), () => pairs);
  };
  if (gaps.length > 0) send(gaps);
  for (const round of rounds) send(round);
  // What went live meanwhile, after what was replayed.
  const after: [string, string][][] = [];
  for (const symbol of symbols) {
    const last = sent.get(symbol) ?? 0;
    const updates = (held.get(symbol) ?? []).filter(([seq]) => seq > last);
    for (const [round, [, element]] of updates.entries()) (after[round] ??= []).push([symbol, element]);
    held.delete(symbol);
  }
  for (const round of after) send(round);
}
