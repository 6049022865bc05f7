import { describe, inject } from 'vitest';
import { createTestDatabase, type TestDatabase } from './postgres-server.ts';

/** The shared test server (see postgres-global-setup.ts), or '' when no PostgreSQL is installed. */
export const postgresAdminUrl = (): string => inject('postgresAdminUrl');

/** `describe`, skipped when no PostgreSQL is installed (the global setup prints why, once). */
export const describeWithPostgres = describe.skipIf(postgresAdminUrl() === '');

/** A fresh database on the shared test server. */
export const freshDatabase = (prefix?: string): Promise<TestDatabase> => {
  const adminUrl = postgresAdminUrl();
  if (adminUrl === '') throw new Error('No PostgreSQL test server is running.');
  return createTestDatabase(adminUrl, prefix);
};
