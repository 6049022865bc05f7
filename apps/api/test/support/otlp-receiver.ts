import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/HTTP JSON export carries it, flattened: ids in hex, attributes by key. */
export type ReceivedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  scope: string;
  serviceName: unknown;
  attributes: Record<string, unknown>;
};

/** One POST to /v1/traces. */
export type TraceExport = { contentType: string; body: Buffer };

export type OtlpReceiver = {
  /** `http://127.0.0.1:<port>`: the OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  exports: TraceExport[];
  /** Every span of the JSON exports so far. */
  spans(): ReceivedSpan[];
  /** Resolves once `done` holds for what arrived (checked at each export); rejects after `timeoutMs`. */
  waitFor<T>(done: (receiver: OtlpReceiver) => T | undefined, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
};

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type KeyValue = { key: string; value: AnyValue };
type JsonExport = {
  resourceSpans: {
    resource: { attributes: KeyValue[] };
    scopeSpans: {
      scope: { name: string };
      spans: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes: KeyValue[];
      }[];
    }[];
  }[];
};

const plainValue = ({ stringValue, intValue, boolValue, doubleValue }: AnyValue): unknown =>
  stringValue ?? (intValue === undefined ? undefined : Number(intValue)) ?? boolValue ?? doubleValue;

const attributesOf = (list: KeyValue[]): Record<string, unknown> =>
  Object.fromEntries(list.map(({ key, value }) => [key, plainValue(value)]));

const spansOf = (body: Buffer): ReceivedSpan[] =>
  (JSON.parse(body.toString('utf8')) as JsonExport).resourceSpans.flatMap(({ resource, scopeSpans }) =>
    scopeSpans.flatMap(({ scope, spans }) =>
      spans.map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        kind: span.kind,
        scope: scope.name,
        serviceName: attributesOf(resource.attributes)['service.name'],
        attributes: attributesOf(span.attributes),
      })),
    ),
  );

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 and an ephemeral port, as a collector would be: it keeps
 * every export and answers 200. JSON exports (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) are read into
 * spans; protobuf ones are kept as bytes.
 */
export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const exports: TraceExport[] = [];
  const listeners = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        exports.push({ contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
        for (const listener of listeners) listener();
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver: OtlpReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    spans: () =>
      exports
        .filter(({ contentType }) => contentType.startsWith('application/json'))
        .flatMap(({ body }) => spansOf(body)),
    waitFor: (done, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const value = done(receiver);
          if (value === undefined) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve(value);
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`Not received within ${timeoutMs} ms; spans: ${JSON.stringify(receiver.spans())}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
};
