// Schema versions of the history store. Each backend applies the steps above the version it finds
// (history_schema holds one row) inside one transaction at boot; a store written by newer code
// stops the boot instead of being read with the wrong layout.
//
// Layout (one row per bar; bytes per bar measured in README "Candle history store"):
//   series(id, adapter, symbol, period)           unique (adapter, symbol, period)
//   bars(series, ts, open, high, low, close, volume, amount, prev_close)   primary key (series, ts)
//   coverage(series, lo, hi, recheck_at)          primary key (series, lo); recheck_at null = final
export const SCHEMA_VERSION = 1;

export class SchemaTooNewError extends Error {
  constructor(location: string, found: number) {
    super(
      `history store ${location} has schema version ${found}, newer than this service knows (${SCHEMA_VERSION}); ` +
        'run the newer service version, or point history.sqlitePath / DATABASE_URL at another store',
    );
    this.name = 'SchemaTooNewError';
  }
}

export const SQLITE_STEPS: readonly string[][] = [
  [
    `CREATE TABLE series (id INTEGER PRIMARY KEY, adapter TEXT NOT NULL, symbol TEXT NOT NULL, period TEXT NOT NULL,
       UNIQUE (adapter, symbol, period))`,
    // WITHOUT ROWID: the (series, ts) key is the table, no second b-tree for a rowid. `scaled`
    // bit 1: prices hold price × 1000, bit 2: amount holds amount × 100, set only where that round
    // trip is exact. SQLite writes integral values of REAL columns as 1–6 byte integers, so a
    // scaled bar takes ~53 bytes instead of ~82 (measured, README).
    `CREATE TABLE bars (series INTEGER NOT NULL, ts INTEGER NOT NULL, open REAL NOT NULL, high REAL NOT NULL,
       low REAL NOT NULL, close REAL NOT NULL, volume INTEGER NOT NULL, amount REAL NOT NULL, prev_close REAL,
       scaled INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (series, ts)) WITHOUT ROWID`,
    `CREATE TABLE coverage (series INTEGER NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL, recheck_at INTEGER,
       PRIMARY KEY (series, lo)) WITHOUT ROWID`,
  ],
];

/** `%s` is the quoted schema name. */
export const POSTGRES_STEPS: readonly string[][] = [
  [
    `CREATE TABLE %s.series (id serial PRIMARY KEY, adapter text NOT NULL, symbol text NOT NULL, period text NOT NULL,
       UNIQUE (adapter, symbol, period))`,
    `CREATE TABLE %s.bars (series integer NOT NULL, ts bigint NOT NULL, open float8 NOT NULL, high float8 NOT NULL,
       low float8 NOT NULL, close float8 NOT NULL, volume bigint NOT NULL, amount float8 NOT NULL, prev_close float8,
       PRIMARY KEY (series, ts))`,
    `CREATE TABLE %s.coverage (series integer NOT NULL, lo bigint NOT NULL, hi bigint NOT NULL, recheck_at bigint,
       PRIMARY KEY (series, lo))`,
  ],
];
