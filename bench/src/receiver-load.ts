import { request } from 'node:http';
import { post } from './server-process.ts';
import { BENCH_HEADERS, plantBody } from './targets.ts';

/** What the receiver scenarios share: subscribing a receiver, and creates made one at a time. */

/** Subscribes `url` to the API's plants; throws unless registered. */
export const subscribe = async (api: string, url: string): Promise<void> => {
  const answer = await post(`${api}/webhooks`, BENCH_HEADERS, JSON.stringify({ url }));
  if (answer.status !== 201) throw new Error(`POST /webhooks answered ${answer.status} ${answer.body}`);
};

/** One create, answered 200, on a connection of its own. */
export const create = (api: string, id: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const body = plantBody(id);
    const req = request(
      `${api}/plants`,
      { method: 'POST', agent: false, headers: { ...BENCH_HEADERS, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`POST /plants answered ${res.statusCode}`));
        res.resume().on('end', () => resolve());
      },
    );
    req.on('error', reject);
    req.end(body);
  });
