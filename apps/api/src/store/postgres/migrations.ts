import type pg from 'pg';
import type { Queryable } from './deadline-pool.ts';

/**
 * Versioned schema changes, applied in order; `plant_schema_migrations` records each applied
 * version. Replicas share one database, so a change must keep working for the previous release
 * while both run during a rolling deploy (add, then use, then drop in a later release).
 */
export const postgresMigrations: readonly string[] = [
  `CREATE TABLE plants (
     id   bigint PRIMARY KEY,
     name text NOT NULL,
     tag  text
   )`,
  // Listing by tag walks this index in id order.
  'CREATE INDEX plants_tag_id ON plants (tag, id)',
  // Webhooks: receivers, and the outbox of announcements written by the plant's own statement.
  // A delivery keeps its plant's name and tag: it announces the plant as created, even if the
  // plant is deleted before the receiver gets it. lease_until/lease_token: the replica working
  // on a delivery, until when (see PostgresWebhookStore.claimDue). Its webhook-id is
  // msg_<instance>_<seq>: the instance, drawn once per database, keeps ids unique across databases,
  // and the sequence keeps every index of a create's announcement an append.
  `CREATE TABLE webhook_settings (instance text NOT NULL);
   INSERT INTO webhook_settings (instance) VALUES (substr(md5(random()::text || clock_timestamp()::text), 1, 16));
   CREATE TABLE webhook_endpoints (
     id          text PRIMARY KEY,
     url         text NOT NULL,
     description text,
     secret      text NOT NULL,
     enabled     boolean NOT NULL DEFAULT true,
     created_at  timestamptz NOT NULL
   );
   CREATE TABLE webhook_deliveries (
     seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     endpoint_id     text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
     plant_id        bigint NOT NULL,
     name            text NOT NULL,
     tag             text,
     status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
     attempts        integer NOT NULL DEFAULT 0,
     last_status     integer,
     last_error      text,
     next_attempt_at timestamptz,
     delivered_at    timestamptz,
     lease_until     timestamptz,
     lease_token     text,
     created_at      timestamptz NOT NULL DEFAULT now()
   );
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
   CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq)`,
  // Webhook operations: see the same migration in sqlite/migrations.ts.
  `ALTER TABLE webhook_endpoints
     ADD COLUMN previous_secret text,
     ADD COLUMN previous_secret_until timestamptz,
     ADD COLUMN duplicate_url boolean NOT NULL DEFAULT false;
   UPDATE webhook_endpoints e SET duplicate_url = true WHERE EXISTS (
     SELECT 1 FROM webhook_endpoints older
     WHERE older.url = e.url AND (older.created_at, older.id) < (e.created_at, e.id)
   );
   CREATE UNIQUE INDEX webhook_endpoints_url ON webhook_endpoints (url) WHERE NOT duplicate_url;
   CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (endpoint_id, created_at) WHERE status = 'failed'`,
  // Claims take turns across endpoints: each endpoint's due deliveries in order, from its own
  // range of the index. A lease moves next_attempt_at to the lease's end, so leased deliveries are
  // not due and no claim walks past them.
  // finished_at: when a delivery was delivered or failed, for retention; the deliveries finished
  // before this column existed count as finished when delivered, or (failed) when created.
  // Endpoints: why one is disabled (until then only 410 Gone disabled any), and since when every
  // attempt to it has failed (NULL while the last one was delivered), for auto-disable.
  // webhook_events: as on SQLite, a create writes one event per plant (not one delivery per
  // endpoint in its own statement); the delivery loop fans events out in bounded batches. A
  // previous release still writing deliveries during a rolling deploy is served all the same.
  `DROP INDEX webhook_deliveries_due;
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
   ALTER TABLE webhook_deliveries ADD COLUMN finished_at timestamptz;
   UPDATE webhook_deliveries SET finished_at = coalesce(delivered_at, created_at) WHERE status <> 'pending';
   CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE finished_at IS NOT NULL;
   ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT;
   ALTER TABLE webhook_endpoints ADD COLUMN failing_since timestamptz;
   UPDATE webhook_endpoints SET disabled_reason = 'The receiver answered 410 Gone.' WHERE NOT enabled;
   CREATE TABLE webhook_events (
     seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     plant_id   bigint NOT NULL,
     name       text NOT NULL,
     tag        text,
     created_at timestamptz NOT NULL DEFAULT now()
   )`,
  // Tracing: see the same migration in sqlite/migrations.ts. A previous release still running during
  // a rolling deploy writes and copies no traceparent; its deliveries go out without one.
  `ALTER TABLE webhook_events ADD COLUMN traceparent text;
   ALTER TABLE webhook_deliveries ADD COLUMN traceparent text`,
  // Idempotency-Key: the first answer to a POST, kept per credential and key (digested) for 24
  // hours; a row without a status is a request still running.
  `CREATE TABLE idempotency_keys (
     key         text PRIMARY KEY,
     fingerprint text NOT NULL,
     created_at  timestamptz NOT NULL,
     status      integer,
     body        text
   );
   CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`,
  // Event types: see the same migration in sqlite/migrations.ts. The partial index answers whether
  // any enabled endpoint receives deletions, the one read a deletion makes when none does.
  `ALTER TABLE webhook_events ADD COLUMN type text NOT NULL DEFAULT 'newPlant';
   ALTER TABLE webhook_deliveries ADD COLUMN type text NOT NULL DEFAULT 'newPlant';
   ALTER TABLE webhook_endpoints ADD COLUMN event_types text NOT NULL DEFAULT 'newPlant';
   ALTER TABLE webhook_endpoints ADD COLUMN payload_format text NOT NULL DEFAULT 'plain';
   CREATE INDEX webhook_endpoints_deletions ON webhook_endpoints (id)
     WHERE enabled AND ',' || event_types || ',' LIKE '%,plantDeleted,%'`,
  // Rate limits: see the same migration in sqlite/migrations.ts. Claims lock the rows of the
  // rate-limited endpoints to advance rate_tat, so that replicas claiming at once share the limit.
  `ALTER TABLE webhook_endpoints ADD COLUMN rate_limit integer;
   ALTER TABLE webhook_endpoints ADD COLUMN rate_tat timestamptz`,
  // Ownership: see the same migration in sqlite/migrations.ts.
  `ALTER TABLE webhook_endpoints ADD COLUMN owner text NOT NULL DEFAULT 'operator';
   DROP INDEX webhook_endpoints_url;
   CREATE UNIQUE INDEX webhook_endpoints_url ON webhook_endpoints (owner, url) WHERE NOT duplicate_url;
   CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner, created_at, id)`,
  // Rotations keep every secret rotated out while its grace lasts: see the same migration in
  // sqlite/migrations.ts (here jsonb, `until` in Unix ms by PostgreSQL's clock).
  `ALTER TABLE webhook_endpoints ADD COLUMN previous_secrets jsonb;
   UPDATE webhook_endpoints
   SET previous_secrets = jsonb_build_array(
     jsonb_build_array(previous_secret, extract(epoch FROM previous_secret_until)::float8 * 1000))
   WHERE previous_secret IS NOT NULL AND previous_secret_until IS NOT NULL`,
  // Requests kept per principal: see the same migration in sqlite/migrations.ts.
  `ALTER TABLE idempotency_keys ADD COLUMN principal text NOT NULL DEFAULT '';
   CREATE INDEX idempotency_keys_principal ON idempotency_keys (principal, created_at);
   CREATE TABLE webhook_test_windows (
     key        text PRIMARY KEY,
     started_at timestamptz NOT NULL,
     tests      integer NOT NULL
   );
   CREATE INDEX webhook_test_windows_started ON webhook_test_windows (started_at)`,
  // Event types as data: how many enabled endpoints receive each type, one row a type, so that
  // "does any enabled endpoint receive T?" (asked by every create and delete statement, T a value)
  // reads one row of a table of a few, and a new type needs no index or column of its own. It
  // replaces the partial index for deletions. A GIN index on the types' array answered too, but for
  // EXISTS the planner preferred a scan of the endpoints it expected to stop early, which read all
  // 10,000 when none matched; so did a table of (endpoint, type) pairs under a generic plan. The
  // trigger keeps the counts in step with every change of an endpoint's types or enabled flag, the
  // previous release's statements included during a rolling deploy; it changes the counts in one
  // statement, in the types' order, so that concurrent changes lock them in the same order.
  `CREATE TABLE webhook_event_receivers (
     type      text PRIMARY KEY,
     endpoints integer NOT NULL
   );
   INSERT INTO webhook_event_receivers (type, endpoints)
     SELECT type, count(*) FROM webhook_endpoints, unnest(string_to_array(event_types, ',')) AS type
     WHERE enabled GROUP BY type;
   CREATE FUNCTION webhook_event_receivers_follow() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO webhook_event_receivers AS r (type, endpoints)
       SELECT type, sum(change) FROM (
         SELECT unnest(string_to_array(OLD.event_types, ',')) AS type, -1 AS change WHERE OLD.enabled
         UNION ALL
         SELECT unnest(string_to_array(NEW.event_types, ',')), 1 WHERE NEW.enabled
       ) changes
       GROUP BY type HAVING sum(change) <> 0 ORDER BY type
       ON CONFLICT (type) DO UPDATE SET endpoints = r.endpoints + excluded.endpoints;
     RETURN NULL;
   END $$;
   CREATE TRIGGER webhook_event_receivers_follow AFTER INSERT OR DELETE ON webhook_endpoints
     FOR EACH ROW EXECUTE FUNCTION webhook_event_receivers_follow();
   CREATE TRIGGER webhook_event_receivers_follow_update AFTER UPDATE OF enabled, event_types ON webhook_endpoints
     FOR EACH ROW WHEN (OLD.enabled IS DISTINCT FROM NEW.enabled OR OLD.event_types IS DISTINCT FROM NEW.event_types)
     EXECUTE FUNCTION webhook_event_receivers_follow();
   DROP INDEX webhook_endpoints_deletions`,
  // The plant's shape defined once (@org/plant-contract's plantJson): a plant is its JSON text, and
  // an event or delivery its data's text (WEBHOOK_EVENT_DATA_JSON), written by the plant's own
  // statement; `tag` stays, the listing's filter. Text, not json (whose input the server would parse
  // at every create for nothing: the text is the contract's) nor jsonb (which reorders keys and
  // would change the bytes signed). Each table is rewritten once, by ALTER COLUMN … USING, into the
  // very text the contract writes: to_json quotes a string as JSON.stringify does (PostgreSQL text
  // holds no NUL or lone surrogate, and both leave other characters as they are). The previous
  // release writes name and cannot run beside this one (docs/operations.md, "Upgrading to plants
  // stored as JSON text").
  `ALTER TABLE plants ALTER COLUMN name TYPE text
     USING '{"id":' || id || ',"name":' || to_json(name)::text || coalesce(',"tag":' || to_json(tag)::text, '') || '}';
   ALTER TABLE plants RENAME COLUMN name TO plant;
   ALTER TABLE webhook_events ALTER COLUMN name TYPE text USING
     CASE type WHEN 'plantDeleted' THEN '{"id":' || plant_id || ',"plant":' ELSE '' END
     || '{"id":' || plant_id || ',"name":' || to_json(name)::text || coalesce(',"tag":' || to_json(tag)::text, '') || '}'
     || CASE type WHEN 'plantDeleted' THEN '}' ELSE '' END;
   ALTER TABLE webhook_events RENAME COLUMN name TO data;
   ALTER TABLE webhook_events DROP COLUMN tag;
   ALTER TABLE webhook_deliveries ALTER COLUMN name TYPE text USING
     CASE type WHEN 'plantDeleted' THEN '{"id":' || plant_id || ',"plant":' ELSE '' END
     || '{"id":' || plant_id || ',"name":' || to_json(name)::text || coalesce(',"tag":' || to_json(tag)::text, '') || '}'
     || CASE type WHEN 'plantDeleted' THEN '}' ELSE '' END;
   ALTER TABLE webhook_deliveries RENAME COLUMN name TO data;
   ALTER TABLE webhook_deliveries DROP COLUMN tag`,
];

