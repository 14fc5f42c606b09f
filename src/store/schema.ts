// Schema versions of the history store. Each backend applies the steps above the version it finds
// (history_schema holds one row) inside one transaction at boot; a store written by newer code
// stops the boot instead of being read with the wrong layout.
//
// Layout since version 2 (bytes per bar measured in docs/store.md):
//   series(id, adapter, symbol, period)           unique (adapter, symbol, period)
//   blocks(series, block, n, data)                primary key (series, block): the n bars of one UTC
//                                                 day (1m) or 128 days (1d) as one blob (blocks.ts)
//   coverage(series, lo, hi, recheck_at)          primary key (series, lo); recheck_at null = final
//   reference(kind, adapter, symbol, fetched_at,  primary key (kind, adapter, symbol): the reference data
//             data)                             adjusted answers and symbol checks need (kind
//                                               'exFactors' or 'instruments'), one JSON document per
//                                               symbol as the adapter last sent it (since version 3)
//   ledger(kind, name, day, updated_at, data)    primary key (kind, name, day): the recorder's own
//                                                 records (since version 4): kind 'run' (a job's
//                                                 progress per market, period and trading day),
//                                                 'members' (a universe's membership per day) and
//                                                 'series' (a recorded series: kept by the recorder's
//                                                 retention, not the store's; name adapter/symbol/period)
// Version 1 kept one row per bar in `bars`; step 2 creates `blocks`, the backend moves every bar
// into it (its `convertV1` in the same transaction) and drops `bars`. Step 3 adds `reference`,
// step 4 `ledger`.
export const SCHEMA_VERSION = 4;

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
    // scaled bar takes ~53 bytes instead of ~82 (measured, docs/store.md).
    `CREATE TABLE bars (series INTEGER NOT NULL, ts INTEGER NOT NULL, open REAL NOT NULL, high REAL NOT NULL,
       low REAL NOT NULL, close REAL NOT NULL, volume INTEGER NOT NULL, amount REAL NOT NULL, prev_close REAL,
       scaled INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (series, ts)) WITHOUT ROWID`,
    `CREATE TABLE coverage (series INTEGER NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL, recheck_at INTEGER,
       PRIMARY KEY (series, lo)) WITHOUT ROWID`,
  ],
  // A rowid table: blobs of 1–15 KB are too wide for WITHOUT ROWID's b-tree (SQLite's advice is
  // rows under a twentieth of a page there).
  [`CREATE TABLE blocks (series INTEGER NOT NULL, block INTEGER NOT NULL, n INTEGER NOT NULL, data BLOB NOT NULL,
     PRIMARY KEY (series, block))`],
  [`CREATE TABLE reference (kind TEXT NOT NULL, adapter TEXT NOT NULL, symbol TEXT NOT NULL, fetched_at INTEGER NOT NULL,
     data TEXT NOT NULL, PRIMARY KEY (kind, adapter, symbol))`],
  [`CREATE TABLE ledger (kind TEXT NOT NULL, name TEXT NOT NULL, day TEXT NOT NULL, updated_at INTEGER NOT NULL,
     data TEXT NOT NULL, PRIMARY KEY (kind, name, day))`],
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
  [
    `CREATE TABLE %s.blocks (series integer NOT NULL, block integer NOT NULL, n integer NOT NULL, data bytea NOT NULL,
       PRIMARY KEY (series, block))`,
    // The blobs are already compact integers: out of line without pglz, which cost CPU per write.
    `ALTER TABLE %s.blocks ALTER COLUMN data SET STORAGE EXTERNAL`,
  ],
  [
    `CREATE TABLE %s.reference (kind text NOT NULL, adapter text NOT NULL, symbol text NOT NULL, fetched_at bigint NOT NULL,
       data text NOT NULL, PRIMARY KEY (kind, adapter, symbol))`,
  ],
  [
    `CREATE TABLE %s.ledger (kind text NOT NULL, name text NOT NULL, day text NOT NULL, updated_at bigint NOT NULL,
       data text NOT NULL, PRIMARY KEY (kind, name, day))`,
  ],
];
