/**
 * Load as a busy upstream makes it: `connections` keep-alive connections, each creating plants back
 * to back, from a process of its own so that the service's event loop is not shared with it.
 *
 *   node keep-alive-load.ts <baseUrl> <token> [connections] [durationMs] [maxRequests]
 *
 * Prints `{"warm":true}` once 100 creates were acknowledged, then one JSON summary line when every
 * connection stopped: on its first refused connection (the listener is closed: the request never
 * reached the service), on any other failure, or when time or the request budget runs out.
 * A reset or hang-up on a request that was written counts as a failure: it may have reached the service.
 */
import { Agent } from 'node:http';
import { type NoAnswerError, postPlant } from './http-request.ts';

export type LoadSummary = {
  /** Requests answered, by status. */
  statuses: Record<string, number>;
  /** Answers that asked for the connection to close: every answer of the drain has it. */
  closeAnswers: number;
  /** Connections refused (or reset while connecting): the listener was closed, so those requests were never sent. */
  refused: number;
  /** Requests that got no answer for any other reason (ECONNRESET, socket hang up, EPIPE, timeout)… */
  failed: number;
  /** …and the first few of them. */
  failures: { id: string; code: string; message: string }[];
  elapsedMs: number;
};

const [baseUrl, token, connections = '20', durationMs = '15000', maxRequests = '200000'] = process.argv.slice(2);
if (baseUrl === undefined || token === undefined) {
  console.error('usage: node keep-alive-load.ts <baseUrl> <token> [connections] [durationMs] [maxRequests]');
  process.exit(2);
}

const summary: LoadSummary = {
  statuses: {},
  closeAnswers: 0,
  refused: 0,
  failed: 0,
  failures: [],
  elapsedMs: 0,
};
const started = Date.now();
const deadline = started + Number(durationMs);
let budget = Number(maxRequests);
let acknowledged = 0;
// Distinct from run to run, and far from the small ids other tests use.
let nextId = 2n ** 61n + BigInt(process.pid) * 10n ** 9n;

const worker = async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    while (Date.now() < deadline && budget-- > 0) {
      const id = nextId++;
      try {
        // Every request must be answered; how soon is not the point, so the wait is generous: 10 s
        // was overrun by a surge of 4,000 connections on a busy machine (pnpm test:stress).
        const answer = await postPlant(baseUrl, token, { id, name: `Load ${id}` }, { agent, timeoutMs: 30_000 });
        summary.statuses[answer.status] = (summary.statuses[answer.status] ?? 0) + 1;
        if (answer.headers.connection === 'close') summary.closeAnswers += 1;
        if (answer.status === 200 && ++acknowledged === 100) console.log(JSON.stringify({ warm: true }));
      } catch (error) {
        const { code, message } = error as NoAnswerError;
        // Refused, or reset while connecting: the request was never written.
        if (code === 'ECONNREFUSED' || message.startsWith('connect ')) summary.refused += 1;
        else if (++summary.failed <= 10) summary.failures.push({ id: String(id), code, message });
        return;
      }
    }
  } finally {
    agent.destroy();
  }
};

await Promise.all(Array.from({ length: Number(connections) }, worker));
summary.elapsedMs = Date.now() - started;
console.log(JSON.stringify(summary));
