// Preloaded into the service by the mixed memory soak (`node --import bench/lib/shift-clock.ts
// src/server.ts`) when no market it streams is in session: Date.now() runs MDQS_BENCH_CLOCK_OFFSET_MS
// from the wall clock (bench/lib/mix-load.ts picks an offset that lands in a US session), so the
// stream hub refreshes and pushes as it does during trading hours. Only Date.now moves: src/main.ts
// reads its clock through it (`now = () => Date.now()`), timers and performance.now() do not.
// Without the variable it changes nothing.
const offset = Number(process.env.MDQS_BENCH_CLOCK_OFFSET_MS ?? '0');
if (Number.isFinite(offset) && offset !== 0) {
  const wall = Date.now.bind(Date);
  Date.now = () => wall() + offset;
}
