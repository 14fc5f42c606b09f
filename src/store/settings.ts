// The `history` config block with its defaults filled in (config/default.yaml documents each key).
// history.databaseUrl comes from DATABASE_URL through the config loader (config/load.ts).
import type { Config } from '../../config/schema.ts';
import type { BasePeriod } from '../domain.ts';
import { DEFAULT_SQLITE_PATH } from './index.ts';

export interface HistorySettings {
  enabled: boolean;
  backend: 'sqlite' | 'postgres';
  sqlitePath: string;
  databaseUrl?: string;
  postgresSchema: string;
  retentionDays: { '1m': number; '1d': number };
  revision: { dailyBars: number; minuteBars: number };
  disabledAdapters: string[];
  warmPauseMs: number;
  record: RecordSettings;
}

export interface RecordJob {
  id: string;
  universes: string[];
  symbols: string[];
  periods: BasePeriod[];
  exFactors: boolean;
  instruments: boolean;
  membership: boolean;
}

export interface RecordSettings {
  delayMinutes: number;
  catchUpDays: number;
  budgetReserve: number;
  concurrency: number;
  retentionDays: { '1m': number; '1d': number };
  jobs: RecordJob[];
}

export function historySettings(config: Pick<Config, 'history'>): HistorySettings {
  const h = config.history ?? {};
  return {
    enabled: h.enabled ?? true,
    backend: h.backend ?? 'sqlite',
    sqlitePath: h.sqlitePath ?? DEFAULT_SQLITE_PATH,
    databaseUrl: h.databaseUrl === '' ? undefined : h.databaseUrl,
    postgresSchema: h.postgresSchema ?? 'mdqs_history',
    retentionDays: { '1m': h.retentionDays?.['1m'] ?? 60, '1d': h.retentionDays?.['1d'] ?? 0 },
    revision: { dailyBars: h.revision?.dailyBars ?? 2, minuteBars: h.revision?.minuteBars ?? 30 },
    disabledAdapters: h.disabledAdapters ?? [],
    warmPauseMs: h.warmPauseMs ?? 0,
    record: {
      delayMinutes: h.record?.delayMinutes ?? 20,
      catchUpDays: h.record?.catchUpDays ?? 10,
      budgetReserve: h.record?.budgetReserve ?? 0.2,
      concurrency: h.record?.concurrency ?? 4,
      retentionDays: { '1m': h.record?.retentionDays?.['1m'] ?? 0, '1d': h.record?.retentionDays?.['1d'] ?? 0 },
      jobs: (h.record?.jobs ?? []).map((j) => ({
        id: j.id, universes: j.universes ?? [], symbols: j.symbols ?? [], periods: j.periods ?? ['1d'],
        exFactors: j.exFactors ?? true, instruments: j.instruments ?? true, membership: j.membership ?? true,
      })),
    },
  };
}
