/**
 * (g) The PostgreSQL peer: what a team writes by default with the same stack and `pg`, without
 * tuning: (b)'s app (`express.json()`, Express's defaults, a bearer check, zod validation) storing
 * in PostgreSQL through `pg`'s Pool with its defaults, one `INSERT … ON CONFLICT DO NOTHING` per
 * request, then a `SELECT` of the stored row when the id was taken. Every answer waits for its own
 * commit, as ours does; it announces nothing (no outbox) and keeps no per-id order.
 */
import type { AddressInfo } from 'node:net';
import { initContract } from '@ts-rest/core';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import express, { type RequestHandler } from 'express';
import pg from 'pg';
import { z } from 'zod';

const c = initContract();

const ApiError = z.object({ error: z.number(), message: z.string() });
const Plant = z.object({ name: z.string().min(1).max(200), tag: z.string().min(1).max(100).optional() });

const contract = c.router({
  createPlant: {
    method: 'POST',
    path: '/plants',
    body: Plant.extend({ id: z.number().int() }),
    responses: { 200: Plant, 401: ApiError, 409: ApiError },
  },
});

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
await pool.query('CREATE TABLE IF NOT EXISTS plants (id int8 PRIMARY KEY, name text NOT NULL, tag text)');

const expected = `Bearer ${process.env.BENCH_TOKEN}`;

const bearer: RequestHandler = (req, res, next) => {
  if (req.headers.authorization === expected) return next();
  res.status(401).json({ error: 401, message: 'Unauthorized.' });
};

const router = initServer().router(contract, {
  createPlant: async ({ body: { id, name, tag } }) => {
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
  },
});

const app = express();
app.use(express.json());
createExpressEndpoints(contract, router, app, { globalMiddleware: [bearer] });

const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ msg: 'listening', url: `http://${address}:${port}` }));
});
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
