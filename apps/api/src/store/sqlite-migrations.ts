/** Versioned schema changes, applied in order at start; `PRAGMA user_version` records the last. */
export const sqliteMigrations: readonly string[] = [
  `CREATE TABLE plants (
     id   INTEGER PRIMARY KEY,
     name TEXT NOT NULL,
     tag  TEXT
   ) STRICT`,
  // Listing by tag walks this index in id order.
  'CREATE INDEX plants_tag_id ON plants (tag, id)',
];
