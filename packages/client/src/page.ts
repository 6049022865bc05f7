import { abortErrorFor, PlantClientError } from './errors.ts';
import { PlantPromise, type WithResponse } from './plant-promise.ts';

/**
 * One page of a list, and the way on: `for await` over a page goes through its items and then every
 * later page's, fetching each as the iteration gets there.
 */
export type PlantPage<T> = AsyncIterable<T> & {
  /** This page's items. */
  readonly data: T[];
  /** Where the next page starts (pass it as `cursor`), or undefined on the last page. */
  readonly nextCursor: string | undefined;
  hasNextPage(): boolean;
  /** The next page; rejects with a PlantClientError on the last one. */
  getNextPage(): PagePromise<T>;
};

/** What one request for a page gives: its items and the cursor of the next. */
export type PageAnswer<T> = WithResponse<{ items: T[]; nextCursor: string | undefined }>;

/** Fetches the page at `cursor` (undefined: the first). */
export type FetchPage<T> = (cursor: string | undefined) => Promise<PageAnswer<T>>;

/**
 * A list call's promise: awaited it is the first page (`.withResponse()` too); iterated with
 * `for await` it is every item of every page.
 */
export class PagePromise<T> extends PlantPromise<PlantPage<T>> implements AsyncIterable<T> {
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    yield* await this;
  }
}

const createPage = <T>(
  items: T[],
  nextCursor: string | undefined,
  fetchPage: FetchPage<T>,
  signal: AbortSignal | undefined,
): PlantPage<T> => {
  const page: PlantPage<T> = {
    data: items,
    nextCursor,
    hasNextPage: () => nextCursor !== undefined,
    getNextPage: () =>
      nextCursor === undefined
        ? new PagePromise(Promise.reject(new PlantClientError('This is the last page: check hasNextPage() first.')))
        : requestPage(fetchPage, nextCursor, signal),
    async *[Symbol.asyncIterator]() {
      let current = page;
      for (;;) {
        for (const item of current.data) {
          // An abort stops the iteration at once, not at the next page's request.
          if (signal?.aborted) throw abortErrorFor(signal);
          yield item;
        }
        if (!current.hasNextPage()) return;
        current = await current.getNextPage();
      }
    },
  };
  return page;
};

/** The page at `cursor`, as a PagePromise whose pages fetch the following ones the same way. */
export const requestPage = <T>(
  fetchPage: FetchPage<T>,
  cursor: string | undefined,
  signal: AbortSignal | undefined,
): PagePromise<T> =>
  new PagePromise(
    fetchPage(cursor).then(({ data, response, requestId }) => ({
      data: createPage(data.items, data.nextCursor, fetchPage, signal),
      response,
      requestId,
    })),
  );
