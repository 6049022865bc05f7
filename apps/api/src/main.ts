/**
 * The service's entry point. The embedded store's worker thread takes tens of milliseconds to start
 * (measured), so once the configuration is known to be good it starts first, and boots on the other
 * core while the rest of the service loads.
 */
import { ConfigError, loadConfig } from './config.ts';
import { SqlitePlantStore } from './store/sqlite-store.ts';

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}
const sqlite = config.database ? undefined : SqlitePlantStore.open(config.dataDir);
// Awaited, and its failure reported, by startService.
sqlite?.catch(() => {});
const { startService } = await import('./service.ts');
await startService(config, sqlite);
