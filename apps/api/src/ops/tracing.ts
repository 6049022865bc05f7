/**
 * OpenTelemetry traces, started by `@opentelemetry/sdk-node` from the standard OTEL_* variables.
 * Imported only when config.ts found them asking for traces (`config.tracing`): with nothing set,
 * nothing of OpenTelemetry loads. main.ts and worker.ts import it before the modules it instruments.
 */
import { register } from 'node:module';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { AttemptSpan, StoreSpan, Tracing } from './tracing-hooks.ts';

/** The service name when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one. */
export const DEFAULT_SERVICE_NAME = 'plant-store';

/**
 * The npm modules the instrumentations patch. The service's bundle imports them as ES modules, which
 * only import-in-the-middle's loader hook can patch; limited to these, it leaves every other module
 * as it is. (node:http is patched through require-in-the-middle when Express requires it.)
 */
const HOOKED_MODULES = ['express', 'pg', 'pino'];

const TRACER = 'plant-store';

/**
 * How long shutdown waits for the last spans to be exported: a collector that does not answer must
 * not hold the exit past the stop budget (drain and grace fit in `docker stop`'s 10 s).
 */
const SHUTDOWN_EXPORT_MS = 2_000;

type Carrier = { traceparent?: string; tracestate?: string };
const carrierGetter: TextMapGetter<Carrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key as keyof Carrier],
};

/** The W3C traceparent of `span` (none when it is not a valid span). */
const traceparentOf = (span: Span | undefined): string | undefined => {
  if (span === undefined) return undefined;
  const carrier: Carrier = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier.traceparent;
};

const recordError = (span: Span, error: unknown): void => {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
};

export type TracingOptions = {
  /**
   * Patch express, pg, pino and node:http (the service's threads and processes); false where only
   * hand-made spans are made (the webhook delivery thread).
   */
  instrument: boolean;
  env?: NodeJS.ProcessEnv;
};

/** Starts the SDK; resolves with the hooks the stores and the delivery loop use. */
export const startTracing = async ({ instrument, env = process.env }: TracingOptions): Promise<Tracing> => {
  const instrumentations = [];
  if (instrument) {
    register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: HOOKED_MODULES } });
    const [{ HttpInstrumentation }, { ExpressInstrumentation }, { PgInstrumentation }, { PinoInstrumentation }] =
      await Promise.all([
        import('@opentelemetry/instrumentation-http'),
        import('@opentelemetry/instrumentation-express'),
        import('@opentelemetry/instrumentation-pg'),
        import('@opentelemetry/instrumentation-pino'),
      ]);
    instrumentations.push(
      // Outgoing requests are webhook deliveries, each traced by its attempt's own span, whose
      // traceparent it sends: a client span of the instrumentation would replace that header.
      new HttpInstrumentation({ disableOutgoingRequestInstrumentation: true }),
      new ExpressInstrumentation(),
      new PgInstrumentation(),
      // Log lines get trace_id and span_id; they are sent as OTLP logs only when OTEL_LOGS_EXPORTER asks.
      new PinoInstrumentation({ disableLogSending: !env.OTEL_LOGS_EXPORTER || env.OTEL_LOGS_EXPORTER === 'none' }),
    );
  }
  const named = env.OTEL_SERVICE_NAME || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    instrumentations,
    ...(!named && { serviceName: DEFAULT_SERVICE_NAME }),
    // Traces are what is asked for: metrics stay Prometheus's (/metrics) and logs stdout's, unless
    // OTEL_METRICS_EXPORTER or OTEL_LOGS_EXPORTER asks the SDK for more.
    ...(!env.OTEL_METRICS_EXPORTER && { metricReaders: [] }),
    ...(!env.OTEL_LOGS_EXPORTER && { logRecordProcessors: [] }),
  });
  sdk.start();
  const tracer = trace.getTracer(TRACER);

  return {
    storeOperation(operation): StoreSpan {
      const span = tracer.startSpan(`sqlite ${operation}`, {
        kind: SpanKind.CLIENT,
        attributes: { 'db.system.name': 'sqlite', 'db.operation.name': operation },
      });
      return {
        traceparent: traceparentOf(span),
        end(batchSize, error) {
          // How many operations shared this one's transaction (its group commit).
          span.setAttribute('db.operation.batch.size', batchSize);
          if (error !== undefined) recordError(span, error);
          span.end();
        },
      };
    },
    traceparent: () => traceparentOf(trace.getSpan(context.active())),
    deliveryAttempt(parent, { endpointId, webhookId, attempt }): AttemptSpan {
      const parentContext =
        parent === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, { traceparent: parent }, carrierGetter);
      const span = tracer.startSpan(
        'webhook attempt',
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'http.request.method': 'POST',
            'webhook.endpoint.id': endpointId,
            'webhook.id': webhookId,
            'webhook.attempt': attempt,
          },
        },
        parentContext,
      );
      return {
        traceparent: traceparentOf(span),
        end(outcome, status) {
          span.setAttribute('webhook.outcome', outcome);
          if (status !== undefined) span.setAttribute('http.response.status_code', status);
          if (outcome !== 'delivered') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
          span.end();
        },
      };
    },
    shutdown: () =>
      Promise.race([sdk.shutdown(), new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_EXPORT_MS).unref())]),
  };
};
