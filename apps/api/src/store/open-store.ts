import type { Config } from '../config.ts';
import type { Tracing } from '../ops/tracing-hooks.ts';
import type { PlantStore } from './plant-store.ts';
import { SqlitePlantStore } from './sqlite/sqlite-store.ts';

/** A store on its way to open, and where its failures that nobody awaits are reported. */
export type OpeningStore = {
  store: Promise<PlantStore>;
  /**
   * An idle PostgreSQL connection dropped by the server, for one: the service points `report` at
   * its logger once it has one; until then such a failure is a process warning.
   */
  backgroundErrors: { report(error: Error): void };
};

/**
 * Starts opening the configured store (tracing its operations when `tracing` is set), to be called
 * once tracing started and before the rest of the service loads: the embedded store's thread
 * boots on the other core, and PostgreSQL connects, migrates or checks the schema in its own
 * processes, while this thread loads Express and the routes.
 */
export const openStore = (
  config: Pick<Config, 'database' | 'dataDir' | 'admission'>,
  tracing?: Tracing,
): OpeningStore => {
  const backgroundErrors = { report: (error: Error) => process.emitWarning(error) };
  const { database } = config;
  if (!database) return { store: SqlitePlantStore.open(config.dataDir, { tracing }), backgroundErrors };
  // pg loads only on PostgreSQL.
  const store = import('./postgres/postgres-store.ts').then(({ PostgresPlantStore }) =>
    PostgresPlantStore.open({
      ...database,
      onBackgroundError: (error) => backgroundErrors.report(error),
      // Admission bounds the requests in flight, each with one operation pending at a time; the
      // pool's queue can hold no more. The delivery thread has a pool of its own.
      maxPending: config.admission.maxInFlight + 1,
      ...(tracing && { tracing }),
    }),
  );
  return { store, backgroundErrors };
};