/**
 * The advisory lock key that serialises migrations across every process on the database:
 * 'plntmigr' in ASCII, so it is recognisable in pg_locks.
 */
export const MIGRATION_LOCK_KEY = 0x706c6e746d696772n;

export class SchemaTooNewError extends Error {
  override readonly name = 'SchemaTooNewError';
}

const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS plant_schema_migrations (
  version    integer PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

const UNDEFINED_TABLE = '42P01';

/** The newest applied version, or 0 when none is (or the table does not exist yet). */
export const schemaVersion = async (client: Queryable): Promise<number> => {
  try {
    const { rows } = await client.query<{ version: number | null }>(
      'SELECT max(version) AS version FROM plant_schema_migrations',
    );
    return rows[0]?.version ?? 0;
  } catch (error) {
    if ((error as { code?: string }).code === UNDEFINED_TABLE) return 0;
    throw error;
  }
};

/**
 * Brings the schema to the newest version in one transaction, under a transaction-level advisory
 * lock: replicas that start together wait for the first, then find nothing to do. All pending
 * migrations commit together or not at all, so a failed one leaves the schema at the version the
 * running release knows, and a fresh database pays for one commit (one WAL flush) instead of one
 * per migration. The lock and the statement timeout's suspension end with the transaction, so the
 * session is as it was: the caller may use it for requests. Refuses (SchemaTooNewError) a schema
 * newer than this build knows. Resolves with the versions it applied.
 */
export const migrate = async (client: pg.ClientBase): Promise<number[]> => {
  // A migration may rewrite a large table: the statement timeout for requests does not apply here.
  // The key is a constant: written into the text, the four statements take one round trip.
  await client.query(`BEGIN;
    SET LOCAL statement_timeout = 0;
    SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY});
    ${CREATE_MIGRATIONS_TABLE}`);
  try {
    const current = await schemaVersion(client);
    if (current > postgresMigrations.length) {
      throw new SchemaTooNewError(
        `The database schema is at version ${current}, newer than this build knows (${postgresMigrations.length}); run a newer release.`,
      );
    }
    // Version n is postgresMigrations[n - 1]: the pending ones follow the current version.
    const applied = postgresMigrations.slice(current).map((sql, index) => ({ sql, version: current + index + 1 }));
    if (applied.length > 0) {
      await client.query(
        applied
          .map(({ sql, version }) => `${sql};\nINSERT INTO plant_schema_migrations (version) VALUES (${version})`)
          .join(';\n'),
      );
    }
    await client.query('COMMIT');
    return applied.map(({ version }) => version);
  } catch (error) {
    // A lost connection fails this too; ending the session rolls back and releases the lock anyway.
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
};
