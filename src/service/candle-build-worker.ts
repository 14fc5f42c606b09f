// The worker thread of candle-build.ts: builds one series per message.
import { parentPort } from 'node:worker_threads';
import { buildFromSpec, pack, release, viewPacked, type BuildSpec } from './candle-build.ts';

parentPort?.on('message', (message: { id: number; spec: Omit<BuildSpec, 'raw'> & { raw: Parameters<typeof viewPacked>[0] } }) => {
  try {
    const candles = buildFromSpec({ ...message.spec, raw: viewPacked(message.spec.raw) });
    const { packed, transfer } = pack(candles);
    // The inputs are read in place and the answer is packed into new buffers: free them now.
    release(message.spec.raw);
    parentPort?.postMessage({ id: message.id, packed }, transfer);
  } catch (error) {
    parentPort?.postMessage({ id: message.id, error: (error as Error).message });
  }
});
