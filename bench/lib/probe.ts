// Preloaded into the service for the memory soak only (`node --expose-gc --import
// bench/lib/probe.ts src/server.ts`): answers a parent's IPC message with process.memoryUsage(),
// optionally after a full GC, so retained memory can be told apart from garbage not yet collected.
// It changes nothing in the service; without an IPC channel it does nothing.
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import { appendFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { constants, PerformanceObserver } from 'node:perf_hooks';

/** What the probe adds to process.memoryUsage(): the worker threads' V8 heaps (committed, used). */
export interface ProbeUsage extends NodeJS.MemoryUsage {
  workerHeapTotal?: number;
  workerHeapUsed?: number;
  workers?: number;
  /** What the main isolate has malloc'ed outside its heap pages (V8's own accounting). */
  mallocedMemory?: number;
}

if (typeof process.send === 'function') {
  // The service's worker threads (the candle-build worker) have isolates of their own whose heaps
  // process.memoryUsage() does not count: track every Worker so their heaps can be read too.
  // syncBuiltinESMExports makes `import { Worker } from 'node:worker_threads'` see the subclass.
  const threads = createRequire(import.meta.url)('node:worker_threads') as typeof import('node:worker_threads');
  const workers = new Set<import('node:worker_threads').Worker>();
  const Base = threads.Worker;
  threads.Worker = class TrackedWorker extends Base {
    constructor(...args: ConstructorParameters<typeof Base>) {
      super(...args);
      workers.add(this);
      this.once('exit', () => workers.delete(this));
    }
  };
  syncBuiltinESMExports();
  const usage = async (): Promise<ProbeUsage> => {
    const heaps = await Promise.all([...workers].map((w) => w.getHeapStatistics().catch(() => undefined)));
    let total = 0;
    let used = 0;
    for (const h of heaps) {
      total += h?.total_heap_size ?? 0;
      used += h?.used_heap_size ?? 0;
    }
    return { ...process.memoryUsage(), workerHeapTotal: total, workerHeapUsed: used, workers: workers.size, mallocedMemory: getHeapStatistics().malloced_memory };
  };

  // MDQS_PROBE_GC_LOG=<file>: one line per mark-compact (time, pause, heap used/committed and
  // external after it), to tell live data from garbage awaiting collection in a soak's peak.
  const gcLog = process.env.MDQS_PROBE_GC_LOG;
  if (gcLog !== undefined && gcLog !== '') {
    const started = performance.now();
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const kind = ((entry as { detail?: unknown }).detail as { kind?: number } | undefined)?.kind;
        if (kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
        const m = process.memoryUsage();
        const mb = (n: number) => (n / 1048576).toFixed(1);
        appendFileSync(gcLog, `${((entry.startTime - started) / 1000).toFixed(1)} s major ${entry.duration.toFixed(1)} ms: heap ${mb(m.heapUsed)}/${mb(m.heapTotal)} MiB, external ${mb(m.external)} MiB, rss ${mb(m.rss)} MiB\n`);
      }
    }).observe({ entryTypes: ['gc'] });
  }
  // MDQS_PROBE_ALLOC_PROFILE=<file prefix>: V8's sampling heap profiler over everything allocated
  // (objects collected since included), written at each after-GC reading as
  // <prefix>-<reading>.heapprofile: where the soak's allocation volume comes from, by function.
  const allocProfile = process.env.MDQS_PROBE_ALLOC_PROFILE;
  const inspector = allocProfile !== undefined && allocProfile !== '' ? new Session() : undefined;
  if (inspector !== undefined) {
    inspector.connect();
    inspector.post('HeapProfiler.startSampling', { samplingInterval: 32768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  }
  const writeAllocProfile = (id: number) => inspector?.post('HeapProfiler.getSamplingProfile', (error, result) => {
    if (error === null) writeFileSync(`${allocProfile}-${id}.heapprofile`, JSON.stringify(result.profile));
  });
  process.on('message', (message: { probe?: string; id?: number; gc?: boolean }) => {
    if (message?.probe !== 'memory') return;
    const gc = (globalThis as { gc?: (options?: object) => void }).gc;
    // MDQS_PROBE_GC=last-resort: the readings after GC use V8's last-resort collection, which also
    // gives back the pages V8 keeps pooled after a GC (an ordinary full GC keeps them resident), so
    // RSS shows what the process holds rather than its high-water mark.
    const full = process.env.MDQS_PROBE_GC === 'last-resort' ? () => gc!({ type: 'major', execution: 'sync', flavor: 'last-resort' }) : () => gc!();
    const reply = () => void usage().then((u) => process.send!({ probe: 'memory', id: message.id, usage: u }));
    if (message.gc !== true) return reply();
    if (gc === undefined) throw new Error('probe: run node with --expose-gc');
    full();
    full();
    // ArrayBuffer backing stores are freed on a background thread after the GC that found them
    // dead, and `external` drops only then: read it after that has had time to happen.
    setTimeout(() => {
      full();
      // MDQS_PROBE_SNAPSHOTS=<dir>: also a heap snapshot at each after-GC reading (bench/diagnostics/heap-diff.ts).
      const dir = process.env.MDQS_PROBE_SNAPSHOTS;
      if (dir !== undefined && dir !== '') writeHeapSnapshot(`${dir}/probe-${process.pid}-${message.id}.heapsnapshot`);
      writeAllocProfile(message.id ?? 0);
      reply();
    }, 250);
  });
  // The channel must not keep a shutting-down server alive.
  process.channel?.unref();
}
