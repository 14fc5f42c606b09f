// Preloaded into the service for the memory soak only (`node --expose-gc --import
// bench/lib/probe.ts src/server.ts`): answers a parent's IPC message with process.memoryUsage(),
// optionally after a full GC, so retained memory can be told apart from garbage not yet collected.
// It changes nothing in the service; without an IPC channel it does nothing.
import { writeHeapSnapshot } from 'node:v8';

if (typeof process.send === 'function') {
  process.on('message', (message: { probe?: string; id?: number; gc?: boolean }) => {
    if (message?.probe !== 'memory') return;
    const gc = (globalThis as { gc?: () => void }).gc;
    const reply = () => process.send!({ probe: 'memory', id: message.id, usage: process.memoryUsage() });
    if (message.gc !== true) return reply();
    if (gc === undefined) throw new Error('probe: run node with --expose-gc');
    gc();
    gc();
    // ArrayBuffer backing stores are freed on a background thread after the GC that found them
    // dead, and `external` drops only then: read it after that has had time to happen.
    setTimeout(() => {
      gc();
      // MDQS_PROBE_SNAPSHOTS=<dir>: also a heap snapshot at each after-GC reading (bench/heap-diff.ts).
      const dir = process.env.MDQS_PROBE_SNAPSHOTS;
      if (dir !== undefined && dir !== '') writeHeapSnapshot(`${dir}/probe-${process.pid}-${message.id}.heapsnapshot`);
      reply();
    }, 250);
  });
  // The channel must not keep a shutting-down server alive.
  process.channel?.unref();
}
