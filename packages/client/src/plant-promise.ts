/** A call's result with the HTTP answer it came from. */
export type WithResponse<T> = {
  data: T;
  /** fetch's Response (its body already read into `data`): status, headers, url. */
  response: Response;
  /** The answer's `X-Request-Id`, to quote when reporting a problem. */
  requestId: string | undefined;
};

/**
 * The promise every client method returns: it resolves to the data, and `.withResponse()` to the
 * data with the answer it came from (as openai-node's APIPromise). The request is sent once,
 * whichever is awaited; a rejection is reported as unhandled only on the chain the caller awaits.
 */
export class PlantPromise<T> extends Promise<T> {
  readonly #withResponse: Promise<WithResponse<T>>;
  #data: Promise<T> | undefined;

  constructor(withResponse: Promise<WithResponse<T>>) {
    // The base promise is never awaited: then, catch and finally go to the data instead.
    super((resolve) => resolve(undefined as T));
    this.#withResponse = withResponse;
  }

  withResponse(): Promise<WithResponse<T>> {
    return this.#withResponse;
  }

  #dataPromise(): Promise<T> {
    this.#data ??= this.#withResponse.then(({ data }) => data);
    return this.#data;
  }

  // biome-ignore lint/suspicious/noThenProperty: a promise's then, going to the data rather than the base promise.
  override then<Fulfilled = T, Rejected = never>(
    onfulfilled?: ((value: T) => Fulfilled | PromiseLike<Fulfilled>) | null,
    onrejected?: ((reason: unknown) => Rejected | PromiseLike<Rejected>) | null,
  ): Promise<Fulfilled | Rejected> {
    return this.#dataPromise().then(onfulfilled, onrejected);
  }

  override catch<Rejected = never>(
    onrejected?: ((reason: unknown) => Rejected | PromiseLike<Rejected>) | null,
  ): Promise<T | Rejected> {
    return this.#dataPromise().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#dataPromise().finally(onfinally);
  }
}
