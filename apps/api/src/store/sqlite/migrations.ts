/**
 * The columns of webhook_deliveries after its seq, as the table was first created; rebuilding it
 * (AUTOINCREMENT, below) declares them again. Applied migrations must not change: this text keeps
 * the first one as it was.
 */
const DELIVERY_COLUMNS = `     endpoint_id     TEXT NOT NULL,
     plant_id        INTEGER NOT NULL,
     name            TEXT NOT NULL,
     tag             TEXT,
     status          TEXT NOT NULL DEFAULT 'pending',
     attempts        INTEGER NOT NULL DEFAULT 0,
     last_status     INTEGER,
     last_error      TEXT,
     next_attempt_at INTEGER,
     delivered_at    INTEGER,
     lease_until     INTEGER,
     lease_token     TEXT,
     created_at      INTEGER NOT NULL`;

/**
 * An event's data as text, from the name and tag columns that events and deliveries had until the
 * plant was kept as text: the two types there were then, as WEBHOOK_EVENT_DATA_JSON writes them.
 */
const EVENT_DATA = `(SELECT iif(type = 'plantDeleted', '{"id":' || plant_id || ',"plant":' || plant || '}', plant)
     FROM (SELECT '{"id":' || plant_id || ',"name":' || json_quote(name) || iif(tag IS NULL, '', ',"tag":' || json_quote(tag)) || '}' AS plant))`;

