/**
 * What the service asks of tracing, as plain types: the stores and the delivery loop hold one of
 * these only when tracing is on (ops/tracing.ts makes it), so that with tracing off nothing of
 * OpenTelemetry is loaded and each hook costs one undefined check.
 */

/** The plant operations of the embedded store, which no instrumentation sees (it runs in a thread of its own). */
export type StoreOperation = 'create' | 'get' | 'list' | 'delete';

export type StoreSpan = {
  /** The span's W3C traceparent: kept with the outbox event of a create. */
  readonly traceparent: string | undefined;
  /** Ends it once its batch answered: how many operations shared that group commit, and whether it failed. */
  end(batchSize: number, error?: unknown): void;
};

/** One webhook delivery attempt as the delivery loop reports it. */
export type AttemptFacts = {
  endpointId: string;
  /** The webhook-id header, the same for every attempt of a delivery. */
  webhookId: string;
  /** 1 for the first attempt. */
  attempt: number;
};

export type AttemptSpan = {
  /** Sent as the attempt's traceparent header: the receiver's work joins the create's trace. */
  readonly traceparent: string | undefined;
  end(outcome: string, status?: number): void;
};

export type Tracing = {
  /** A span for an operation of the embedded store, a child of the caller's. */
  storeOperation(operation: StoreOperation): StoreSpan;
  /** The traceparent of the caller's span (a PostgreSQL create keeps it with its outbox event). */
  traceparent(): string | undefined;
  /** A span for a delivery attempt, a child of the create's (`parent`, as stored with the outbox row). */
  deliveryAttempt(parent: string | undefined, facts: AttemptFacts): AttemptSpan;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
};
