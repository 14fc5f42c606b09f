// The worker thread of candle-build.ts: builds one series per message (answerBuild).
import { parentPort } from 'node:worker_threads';
import { answerBuild } from './candle-build.ts';

parentPort?.on('message', (message: Parameters<typeof answerBuild>[0]) => answerBuild(message, (answer, transfer) => parentPort?.postMessage(answer, transfer)));
