// Operator commands for the candle history store (dispatched by src/cli.ts as `history …`):
//   history stats [--json]
//       Symbols, series, bars, covered ranges and bytes of the configured store.
//   history drop --symbol S [--period 1m|1d] [--from YYYY-MM-DD --to YYYY-MM-DD] [--adapter A]
//       Forgets bars and their coverage (dates are exchange-local, inclusive), so the next request
//       fetches them again, e.g. after a vendor correction.
//   history export --out DIR [--universe U | --symbols A,B] [--period 1d|1m] [--from … --to …] [--format parquet|csv]
//       Writes the store as Hive-partitioned Parquet or CSV files (src/store/export.ts).
//   history warm [--universe CN_Stock] [--symbols A,B] [--period 1d,1m] --from 2020-01-01 [--to YYYY-MM-DD]
//                [--ex-factors] [--instruments] [--pause-ms N]
//       Prefetches the members of a pool and/or symbols, period by period, with the recorder's
//       engine (src/recorder/recorder.ts): each vendor call in the background lane under the
//       vendor's request budget, leaving history.record.budgetReserve of it to users (an extra
//       pause with --pause-ms / history.warmPauseMs). Coverage is persistent, so an interrupted
//       warm resumes where it stopped: covered symbols cost no vendor call. It starts no earlier
//       than the period's retention (history.retentionDays): older bars would be fetched and not kept.
import type { Adapter } from '../../adapters/types.ts';
import { budgetOf, createAdapters, productionDeps, resilienceSettings } from '../upstream/registry.ts';
import { createResilience } from '../upstream/resilience.ts';
import { AdapterRouter } from '../upstream/router.ts';
import { futuresDays, Recorder } from '../recorder/recorder.ts';
import { localRunnerLock } from '../recorder/runner-lock.ts';
import { POOL_REGION } from '../markets/pools.ts';
import { createRedisClient, redisTopology } from '../redis/connection.ts';
import { loadConfig } from '../../config/load.ts';
import { POOL_IDS, type BasePeriod, type PoolId, type Region, type SymbolRef } from '../domain.ts';
import { addDays, localDate, localMidnight } from '../markets/calendar.ts';
import { marketOf, parseSymbol } from '../markets/symbols.ts';
import { openHistoryStore, type HistoryStats, type HistoryStore } from './index.ts';
import { historySettings, type HistorySettings } from './settings.ts';
import { EXPORT_USAGE, ExportUsageError, runExport } from './export.ts';

type Env = Record<string, string | undefined>;

const USAGE = `usage:
  history stats [--json]
  ${EXPORT_USAGE}
  history drop --symbol S [--period 1m|1d] [--from YYYY-MM-DD --to YYYY-MM-DD] [--adapter A]
  history warm [--universe ${POOL_IDS.join('|')}] [--symbols A,B] [--period 1d,1m] --from YYYY-MM-DD [--to YYYY-MM-DD] [--ex-factors] [--instruments] [--pause-ms N]
`;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

