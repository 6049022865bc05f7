/**
 * (g) The PostgreSQL peer: what a team writes by default with the same stack and `pg`, without
 * tuning: (b)'s app (peer-app.ts: `express.json()`, Express's defaults, a bearer check, zod validation) storing
 * in PostgreSQL through `pg`'s Pool with its defaults, one `INSERT … ON CONFLICT DO NOTHING` per
 * request, then a `SELECT` of the stored row when the id was taken. Every answer waits for its own
 * commit, as ours does; it announces nothing (no outbox) and keeps no per-id order.
 */
import pg from 'pg';
import { listen } from './listen.ts';
import { peerApp } from './peer-app.ts';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
await pool.query('CREATE TABLE IF NOT EXISTS plants (id int8 PRIMARY KEY, name text NOT NULL, tag text)');

listen(
  peerApp(async ({ body: { id, name, tag } }) => {
    const inserted = await pool.query('INSERT INTO plants (id, name, tag) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      id,
      name,
      tag ?? null,
    ]);
    if (inserted.rowCount === 0) {
      const { rows } = await pool.query<{ name: string; tag: string | null }>(
        'SELECT name, tag FROM plants WHERE id = $1',
        [id],
      );
      const stored = rows[0];
      if (stored && (stored.name !== name || (stored.tag ?? undefined) !== tag)) {
        return { status: 409, body: { error: 409, message: 'Conflict.' } };
      }
    }
    return { status: 200, body: tag === undefined ? { name } : { name, tag } };
  }),
  () => pool.end(),
);
