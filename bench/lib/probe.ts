// Preloaded into the service for the memory soak only (`node --expose-gc --import
// bench/lib/probe.ts src/server.ts`): answers a parent's IPC message with process.memoryUsage(),
// optionally after a full GC, so retained memory can be told apart from garbage not yet collected.
// It changes nothing in the service; without an IPC channel it does nothing.
if (typeof process.send === 'function') {
  process.on('message', (message: { probe?: string; id?: number; gc?: boolean }) => {
    if (message?.probe !== 'memory') return;
    const gc = (globalThis as { gc?: () => void }).gc;
    if (message.gc === true) {
      if (gc === undefined) throw new Error('probe: run node with --expose-gc');
      gc();
      gc();
    }
    process.send!({ probe: 'memory', id: message.id, usage: process.memoryUsage() });
  });
  // The channel must not keep a shutting-down server alive.
  process.channel?.unref();
}
