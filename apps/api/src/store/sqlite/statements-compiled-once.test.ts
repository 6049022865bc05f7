import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteMigrations } from './migrations.ts';
import { plantStatements } from './plants.ts';
import { requestStatements } from './requests.ts';
import { webhookStatements } from './webhook-statements.ts';

const dir = mkdtempSync(join(tmpdir(), 'plant-statements-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A database as the service opens it: migrated, then opened afresh (its schema read from the file). */
const openDatabase = (): DatabaseSync => {
  const file = join(dir, 'plants.db');
  const migrating = new DatabaseSync(file);
  for (const sql of sqliteMigrations) migrating.exec(sql);
  migrating.close();
  return new DatabaseSync(file);
};

const db = openDatabase();
const webhooks = webhookStatements(db);
const plants = plantStatements(db);
const requests = requestStatements(db);
/** SQLite asks the authorizer while it compiles a statement, and only then. */
let compiled = 0;
db.setAuthorizer(() => {
  compiled += 1;
  return 0;
});

/**
 * Each statement the thread runs while creating, announcing, delivering and serving requests, with
 * values of the types it is given there; `i` changes them from run to run.
 */
const RUNS: Record<string, (i: number) => unknown> = {
  'plants.insert': (i) => plants.insert.run(BigInt(i), i % 2 ? null : 'green', `{"id":${i},"name":"Fern"}`),
  'plants.select': (i) => plants.select.get(BigInt(i)),
  'plants.remove': (i) => plants.remove.run(BigInt(i)),
  'plants.removeReturning': (i) => plants.removeReturning.get(BigInt(i)),
  'plants.lists': (i) => {
    plants.lists[0][0].all({ limit: i + 1, maxBytes: 262_144 });
    plants.lists[0][1].all({ limit: i + 1, maxBytes: 262_144, tag: `tag ${i}` });
    plants.lists[1][0].all({ limit: i + 1, maxBytes: 262_144, after: BigInt(i) });
    plants.lists[1][1].all({ limit: i + 1, maxBytes: 262_144, after: BigInt(i), tag: `tag ${i}` });
  },
  announce: (i) => webhooks.announce.run('newPlant', BigInt(i), `{"id":${i}}`, 1_700_000_000_000 + i, null),
  enabledCount: () => webhooks.enabledCount.get(),
  fanOutBound: (i) => webhooks.fanOutBound.get({ limit: 100 + i, last: BigInt(i) }),
  fanOut: (i) => webhooks.fanOut.run({ upTo: BigInt(i) }),
  fannedOut: (i) => webhooks.fannedOut.run({ upTo: BigInt(i) }),
  lastEvent: () => webhooks.lastEvent.get(),
  eventUpTo: (i) => webhooks.eventUpTo.get(BigInt(i)),
  claimEndpoints: () => webhooks.claimEndpoints.all(),
  rateOf: (i) => webhooks.rateOf.get(`whk_${i}`),
  advanceRate: (i) => webhooks.advanceRate.run(1.5 + i, `whk_${i}`),
  dueOf: (i) => webhooks.dueOf.all(`whk_${i}`, 1_700_000_000_000 + i, 10 + i),
  lease: (i) => webhooks.lease.run(BigInt(i), 1_700_000_000_000 + i, `token ${i}`),
  claimed: (i) => webhooks.claimed.get(BigInt(i), 1_700_000_000_000 + i),
  record: (i) =>
    webhooks.record.run(
      BigInt(i),
      `token ${i}`,
      i % 2 ? 'delivered' : 'retry',
      200 + i,
      i % 2 ? null : 'Connection failed: ECONNREFUSED.',
      i % 2 ? null : 1_700_000_000_000 + i,
      1_700_000_000_000 + i,
    ),
  streakEnds: (i) => webhooks.streakEnds.run(`whk_${i}`),
  streakStarts: (i) => webhooks.streakStarts.run(1_700_000_000_000 + i, `whk_${i}`),
  disable: (i) => webhooks.disable.run({ id: `whk_${i}`, reason: 'failing', since: 1_700_000_000_000 + i }),
  pruneFinished: (i) => webhooks.pruneFinished.run(1_700_000_000_000 + i, 100 + i),
  backlog: () => webhooks.backlog.get(),
  eventBacklog: () => webhooks.eventBacklog.get(),
  backlogByEndpoint: (i) => webhooks.backlogByEndpoint.all(10 + i),
  getEndpoint: (i) => webhooks.getEndpoint.get(`whk_${i}`),
  listOwnedEndpoints: (i) => webhooks.listOwnedEndpoints.all(`team ${i}`),
  listDeliveries: (i) => webhooks.listDeliveries.all(`whk_${i}`, BigInt(1000 + i), 50 + i),
  signingSecrets: (i) => webhooks.signingSecrets.get({ id: `whk_${i}`, now: 1_700_000_000_000 + i }),
  requeueFailed: (i) =>
    webhooks.requeueFailed.run({
      id: `whk_${i}`,
      since: 1_600_000_000_000 + i,
      limit: 100 + i,
      now: 1_700_000_000_000,
    }),
  expediteRetries: (i) => webhooks.expediteRetries.run({ id: `whk_${i}`, limit: 100 + i, now: 1_700_000_000_000 + i }),
  retryDelivery: (i) => webhooks.retryDelivery.run({ id: `whk_${i}`, seq: BigInt(i), now: 1_700_000_000_000 + i }),
  keyGet: (i) => requests.keyGet.get(`key ${i}`),
  keysLive: (i) => requests.keysLive.get(`team ${i}`, 1_700_000_000_000 + i),
  keyClaim: (i) => requests.keyClaim.run(`key ${i}`, `team ${i}`, `fingerprint ${i}`, 1_700_000_000_000 + i),
  keyFinish: (i) => requests.keyFinish.run(200 + i, '{}', `key ${i}`, `fingerprint ${i}`),
  keyRelease: (i) => requests.keyRelease.run(`key ${i}`, `fingerprint ${i}`),
  keyExpire: (i) => requests.keyExpire.run(`key ${i}`, 1_700_000_000_000 + i, 1_700_000_000_000 + i),
  keysPrune: (i) => requests.keysPrune.run(1_700_000_000_000 + i, 100 + i),
  windowGet: (i) => requests.windowGet.get(`window ${i}`),
  windowOpen: (i) => requests.windowOpen.run(`window ${i}`, 1_700_000_000_000 + i),
  windowTake: (i) => requests.windowTake.run(`window ${i}`),
  windowsPrune: (i) => requests.windowsPrune.run(1_700_000_000_000 + i, 100 + i),
};

describe('the embedded store’s statements', () => {
  // A statement compiled again at each run costs tens of thousands of instructions (see
  // webhook-statements.ts): binding new values must not make SQLite plan it anew.
  it.each(Object.keys(RUNS))('%s is compiled once, whatever values it is given', (name) => {
    const run = RUNS[name] as (i: number) => unknown;
    db.exec('BEGIN');
    try {
      run(1); // The first run may compile what preparing left to it.
      const before = compiled;
      for (let i = 2; i < 6; i++) run(i);
      expect(compiled - before).toBe(0);
    } finally {
      db.exec('ROLLBACK');
    }
  });

  it('notices a statement compiled again at each run', () => {
    // A bare LIMIT parameter is read by the planner: the case webhook-statements.ts avoids.
    const bare = db.prepare('SELECT seq FROM webhook_deliveries ORDER BY seq LIMIT ?');
    bare.all(1);
    const before = compiled;
    for (let i = 2; i < 6; i++) bare.all(i);
    expect(compiled - before).toBeGreaterThan(0);
  });
});
