import { type Agent, type IncomingHttpHeaders, request } from 'node:http';
import { CodedError } from '../../src/coded-error.ts';

export type HttpAnswer = { status: number; headers: IncomingHttpHeaders; text: string; json(): unknown };

export type HttpRequestOptions = {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as is: JSON text, so that ids beyond 2^53 stay exact. */
  body?: string;
  agent?: Agent | false;
  /** The whole exchange must finish within this, or the request fails with code 'TEST_TIMEOUT'. */
  timeoutMs?: number;
};

/** An HTTP failure without an answer: `code` is the socket error (ECONNREFUSED, ECONNRESET…) or TEST_TIMEOUT. */
export class NoAnswerError extends CodedError {
  override readonly name = 'NoAnswerError';
}

/** A plain node:http request, so that tests control connections and timeouts exactly. */
export const httpRequest = (
  url: string,
  { method = 'GET', headers = {}, body, agent, timeoutMs = 15_000 }: HttpRequestOptions = {},
): Promise<HttpAnswer> =>
  new Promise((resolve, reject) => {
    const outgoing = request(url, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(agent !== undefined && { agent }),
    });
    const timer = setTimeout(() => {
      outgoing.destroy(new NoAnswerError(`${method} ${url} got no answer within ${timeoutMs} ms`, 'TEST_TIMEOUT'));
    }, timeoutMs);
    outgoing.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(error instanceof NoAnswerError ? error : new NoAnswerError(error.message, error.code ?? 'ERROR'));
    });
    outgoing.once('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      response.once('end', () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json: () => JSON.parse(text) });
      });
      response.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(new NoAnswerError(error.message, error.code ?? 'ERROR'));
      });
    });
    outgoing.end(body);
  });

/** POST /plants with a bearer token; `id` is written as a JSON integer, exactly. */
export const postPlant = (
  baseUrl: string,
  token: string,
  plant: { id: bigint; name: string; tag?: string },
  options: Omit<HttpRequestOptions, 'method' | 'body'> = {},
): Promise<HttpAnswer> =>
  httpRequest(`${baseUrl}/plants`, {
    ...options,
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...options.headers },
    body: `{"id":${plant.id},"name":${JSON.stringify(plant.name)}${plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`}}`,
  });
