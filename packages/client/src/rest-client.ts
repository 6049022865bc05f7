import { contract, type PlantContract } from '@org/plant-contract';
import { type AppRouter, type InitClientReturn, initClient, isAppRoute } from '@ts-rest/core';
import { exactJsonBody } from './exact-body.ts';
import type { PlantClientOptions } from './options.ts';
import { createPlantApi, type PlantApi } from './plant-api.ts';
import { hasAuthorization } from './request-headers.ts';

export type PlantRestClientOptions = PlantClientOptions & {
  /**
   * ts-rest's option: run every answer's body through the contract's schema for its status (a
   * mismatch throws ts-rest's ResponseValidationError). Off by default.
   */
  validateResponse?: boolean;
};

/** The arguments ts-rest's `initClient` gets; the calls' types follow from them and the contract. */
type PlantRestClientArgs = {
  baseUrl: string;
  /** `defaultHeaders`; the token and the retry count are added to each attempt by the api. */
  baseHeaders: Record<string, string>;
  api: PlantApi;
  /** Query values are strings in the contract, sent as they are. */
  jsonQuery: false;
  throwOnUnknownStatus: boolean;
  validateResponse?: boolean;
};

/**
 * ts-rest's client for the Plant Store contract: one function per route, taking `params`, `query`,
 * `body`, `extraHeaders`, `fetchOptions` (e.g. `{ signal }`) and this client's `timeoutMs` and `maxRetries`, and
 * resolving to `{ status, body, headers }` as the contract types them.
 */
export type PlantRestClient = InitClientReturn<PlantContract, PlantRestClientArgs>;

type RouteCall = (args?: { body?: unknown }) => Promise<unknown>;

/**
 * The client with every JSON-body route made to send bigints digit for digit: ts-rest writes the
 * body with a plain JSON.stringify, so it is handed one that can be written (see `exactJsonBody`).
 */
const withExactBodies = <Client>(client: Client, router: AppRouter): Client =>
  Object.fromEntries(
    Object.entries(router).map(([key, route]) => {
      const call = (client as Record<string, unknown>)[key];
      if (!isAppRoute(route)) return [key, withExactBodies(call, route)];
      const sendsJson =
        route.method !== 'GET' && (!('contentType' in route) || route.contentType === 'application/json');
      if (!sendsJson) return [key, call];
      const send = call as RouteCall;
      const exactSend: RouteCall = (args) => {
        const body = exactJsonBody(args?.body);
        return send(body === args?.body ? args : { ...args, body });
      };
      return [key, exactSend];
    }),
  ) as Client;

/**
 * The ts-rest client both public clients are built on: URLs, path parameters, query strings, JSON
 * bodies and headers come from ts-rest's `initClient`; sending them is `createPlantApi`'s.
 */
export const initPlantRestClient = (
  options: PlantRestClientOptions,
  { throwOnUnknownStatus }: { throwOnUnknownStatus: boolean },
): PlantRestClient => {
  const baseHeaders = { ...options.defaultHeaders };
  if (hasAuthorization(baseHeaders)) {
    throw new RangeError('defaultHeaders cannot set Authorization: it comes from the token option.');
  }
  const args: PlantRestClientArgs = {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    baseHeaders,
    api: createPlantApi(options),
    jsonQuery: false,
    throwOnUnknownStatus,
  };
  if (options.validateResponse !== undefined) args.validateResponse = options.validateResponse;
  return withExactBodies(initClient(contract, args), contract);
};

/**
 * The Plant Store API as ts-rest's client, for teams that prefer its `{ status, body, headers }`
 * answers (or its query integrations) to `createPlantClient`'s methods and errors. Same options,
 * same exact int64 ids (bigints sent and read digit for digit), timeouts, retries and `fetch`.
 * Every status the contract lists resolves; another one (after its retries, for a 5xx) rejects with
 * ts-rest's UnknownStatusError, so that the answer's type holds. No answer at all rejects with
 * PlantConnectionError or PlantTimeoutError, as `createPlantClient` does.
 *
 * ```ts
 * const plants = createPlantRestClient({ baseUrl, token });
 * const answer = await plants.getPlant({ params: { id: '9007199254740993' }, timeoutMs: 2_000 });
 * if (answer.status === 200) console.log(answer.body.name);
 * ```
 */
export const createPlantRestClient = (options: PlantRestClientOptions): PlantRestClient =>
  initPlantRestClient(options, { throwOnUnknownStatus: true });
