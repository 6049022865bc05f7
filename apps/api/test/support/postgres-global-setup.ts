import type { TestProject } from 'vitest/node';
import { findPostgres, postgresMissingMessage, startPostgresServer } from './postgres-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the shared test server's maintenance database; empty when no PostgreSQL is installed. */
    postgresAdminUrl: string;
  }
}

/** Starts one PostgreSQL server for the test run and stops it afterwards, whatever the outcome. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (findPostgres() === undefined) {
    // CI must exercise PostgreSQL: a silent skip there would hide the whole backend.
    if (process.env.CI) throw new Error(postgresMissingMessage());
    console.warn(postgresMissingMessage());
    project.provide('postgresAdminUrl', '');
    return async () => {};
  }
  // Without fsync: many small databases are created here. The durability tests (postgres-faults)
  // run on a server of their own, with fsync on.
  const server = await startPostgresServer({ fsync: false });
  project.provide('postgresAdminUrl', server.adminUrl);
  return () => server.destroy();
}
