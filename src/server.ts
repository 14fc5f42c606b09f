// The entry point (`npm start` execs `node src/server.ts`): turns on Node's module compile cache,
// then loads the service (main.ts). The cache keeps each module's type-stripped and compiled form
// on disk between starts, which takes about a third off startup (BENCHMARKS.md, startup). `npm
// start` sets NODE_COMPILE_CACHE (node_modules/.cache/node-compile-cache), so the cache is on
// before this file is read and it is not type-stripped either; run directly, the cache lives in
// Node's default place (<tmpdir>/node-compile-cache) from here on. NODE_DISABLE_COMPILE_CACHE=1
// turns it off. A directory that cannot be written only costs speed.
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./main.ts');
