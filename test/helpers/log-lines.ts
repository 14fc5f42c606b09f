// A Writable that collects what a logger writes as complete lines (for tests of log output).
import { Writable } from 'node:stream';

export function captureLines(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  let pending = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      pending += String(chunk);
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      lines.push(...parts.filter((l) => l !== ''));
      done();
    },
  });
  return { stream, lines };
}
