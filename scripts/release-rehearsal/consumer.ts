/**
 * A consumer team's program, as the release rehearsal installs and runs it: @org/plant-client from
 * the registry, type-checked strictly, then run against a live API. It subscribes a webhook
 * receiver of its own, creates, reads and lists a plant, provokes typed errors, and verifies the
 * delivery that the service sends for the plant. Prints one JSON line of what it saw.
 *
 *   node dist/consumer.js <baseUrl> <token>
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import {
  ConflictError,
  createPlantClient,
  NotFoundError,
  PlantApiError,
  type PlantClient,
  type PlantWithId,
} from '@org/plant-client';
import { PlantWebhookVerificationError, verifyPlantWebhook } from '@org/plant-client/webhooks';

const [baseUrl = '', token = ''] = process.argv.slice(2);
const plants: PlantClient = createPlantClient({ baseUrl, token, maxRetries: 1, timeoutMs: 10_000 });
const id = 2n ** 62n + 7n;

// The types are the contract's: these lines must fail to type-check.
// @ts-expect-error name is required
void (() => plants.createPlant({ id: 1 }));
// @ts-expect-error ids are numbers or bigints
void (() => plants.getPlant('1'));

type Delivery = { headers: IncomingHttpHeaders; body: string };
let delivered: (delivery: Delivery) => void = () => {};
const delivery = new Promise<Delivery>((resolve) => {
  delivered = resolve;
});
const receiver = createServer((request, response) => {
  let body = '';
  request.setEncoding('utf8').on('data', (chunk: string) => {
    body += chunk;
  });
  request.on('end', () => {
    response.writeHead(204).end();
    delivered({ headers: request.headers, body });
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const address = receiver.address();
const receiverUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/plants`;

const endpoint = await plants.createWebhook({ url: receiverUrl, description: 'release rehearsal' });
const created = await plants.createPlant({ id, name: 'Fern', tag: 'rehearsal' });
const read: PlantWithId = await plants.getPlant(id);
const listed: string[] = [];
for await (const plant of plants.listPlants({ tag: 'rehearsal' })) listed.push(String(plant.id));
const conflict = await plants.createPlant({ id, name: 'Cactus' }).catch((error: unknown) => error);
const missing = await plants.getPlant(id + 1n).catch((error: unknown) => error);

const timeout = setTimeout(() => {
  console.error('No webhook delivery within 30 s.');
  process.exit(1);
}, 30_000);
const { headers, body } = await delivery;
clearTimeout(timeout);
receiver.close();
const verified = verifyPlantWebhook(endpoint.secret, body, headers);
const forged = (() => {
  try {
    return verifyPlantWebhook(endpoint.secret, body.replace('Fern', 'Fake'), headers);
  } catch (error) {
    return error;
  }
})();

console.log(
  JSON.stringify({
    created,
    readIdExact: read.id === id,
    listed,
    conflict: ConflictError.isInstance(conflict) && conflict.status,
    missing: NotFoundError.isInstance(missing) && PlantApiError.isInstance(missing) && missing.status,
    webhook: { id: String(verified.id), name: verified.name, exact: verified.id === id },
    forgedRefused: PlantWebhookVerificationError.isInstance(forged) && forged.reason,
  }),
);