/** Versioned schema changes, applied in order at start; `PRAGMA user_version` records the last. */
export const sqliteMigrations: readonly string[] = [
  `CREATE TABLE plants (
     id   INTEGER PRIMARY KEY,
     name TEXT NOT NULL,
     tag  TEXT
   ) STRICT`,
  // Listing by tag walks this index in id order.
  'CREATE INDEX plants_tag_id ON plants (tag, id)',
  // Webhooks: receivers, and the outbox of announcements written in the plant's own transaction.
  // Times are Unix milliseconds. The create writes one event row (no index to maintain: measured,
  // indexed delivery rows halved the store's create rate); the delivery loop fans events out to
  // one delivery per enabled endpoint, off the request path. Events and deliveries keep the plant's
  // name and tag: they announce the plant as created, even if it is deleted before the receiver
  // gets it. A delivery's webhook-id is
  // msg_<instance>_<seq>: the instance, drawn once per database, keeps ids unique across databases,
  // and the sequence keeps every index of a create's announcement an append (a random id column
  // with its own index cost creates a tenth of their throughput, measured).
  `CREATE TABLE webhook_settings (instance TEXT NOT NULL) STRICT;
   INSERT INTO webhook_settings (instance) VALUES (lower(hex(randomblob(8))));
   CREATE TABLE webhook_events (
     seq        INTEGER PRIMARY KEY,
     plant_id   INTEGER NOT NULL,
     name       TEXT NOT NULL,
     tag        TEXT,
     created_at INTEGER NOT NULL
   ) STRICT;
   CREATE TABLE webhook_endpoints (
     id          TEXT PRIMARY KEY,
     url         TEXT NOT NULL,
     description TEXT,
     secret      TEXT NOT NULL,
     enabled     INTEGER NOT NULL DEFAULT 1,
     created_at  INTEGER NOT NULL
   ) STRICT;
   CREATE TABLE webhook_deliveries (
     seq             INTEGER PRIMARY KEY,
${DELIVERY_COLUMNS}
   ) STRICT;
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
   CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq)`,
  // Webhook operations. previous_secret(_until): the secret before the last rotation, which also
  // signs deliveries until then. One endpoint per URL, enforced here so that concurrent
  // registrations cannot both win; endpoints registered before that rule and sharing an older
  // one's URL are marked duplicate_url and kept (deleting them would drop a receiver's
  // subscription) until their URL changes. The failed-deliveries index serves recover: it walks
  // one endpoint's failed deliveries by creation time, and a requeued one leaves it.
  `ALTER TABLE webhook_endpoints ADD COLUMN previous_secret TEXT;
   ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_until INTEGER;
   ALTER TABLE webhook_endpoints ADD COLUMN duplicate_url INTEGER NOT NULL DEFAULT 0;
   UPDATE webhook_endpoints SET duplicate_url = 1 WHERE EXISTS (
     SELECT 1 FROM webhook_endpoints older
     WHERE older.url = webhook_endpoints.url
       AND (older.created_at, older.id) < (webhook_endpoints.created_at, webhook_endpoints.id)
   );
   CREATE UNIQUE INDEX webhook_endpoints_url ON webhook_endpoints (url) WHERE duplicate_url = 0;
   CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (endpoint_id, created_at) WHERE status = 'failed'`,
  // Claims take turns across endpoints: each endpoint's due deliveries in order, from its own
  // range of the index. A lease moves next_attempt_at to the lease's end, so leased deliveries are
  // not due and no claim walks past them.
  // finished_at: when a delivery was delivered or failed, for retention; the deliveries finished
  // before this column existed count as finished when delivered, or (failed) when created.
  // Endpoints: why one is disabled (until then only 410 Gone disabled any), and since when every
  // attempt to it has failed (NULL while the last one was delivered), for auto-disable.
  `DROP INDEX webhook_deliveries_due;
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
   ALTER TABLE webhook_deliveries ADD COLUMN finished_at INTEGER;
   UPDATE webhook_deliveries SET finished_at = coalesce(delivered_at, created_at) WHERE status <> 'pending';
   CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE finished_at IS NOT NULL;
   ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT;
   ALTER TABLE webhook_endpoints ADD COLUMN failing_since INTEGER;
   UPDATE webhook_endpoints SET disabled_reason = 'The receiver answered 410 Gone.' WHERE NOT enabled`,
  // Tracing: the W3C traceparent of the create that announced the plant (NULL when tracing was off),
  // copied to each delivery at fan-out and sent with each attempt, so that a delivery made after a
  // restart still joins the create's trace.
  `ALTER TABLE webhook_events ADD COLUMN traceparent TEXT;
   ALTER TABLE webhook_deliveries ADD COLUMN traceparent TEXT`,
  // A webhook-id is never issued twice: receivers deduplicate on it, and would drop the second
  // delivery. A plain rowid takes the highest one plus one, so once the newest deliveries were
  // deleted (their endpoint, or retention emptying the outbox) their seqs came again; AUTOINCREMENT
  // stays above every seq the table ever held (SQLite keeps the high-water mark in sqlite_sequence).
  // The seqs issued before this version and deleted since are not known, so the instance is drawn
  // anew for every delivery to come; the deliveries kept keep their ids under the old instance
  // (legacy_instance, for seqs up to legacy_upto).
  `CREATE TABLE webhook_deliveries_autoincrement (
     seq             INTEGER PRIMARY KEY AUTOINCREMENT,
${DELIVERY_COLUMNS},
     finished_at     INTEGER,
     traceparent     TEXT
   ) STRICT;
   INSERT INTO webhook_deliveries_autoincrement
     (seq, endpoint_id, plant_id, name, tag, status, attempts, last_status, last_error, next_attempt_at,
      delivered_at, lease_until, lease_token, created_at, finished_at, traceparent)
   SELECT seq, endpoint_id, plant_id, name, tag, status, attempts, last_status, last_error, next_attempt_at,
          delivered_at, lease_until, lease_token, created_at, finished_at, traceparent
   FROM webhook_deliveries;
   DROP TABLE webhook_deliveries;
   ALTER TABLE webhook_deliveries_autoincrement RENAME TO webhook_deliveries;
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
   CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq);
   CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (endpoint_id, created_at) WHERE status = 'failed';
   CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE finished_at IS NOT NULL;
   ALTER TABLE webhook_settings ADD COLUMN legacy_instance TEXT;
   ALTER TABLE webhook_settings ADD COLUMN legacy_upto INTEGER NOT NULL DEFAULT 0;
   UPDATE webhook_settings SET
     legacy_instance = instance,
     legacy_upto = coalesce((SELECT max(seq) FROM webhook_deliveries), 0),
     instance = lower(hex(randomblob(8)))`,
  // Idempotency-Key: the first answer to a POST, kept per credential and key (digested) for 24
  // hours; a row without a status is a request still running.
  `CREATE TABLE idempotency_keys (
     key         TEXT PRIMARY KEY,
     fingerprint TEXT NOT NULL,
     created_at  INTEGER NOT NULL,
     status      INTEGER,
     body        TEXT
   ) STRICT;
   CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`,
  // Event types: an event and its deliveries say what they announce (a create, or a deletion with
  // the plant as it was), and an endpoint lists the types it receives, comma-separated; the
  // endpoints registered before this version receive creations only, as they did, in the plain
  // body; payload_format 'standard' asks for Standard Webhooks' { type, timestamp, data }.
  `ALTER TABLE webhook_events ADD COLUMN type TEXT NOT NULL DEFAULT 'newPlant';
   ALTER TABLE webhook_deliveries ADD COLUMN type TEXT NOT NULL DEFAULT 'newPlant';
   ALTER TABLE webhook_endpoints ADD COLUMN event_types TEXT NOT NULL DEFAULT 'newPlant';
   ALTER TABLE webhook_endpoints ADD COLUMN payload_format TEXT NOT NULL DEFAULT 'plain'`,
  // Rate limits: rate_limit, deliveries per second at most (NULL: none); rate_tat, in Unix ms with
  // fractions, the theoretical arrival time the claims advance (see store/rate-limit.ts).
  `ALTER TABLE webhook_endpoints ADD COLUMN rate_limit INTEGER;
   ALTER TABLE webhook_endpoints ADD COLUMN rate_tat REAL`,
  // Ownership: an endpoint belongs to the principal that registered it ('operator' for those
  // registered before, when every credential managed every endpoint). One endpoint per URL for each
  // owner: two teams may both subscribe one receiver. Listing one owner's endpoints walks its index.
  `ALTER TABLE webhook_endpoints ADD COLUMN owner TEXT NOT NULL DEFAULT 'operator';
   DROP INDEX webhook_endpoints_url;
   CREATE UNIQUE INDEX webhook_endpoints_url ON webhook_endpoints (owner, url) WHERE duplicate_url = 0;
   CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner, created_at, id)`,
  // Rotations keep every secret rotated out while its grace lasts (two rotations in a row no longer
  // drop the first): previous_secrets, a JSON array of [secret, until (Unix ms)], newest first.
  // previous_secret(_until) are no longer read; kept for the previous release's processes that a
  // rolling upgrade leaves running for a while.
  `ALTER TABLE webhook_endpoints ADD COLUMN previous_secrets TEXT;
   UPDATE webhook_endpoints SET previous_secrets = json_array(json_array(previous_secret, previous_secret_until))
   WHERE previous_secret IS NOT NULL`,
  // Requests kept per principal (see request-store.ts): an Idempotency-Key names its principal
  // (digested), whose live keys are capped; the keys kept before this version have none and only
  // expire. A test delivery's window is keyed by the principal and the endpoint's URL, so it holds
  // across replicas and across deleting and registering the endpoint again.
  `ALTER TABLE idempotency_keys ADD COLUMN principal TEXT NOT NULL DEFAULT '';
   CREATE INDEX idempotency_keys_principal ON idempotency_keys (principal, created_at);
   CREATE TABLE webhook_test_windows (
     key        TEXT PRIMARY KEY,
     started_at INTEGER NOT NULL,
     tests      INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX webhook_test_windows_started ON webhook_test_windows (started_at)`,
  // The plant's shape defined once (decision 0011): a plant is kept as its JSON text (plantJson: the
  // id's digits, then the fields in the schema's order), beside its id and the tag that listing by
  // tag walks; an event and its deliveries keep the event's data as the text its bodies are made
  // of, written in the plant's own transaction, instead of copies of the plant's columns. The text
  // is built here as plantJson builds it (json_quote escapes as JSON.stringify does), so that a
  // replay of a plant created before compares equal.
  `CREATE TABLE plants_json (
     id   INTEGER PRIMARY KEY,
     tag  TEXT,
     json TEXT NOT NULL
   ) STRICT;
   INSERT INTO plants_json (id, tag, json)
   SELECT id, tag, '{"id":' || id || ',"name":' || json_quote(name) || iif(tag IS NULL, '', ',"tag":' || json_quote(tag)) || '}'
   FROM plants;
   DROP TABLE plants;
   ALTER TABLE plants_json RENAME TO plants;
   CREATE INDEX plants_tag_id ON plants (tag, id);
   ALTER TABLE webhook_events ADD COLUMN data TEXT NOT NULL DEFAULT '';
   ALTER TABLE webhook_deliveries ADD COLUMN data TEXT NOT NULL DEFAULT '';
   UPDATE webhook_events SET data = ${EVENT_DATA};
   UPDATE webhook_deliveries SET data = ${EVENT_DATA};
   ALTER TABLE webhook_events DROP COLUMN name;
   ALTER TABLE webhook_events DROP COLUMN tag;
   ALTER TABLE webhook_deliveries DROP COLUMN name;
   ALTER TABLE webhook_deliveries DROP COLUMN tag`,
];
