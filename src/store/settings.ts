// The `history` config block with its defaults filled in (config/default.yaml documents each key).
// history.databaseUrl comes from DATABASE_URL through the config loader (config/load.ts).
import type { Config } from '../../config/schema.ts';
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
    warmPauseMs: h.warmPauseMs ?? 200,
  };
}
