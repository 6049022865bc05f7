/**
 * The PostgreSQL pool's defaults, apart from the store so that config.ts can read them without
 * the start-up bundle loading `pg` on SQLite.
 */
export const POSTGRES_DEFAULTS = { poolSize: 10, connectTimeoutMs: 5_000, statementTimeoutMs: 5_000 } as const;
