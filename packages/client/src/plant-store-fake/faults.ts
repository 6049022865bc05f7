import { type Answer, errorAnswer } from './answers.ts';
import { ROUTE_NAMES, type RouteName } from './routes.ts';

/** What a faulty call gets instead of (or besides) its answer. */
export type PlantStoreFault =
  /** 429 with Retry-After, as the service's per-token limit answers. */
  | { type: 'rate-limit'; retryAfterSeconds?: number }
  /** 503 with Retry-After, as the service answers while its store is unavailable. */
  | { type: 'unavailable'; retryAfterSeconds?: number }
  /** 500 with the service's generic message. */
  | { type: 'internal-error' }
  /** The call is carried out (a create is stored), then the answer is lost: fetch rejects. */
  | { type: 'lost-answer' }
  /** The answer comes after `ms` milliseconds (sooner if the caller's signal aborts). */
  | { type: 'delay'; ms: number }
  /** No connection: fetch rejects and nothing is done. */
  | { type: 'connection-error' };

export type FaultOptions = {
  /** How many calls get the fault; 1 by default, Infinity for every call until `clearFaults()`. */
  times?: number;
  /** Only calls of this contract route (`createPlant`, `listPlants`, …). */
  route?: RouteName;
};

type Rule = { fault: PlantStoreFault; left: number; route: RouteName | undefined };

const FAULT_TYPES = ['rate-limit', 'unavailable', 'internal-error', 'lost-answer', 'delay', 'connection-error'];

const checked = (fault: PlantStoreFault, { times = 1, route }: FaultOptions): Rule => {
  if (route !== undefined && !ROUTE_NAMES.includes(route)) {
    throw new RangeError(
      `Unknown route ${JSON.stringify(route)} in a fault rule; the routes are ${ROUTE_NAMES.join(', ')}.`,
    );
  }
  if (!FAULT_TYPES.includes(fault?.type)) {
    throw new RangeError(`Unknown fault type ${JSON.stringify(fault?.type)}; the types are ${FAULT_TYPES.join(', ')}.`);
  }
  if (!(times === Number.POSITIVE_INFINITY || (Number.isInteger(times) && times > 0))) {
    throw new RangeError(`times must be a positive integer or Infinity (got ${times}).`);
  }
  if (fault.type === 'delay' && !(Number.isFinite(fault.ms) && fault.ms >= 0)) {
    throw new RangeError(`A delay fault needs ms, a finite number of milliseconds from 0 (got ${fault.ms}).`);
  }
  return { fault, left: times, route };
};

/** Fault rules, taken in the order they were added: the first that matches a call is spent on it. */
export class Faults {
  #rules: Rule[] = [];

  add(fault: PlantStoreFault, options: FaultOptions = {}): void {
    this.#rules.push(checked(fault, options));
  }

  clear(): void {
    this.#rules = [];
  }

  /** The fault for one call of `route`, if a rule has one left. */
  take(route: RouteName): PlantStoreFault | undefined {
    const rule = this.#rules.find((candidate) => candidate.route === undefined || candidate.route === route);
    if (rule === undefined) return undefined;
    rule.left -= 1;
    if (rule.left === 0) this.#rules = this.#rules.filter((candidate) => candidate !== rule);
    return rule.fault;
  }
}

/** The answer a status fault stands for, worded as the service words it; undefined for the others. */
export const faultAnswer = (fault: PlantStoreFault): Answer | undefined => {
  switch (fault.type) {
    case 'rate-limit': {
      const seconds = fault.retryAfterSeconds ?? 1;
      return errorAnswer(429, `Too many requests with this token; retry after ${seconds} s.`, {
        'retry-after': String(seconds),
      });
    }
    case 'unavailable':
      return errorAnswer(503, 'The plant store is temporarily unavailable; retry later.', {
        'retry-after': String(fault.retryAfterSeconds ?? 1),
      });
    case 'internal-error':
      return errorAnswer(500, 'Internal server error.');
    default:
      return undefined;
  }
};

const DROPPED = Symbol.for('@org/plant-client/testing/dropped-connection');

/** What fetch rejects with when no answer comes: undici's error, marked for adapters (`isDroppedConnection`). */
export const connectionError = (): TypeError =>
  Object.assign(
    new TypeError('fetch failed', { cause: new Error('The Plant Store fake dropped the connection (a fault rule).') }),
    { [DROPPED]: true },
  );

/** Whether `error` is a fault's lost answer or dropped connection, which an adapter turns into its own. */
export const isDroppedConnection = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[DROPPED] === true;

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export const wait = (ms: number, signal: AbortSignal | null | undefined): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
