/**
 * (a) The practical limit: POST /plants on bare node:http into a Map, with only the checks that
 * cost next to nothing (bearer token equality, field types, create-or-replay by id). Anything the
 * real service does beyond this is overhead to be justified.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen } from './listen.ts';

type Plant = { name: string; tag?: string };

const expected = `Bearer ${process.env.BENCH_TOKEN}`;
const plants = new Map<number, Plant>();

const answer = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
};

const parse = (text: string): ({ id: number } & Plant) | undefined => {
  try {
    const value = JSON.parse(text) as { id?: unknown; name?: unknown; tag?: unknown } | null;
    if (typeof value?.id !== 'number' || !Number.isInteger(value.id) || typeof value.name !== 'string') return;
    if (value.tag !== undefined && typeof value.tag !== 'string') return;
    return value.tag === undefined
      ? { id: value.id, name: value.name }
      : { id: value.id, name: value.name, tag: value.tag };
  } catch {
    return;
  }
};

const failure = (status: number, message: string): [number, unknown] => [status, { error: status, message }];

/** The status and body answering one request. */
const handle = (req: IncomingMessage, text: string): [number, unknown] => {
  if (req.method !== 'POST' || req.url !== '/plants') return failure(404, 'Not found.');
  if (req.headers.authorization !== expected) return failure(401, 'Unauthorized.');
  const plant = parse(text);
  if (!plant) return failure(400, 'Invalid plant.');
  const stored = plants.get(plant.id);
  if (stored && (stored.name !== plant.name || stored.tag !== plant.tag)) return failure(409, 'Conflict.');
  const body: Plant = plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag };
  if (!stored) plants.set(plant.id, body);
  return [200, body];
};

listen((req, res) => {
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    text += chunk;
  });
  req.on('end', () => answer(res, ...handle(req, text)));
});