class UsageError extends Error {}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const value = args[i + 1];
  if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`);
  return value;
}

function period(value: string | undefined, fallback?: BasePeriod): BasePeriod | undefined {
  const p = value ?? fallback;
  if (p !== undefined && p !== '1m' && p !== '1d') throw new UsageError(`--period must be 1m or 1d, not ${p}`);
  return p;
}

function date(value: string | undefined, name: string): string | undefined {
  if (value !== undefined && !DATE.test(value)) throw new UsageError(`--${name} must be YYYY-MM-DD, not ${value}`);
  return value;
}

async function openTier(settings: HistorySettings): Promise<HistoryStore> {
  return openHistoryStore({
    backend: settings.backend, sqlitePath: settings.sqlitePath, databaseUrl: settings.databaseUrl, postgresSchema: settings.postgresSchema,
    now: Date.now, revision: settings.revision, retentionDays: settings.retentionDays,
    log: { warn: (fields, message) => process.stderr.write(`${message} ${JSON.stringify(fields)}\n`) },
  });
}

function formatStats(s: HistoryStats): string {
  const mb = (s.bytes / 1_048_576).toFixed(1);
  const perBar = s.bars > 0 ? ` (${Math.round(s.bytes / s.bars)} bytes per bar)` : '';
  const lines = [
    `history store: ${s.backend} ${s.location}`,
    `  symbols ${s.symbols}, series ${s.series}, bars ${s.bars}, covered ranges ${s.ranges}, ${mb} MiB${perBar}`,
  ];
  for (const p of ['1d', '1m'] as const) lines.push(`  ${p}: series ${s.byPeriod[p].series}, bars ${s.byPeriod[p].bars}, ranges ${s.byPeriod[p].ranges}`);
  for (const [adapter, bars] of Object.entries(s.byAdapter)) lines.push(`  adapter ${adapter}: ${bars} bars`);
  return `${lines.join('\n')}\n`;
}

function progress(done: number, total: number, label: string, calls: number): void {
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  const line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total} ${label} (vendor calls ${calls})`;
  if (process.stderr.isTTY) process.stderr.write(`\r${line.padEnd(90)}`);
  else if (done === total || done % Math.max(1, Math.floor(total / 20)) === 0) process.stderr.write(`${line}\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `history warm`: the recorder's engine over a date range, from the command line. Members of a
 * universe and/or symbols, one or more base periods, optionally ex-factors and instruments; each
 * vendor call in the background lane under the vendor's request budget (fleet-wide with Redis),
 * leaving `history.record.budgetReserve` of it to users; `--pause-ms` adds a pause on top.
 */
async function warm(args: string[], env: Env): Promise<number> {
  const universe = flag(args, 'universe');
  if (universe !== undefined && !(POOL_IDS as readonly string[]).includes(universe)) throw new UsageError(`--universe must be one of ${POOL_IDS.join(', ')}`);
  const symbolsArg = flag(args, 'symbols');
  if (universe === undefined && symbolsArg === undefined) throw new UsageError('--universe or --symbols is required');
  const periods = (flag(args, 'period') ?? '1d').split(',').map((p) => period(p.trim()) as BasePeriod);
  const from = date(flag(args, 'from'), 'from');
  if (from === undefined) throw new UsageError('--from is required');
  const to = date(flag(args, 'to'), 'to');
  const withFactors = args.includes('--ex-factors');
  const withInstruments = args.includes('--instruments');
  const { config } = loadConfig(env);
  const settings = historySettings(config);
  const pauseArg = flag(args, 'pause-ms');
  const pause = pauseArg === undefined ? settings.warmPauseMs : Number(pauseArg);
  if (!Number.isFinite(pause) || pause < 0) throw new UsageError('--pause-ms must be a non-negative number');
  const symbolRefs: SymbolRef[] = [];
  for (const s of symbolsArg === undefined ? [] : symbolsArg.split(',').map((x) => x.trim()).filter((x) => x !== '')) {
    const ref = parseSymbol(s);
    if (ref === undefined) throw new UsageError(`not a symbol: ${s}`);
    symbolRefs.push(ref);
  }
  // With Redis, the vendor's budget is the fleet's: the warm and the servers share it.
  const topology = redisTopology(config.redis);
  const redis = topology === undefined ? undefined : createRedisClient(topology, { commandTimeoutMs: config.redis.commandTimeoutMs });
  const deps = productionDeps(Date.now, undefined, undefined, { redis, processes: 1 });
  const adapters = createAdapters(config.routing, config.adapters, deps);
  const tier = await openTier(settings);
  const resilience = new Map([...adapters.keys()].map((id) => [id, createResilience(id, resilienceSettings(id, config.adapters[id], config.upstream), { now: Date.now, countsCalls: !deps.clients.has(id) })]));
  const router = new AdapterRouter(adapters, config.routing, resilience);
  const recorder = new Recorder({
    store: tier, router, settings: settings.record, lock: localRunnerLock(), now: Date.now,
    log: { info: () => undefined, warn: (fields, message) => process.stderr.write(`${message} ${JSON.stringify(fields)}\n`) },
    offFor: new Set(settings.disabledAdapters),
    budgetOf: (adapter) => budgetOf(adapter),
  });
  try {
    const members = [...symbolRefs];
    let via: Adapter | undefined;
    if (universe !== undefined) {
      const region = POOL_REGION[universe as PoolId];
      const lister = router.chain('pools', region)[0];
      const pool = lister === undefined ? undefined : await router.call(lister, 'pools', (ctx) => lister.listPool!(universe as PoolId, ctx), undefined, 'background');
      if (pool === undefined) throw new UsageError(`no adapter in the ${region} routing knows the pool ${universe}`);
      for (const s of pool.symbols) {
        const ref = parseSymbol(s);
        if (ref !== undefined && !members.some((m) => m.symbol === ref.symbol)) members.push(ref);
      }
    }
    let calls = 0;
    let failed = 0;
    const total = members.length;
    const skipped = new Set<string>();
    for (let i = 0; i < total; i++) {
      const ref = members[i];
      const before = calls;
      for (const p of periods) {
        via ??= recorder.candleAdapter(marketOf(ref), p);
        const days = settings.retentionDays[p];
        const keptFrom = days > 0 ? Date.now() - days * 86_400_000 : -Infinity;
        // Without --to: through yesterday, so the forming bar (never stored) costs no call per symbol.
        // A futures contract's days run from the previous day's close through their night sessions.
        const lastDay = to ?? addDays(localDate(ref.region, Date.now()), -1);
        const contract = futuresDays(ref, from, lastDay);
        const natural = contract?.start ?? localMidnight(ref.region, from);
        const start = Math.max(natural, keptFrom);
        const end = contract?.end ?? localMidnight(ref.region, addDays(lastDay, 1)) - 1;
        if (start > end) {
          skipped.add(`${p} bars before ${localDate(ref.region, keptFrom)} are not kept (history.retentionDays.${p}: ${days})`);
          continue;
        }
        if (start > natural) skipped.add(`${p} bars before ${localDate(ref.region, keptFrom)} are not kept (history.retentionDays.${p}: ${days}): warmed from then`);
        const outcome = await recorder.recordWindow(ref, p, start, end);
        calls += outcome.requests;
        if (outcome.kind === 'failed') {
          failed += 1;
          process.stderr.write(`\n${ref.symbol} ${p}: ${outcome.reason}\n`);
        }
      }
      progress(i + 1, total, ref.symbol, calls);
      // An extra pause only after symbols that went to the vendor; covered ones resume at full speed.
      if (calls > before && pause > 0 && i + 1 < total) await sleep(pause);
    }
    if (withFactors || withInstruments) {
      for (const market of new Set(members.map(marketOf))) {
        const reference = await recorder.recordReference({ id: 'warm', exFactors: withFactors, instruments: withInstruments }, members.filter((m) => marketOf(m) === market));
        calls += reference.requests;
        failed += reference.failed;
      }
    }
    if (process.stderr.isTTY) process.stderr.write('\n');
    const allSkipped = periods.every((p) => [...skipped].some((line) => line.startsWith(`${p} `) && !line.endsWith('warmed from then')));
    if (allSkipped && total > 0 && calls === 0) {
      process.stdout.write(`nothing to warm: ${[...skipped][0]}\n`);
      return 0;
    }
    for (const line of skipped) process.stderr.write(`${line}\n`);
    const what = universe ?? `${symbolRefs.length} symbols`;
    process.stdout.write(`warmed ${total - failed}/${total} symbols of ${what} (${periods.join(',')} from ${from}) with ${calls} vendor calls via ${via?.id ?? 'none'}\n`);
    process.stdout.write(formatStats(await tier.stats()));
    return failed === 0 ? 0 : 1;
  } finally {
    await recorder.stop();
    await tier.close();
    for (const a of adapters.values()) await a.close?.();
    for (const c of deps.clients.values()) await c.close();
    redis?.disconnect();
  }
}

async function drop(args: string[], env: Env): Promise<number> {
  const symbolArg = flag(args, 'symbol');
  if (symbolArg === undefined) throw new UsageError('--symbol is required');
  const ref = parseSymbol(symbolArg);
  if (ref === undefined) throw new UsageError(`not a symbol: ${symbolArg}`);
  const p = period(flag(args, 'period'));
  const from = date(flag(args, 'from'), 'from');
  const to = date(flag(args, 'to'), 'to');
  const settings = historySettings(loadConfig(env).config);
  const tier = await openTier(settings);
  try {
    const removed = await tier.drop({
      adapter: flag(args, 'adapter'),
      symbol: ref.symbol,
      period: p,
      from: from === undefined ? undefined : localMidnight(ref.region, from),
      // Inclusive of the whole last day: its 1m bars run to the close.
      to: to === undefined ? undefined : localMidnight(ref.region, addDays(to, 1)) - 1,
    });
    process.stdout.write(`dropped ${removed} bars of ${ref.symbol}${p === undefined ? '' : ` ${p}`}${from || to ? ` from ${from ?? 'the start'} to ${to ?? 'the end'}` : ''}; they will be fetched again on demand\n`);
    return 0;
  } finally {
    await tier.close();
  }
}

async function stats(args: string[], env: Env): Promise<number> {
  const settings = historySettings(loadConfig(env).config);
  const tier = await openTier(settings);
  try {
    const s = await tier.stats();
    process.stdout.write(args.includes('--json') ? `${JSON.stringify(s, null, 2)}\n` : formatStats(s));
    return 0;
  } finally {
    await tier.close();
  }
}

/** `args` are the words after `history`. Returns the exit code. */
export async function runHistoryCommand(args: string[], env: Env = process.env): Promise<number> {
  const [sub, ...rest] = args;
  try {
    if (sub === 'stats') return await stats(rest, env);
    if (sub === 'drop') return await drop(rest, env);
    if (sub === 'warm') return await warm(rest, env);
    if (sub === 'export') return await runExport(rest, env);
    process.stderr.write(USAGE);
    return 2;
  } catch (error) {
    if (error instanceof UsageError || error instanceof ExportUsageError) {
      process.stderr.write(`${error.message}\n${USAGE}`);
      return 2;
    }
    throw error;
  }
}
