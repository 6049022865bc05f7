declare module 'node:http' {
  interface IncomingMessage {
    /** The request id: a sane incoming `X-Request-Id`, or a new UUID. Set by the request logger. */
    id: string;
  }
}

export {};
