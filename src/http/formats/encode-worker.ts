// The worker thread of offload.ts: encodes one answer per message (answerEncode).
import { parentPort } from 'node:worker_threads';
import { answerEncode, type EncodeJob } from './offload.ts';

parentPort?.on('message', (job: EncodeJob) => {
  void answerEncode(job, (answer, transfer) => parentPort?.postMessage(answer, transfer));
});
