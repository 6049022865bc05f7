declare module 'node:http' {
  interface IncomingMessage {
    /** The request id: a sane incoming `X-Request-Id`, or a new UUID. Set by the request logger. */
    id: string;
    /** The route pattern that answered (e.g. `/plants/:id`), for metrics; unset when none matched. */
    route?: string;
  }
}

export {};
