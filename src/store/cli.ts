// Operator commands for the candle history store (dispatched by src/cli.ts as `history …`):
//   history stats [--json]
//       Symbols, series, bars, covered ranges and bytes of the configured store.
//   history drop --symbol S [--period 1m|1d] [--from YYYY-MM-DD --to YYYY-MM-DD] [--adapter A]
//       Forgets bars and their coverage (dates are exchange-local, inclusive), so the next request
//       fetches them again, e.g. after a vendor correction.
//   history export --out DIR [--universe U | --symbols A,B] [--period 1d|1m] [--from … --to …] [--format parquet|csv]
//       Writes the store as Hive-partitioned Parquet or CSV files (src/store/export.ts).
//   history warm --universe CN_Stock --period 1d --from 2020-01-01 [--to YYYY-MM-DD] [--pause-ms N]
//       Prefetches every member of a pool, one symbol after another with a pause between vendor
//       calls (history.warmPauseMs). Coverage is persistent, so an interrupted warm resumes where
//       it stopped: covered symbols cost no vendor call. It starts no earlier than the period's
//       retention (history.retentionDays): older bars would be fetched and not kept.
import type { Adapter } from '../../adapters/types.ts';
import { createAdapters, productionDeps } from '../upstream/registry.ts';
import { loadConfig } from '../../config/load.ts';
import { POOL_IDS, type BasePeriod, type PoolId, type Region, type SymbolRef } from '../domain.ts';
import { addDays, localDate, localMidnight } from '../markets/calendar.ts';
import { parseSymbol } from '../markets/symbols.ts';
import { openHistoryStore, type HistoryStats, type HistoryStore } from './index.ts';
import { historySettings, type HistorySettings } from './settings.ts';
import { EXPORT_USAGE, ExportUsageError, runExport } from './export.ts';

type Env = Record<string, string | undefined>;

const USAGE = `usage:
  history stats [--json]
  ${EXPORT_USAGE}
  history drop --symbol S [--period 1m|1d] [--from YYYY-MM-DD --to YYYY-MM-DD] [--adapter A]
  history warm --universe ${POOL_IDS.join('|')} [--period 1d|1m] --from YYYY-MM-DD [--to YYYY-MM-DD] [--pause-ms N]
`;

const POOL_REGION: Record<PoolId, Region> = { CN_Stock: 'CN', CN_ETF: 'CN', HK_Stock: 'HK', US_Stock: 'US', CN_Index: 'CN', HK_Index: 'HK', US_Index: 'US' };
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

/** The adapter that serves candles for `region` first in the routing (skipping store-disabled ones). */
function candleAdapter(config: ReturnType<typeof loadConfig>['config'], adapters: Map<string, Adapter>, region: Region, disabled: string[]): Adapter | undefined {
  const chain = config.routing.overrides.candles?.[region] ?? config.routing.markets[region];
  for (const id of chain) {
    const a = adapters.get(id);
    if (a !== undefined && !disabled.includes(id) && a.capabilities.resources.candles && a.capabilities.markets.includes(region)) return a;
  }
  return undefined;
}

function progress(done: number, total: number, label: string, calls: number): void {
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  const line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total} ${label} (vendor calls ${calls})`;
  if (process.stderr.isTTY) process.stderr.write(`\r${line.padEnd(90)}`);
  else if (done === total || done % Math.max(1, Math.floor(total / 20)) === 0) process.stderr.write(`${line}\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function warm(args: string[], env: Env): Promise<number> {
  const universe = flag(args, 'universe');
  if (universe === undefined || !(POOL_IDS as readonly string[]).includes(universe)) throw new UsageError(`--universe must be one of ${POOL_IDS.join(', ')}`);
  const p = period(flag(args, 'period'), '1d') as BasePeriod;
  const from = date(flag(args, 'from'), 'from');
  if (from === undefined) throw new UsageError('--from is required');
  const to = date(flag(args, 'to'), 'to');
  const { config } = loadConfig(env);
  const settings = historySettings(config);
  const pauseArg = flag(args, 'pause-ms');
  const pause = pauseArg === undefined ? settings.warmPauseMs : Number(pauseArg);
  if (!Number.isFinite(pause) || pause < 0) throw new UsageError('--pause-ms must be a non-negative number');
  const region = POOL_REGION[universe as PoolId];
  const deps = productionDeps(Date.now);
  const adapters = createAdapters(config.routing, config.adapters, deps);
  const tier = await openTier(settings);
  try {
    const adapter = candleAdapter(config, adapters, region, settings.disabledAdapters);
    if (adapter === undefined) throw new UsageError(`no adapter in the ${region} routing serves candles through the store`);
    const pool = await adapter.listPool!(universe as PoolId);
    if (pool === undefined) throw new UsageError(`${adapter.id} does not know the pool ${universe}`);
    const days = settings.retentionDays[p];
    const keptFrom = days > 0 ? Date.now() - days * 86_400_000 : -Infinity;
    const start = Math.max(localMidnight(region, from), keptFrom);
    // Without --to: through yesterday, so the forming bar (never stored) costs no call per symbol.
    const end = localMidnight(region, to === undefined ? localDate(region, Date.now()) : addDays(to, 1)) - 1;
    if (start > end) {
      process.stdout.write(`nothing to warm: ${p} bars before ${localDate(region, keptFrom)} are not kept (history.retentionDays.${p}: ${days})\n`);
      return 0;
    }
    if (start > localMidnight(region, from)) process.stderr.write(`${p} bars before ${localDate(region, keptFrom)} are not kept (history.retentionDays.${p}: ${days}): warming from then\n`);
    let calls = 0;
    let failed = 0;
    const total = pool.symbols.length;
    for (let i = 0; i < total; i++) {
      const ref = parseSymbol(pool.symbols[i]);
      if (ref === undefined) continue;
      const before = calls;
      try {
        await tier.candles(adapter.id, { symbol: ref as SymbolRef, period: p, start, end }, (q) => {
          calls += 1;
          return adapter.getCandles!(q);
        });
      } catch (error) {
        failed += 1;
        process.stderr.write(`\n${ref.symbol}: ${(error as Error).message}\n`);
      }
      progress(i + 1, total, ref.symbol, calls);
      // Politeness: only symbols that went to the vendor pause; covered ones resume at full speed.
      if (calls > before && pause > 0 && i + 1 < total) await sleep(pause);
    }
    if (process.stderr.isTTY) process.stderr.write('\n');
    process.stdout.write(`warmed ${total - failed}/${total} symbols of ${universe} (${p} from ${from}) with ${calls} vendor calls via ${adapter.id}\n`);
    process.stdout.write(formatStats(await tier.stats()));
    return failed === 0 ? 0 : 1;
  } finally {
    await tier.close();
    for (const a of adapters.values()) await a.close?.();
    for (const c of deps.clients.values()) await c.close();
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
