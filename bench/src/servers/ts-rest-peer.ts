/**
 * (b) The peer: what a team writes by default with the same stack (@ts-rest/express, express, zod
 * from the catalog): `express.json()`, Express's default settings (etag, x-powered-by, extended
 * query parser), a bearer check as global middleware, zod validation of the body (peer-app.ts),
 * and a Map. It does the same job as our API minus durability, logging and the hardening: so our
 * API beating it means the extra work is paid for by removing overhead, not by doing less.
 */
import { listen } from './listen.ts';
import { type Plant, peerApp } from './peer-app.ts';

const plants = new Map<number, Plant>();

listen(
  peerApp(async ({ body: { id, ...plant } }) => {
    const stored = plants.get(id);
    if (stored && (stored.name !== plant.name || stored.tag !== plant.tag)) {
      return { status: 409, body: { error: 409, message: 'Conflict.' } };
    }
    if (!stored) plants.set(id, plant);
    return { status: 200, body: plant };
  }),
);
