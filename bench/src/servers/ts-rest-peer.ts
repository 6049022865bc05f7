/**
 * (b) The peer: what a team writes by default with the same stack (@ts-rest/express, express, zod
 * from the catalog): `express.json()`, Express's default settings (etag, x-powered-by, extended
 * query parser), a bearer check as global middleware, zod validation of the body, and a Map.
 * It does the same job as our API minus durability, logging and the hardening: so our API beating
 * it means the extra work is paid for by removing overhead, not by doing less.
 */
import type { AddressInfo } from 'node:net';
import { initContract } from '@ts-rest/core';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import express, { type RequestHandler } from 'express';
import { z } from 'zod';

const c = initContract();

const ApiError = z.object({ error: z.number(), message: z.string() });
const Plant = z.object({ name: z.string().min(1).max(200), tag: z.string().min(1).max(100).optional() });
type Plant = z.infer<typeof Plant>;

const contract = c.router({
  createPlant: {
    method: 'POST',
    path: '/plants',
    body: Plant.extend({ id: z.number().int() }),
    responses: { 200: Plant, 401: ApiError, 409: ApiError },
  },
});

const expected = `Bearer ${process.env.BENCH_TOKEN}`;
const plants = new Map<number, Plant>();

const bearer: RequestHandler = (req, res, next) => {
  if (req.headers.authorization === expected) return next();
  res.status(401).json({ error: 401, message: 'Unauthorized.' });
};

const router = initServer().router(contract, {
  createPlant: async ({ body: { id, ...plant } }) => {
    const stored = plants.get(id);
    if (stored && (stored.name !== plant.name || stored.tag !== plant.tag)) {
      return { status: 409, body: { error: 409, message: 'Conflict.' } };
    }
    if (!stored) plants.set(id, plant);
    return { status: 200, body: plant };
  },
});

const app = express();
app.use(express.json());
createExpressEndpoints(contract, router, app, { globalMiddleware: [bearer] });

const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ msg: 'listening', url: `http://${address}:${port}` }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
