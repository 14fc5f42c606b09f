// The entry point (`npm start` execs `node src/server.ts`): turns on Node's module compile cache,
// then loads the service (main.ts). The cache keeps each module's type-stripped and compiled form
// on disk between starts, which takes about a third off startup (BENCHMARKS.md, startup). It lives
// in Node's default place (<tmpdir>/node-compile-cache); NODE_COMPILE_CACHE=<dir> moves it and
// NODE_DISABLE_COMPILE_CACHE=1 turns it off. A directory that cannot be written only costs speed.
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./main.ts');
