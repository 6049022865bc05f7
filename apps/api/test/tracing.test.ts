import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postPlant } from '#test/http-request';
import { logLines, MAIN_TEST_TOKEN, type RunningMain, startBuiltMain, startBuiltWorker } from '#test/main-process';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '#test/otlp-receiver';
import { describeWithPostgres } from '#test/postgres-test-database';
import { processFixtures, registerEndpoint } from '#test/process-fixtures';
import type { WebhookReceiver } from '#test/webhook-receiver';

/**
 * Traces from the built service (scripts/build.ts, the code `pnpm start`, the bundle and the image
 * run), with an OTLP/HTTP receiver in this process standing in for the collector.
 */

const API_DIR = join(import.meta.dirname, '..');
// Under apps/api, so that the build finds the service's node_modules; its own directory, so that no
// other test's build of dist/ changes it under this one.
mkdirSync(join(API_DIR, '.artifacts'), { recursive: true });
const built = mkdtempSync(join(API_DIR, '.artifacts', 'tracing-build-'));
/** Preloaded with --import: prints every module of OpenTelemetry and its loader hooks the process resolves. */
const REPORTER = join(built, 'report-opentelemetry.mjs');

beforeAll(async () => {
  await promisify(execFile)(process.execPath, ['scripts/build.ts', built], { cwd: API_DIR });
  writeFileSync(
    REPORTER,
    `import { registerHooks } from 'node:module';
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    if (/\\/(@opentelemetry|import-in-the-middle|require-in-the-middle)\\//.test(resolved.url)) {
      process.stderr.write('resolved ' + resolved.url + '\\n');
    }
    return resolved;
  },
});
`,
  );
}, 60_000);

afterAll(() => rmSync(built, { recursive: true, force: true }));

const { dataDir, receiver, database } = processFixtures('plant_tracing');
const receivers: OtlpReceiver[] = [];
afterAll(async () => {
  for (const otlp of receivers) await otlp.close();
});

const otlpReceiver = async (): Promise<OtlpReceiver> => {
  const otlp = await startOtlpReceiver();
  receivers.push(otlp);
  return otlp;
};

const SERVER = 2;
const CLIENT = 3;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';

const tracedEnv = (otlp: OtlpReceiver) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_BSP_SCHEDULE_DELAY: '20',
});

const baseEnv = (storage: Record<string, string>) => ({
  ...storage,
  PLANT_API_TOKENS: MAIN_TEST_TOKEN,
  PLANT_WEBHOOKS_ALLOW_PRIVATE: 'true',
  // Successes are logged at debug only.
  LOG_LEVEL: 'debug',
  // Loading the SDK at start keeps a busy machine's event loop behind for a moment: the one create
  // these tests send must not be shed for it.
  PLANT_MAX_EVENT_LOOP_DELAY_MS: '0',
  NODE_OPTIONS: `--import=${REPORTER}`,
});

/**
 * Registers `hook`, then creates a plant as a caller in trace TRACE_ID would; resolves with the
 * delivery the receiver got.
 */
const createTracedPlant = async (service: RunningMain, hook: WebhookReceiver, id: bigint) => {
  const endpoint = await registerEndpoint(service.url, hook.url);
  const created = await postPlant(
    service.url,
    MAIN_TEST_TOKEN,
    { id, name: 'Traced' },
    { headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01` } },
  );
  expect(created.status, created.text).toBe(200);
  const [delivery] = await hook.waitFor(1);
  return { endpoint, delivery };
};

const inTrace = (otlp: OtlpReceiver) => otlp.spans().filter((span) => span.traceId === TRACE_ID);

/** The spans of the create's trace once `names` have all arrived. */
const traceWith = (otlp: OtlpReceiver, ...names: string[]): Promise<ReceivedSpan[]> =>
  otlp.waitFor(() => {
    const spans = inTrace(otlp);
    return names.every((name) => spans.some((span) => span.name === name)) ? spans : undefined;
  });

const named = (spans: ReceivedSpan[], name: string): ReceivedSpan => {
  const span = spans.find((candidate) => candidate.name === name);
  if (span === undefined) throw new Error(`No span ${name} in ${JSON.stringify(spans)}`);
  return span;
};

/** The request's span, its route's, and the trace continued from the caller's traceparent. */
const expectRequestSpans = (spans: ReceivedSpan[]) => {
  const server = named(spans, 'POST /plants');
  expect(server).toMatchObject({
    kind: SERVER,
    parentSpanId: CALLER_SPAN_ID,
    serviceName: 'plant-store',
    attributes: { 'http.route': '/plants', 'http.response.status_code': 200 },
  });
  const route = named(spans, 'request handler - /plants');
  expect(route.attributes).toMatchObject({ 'http.route': '/plants', 'express.type': 'request_handler' });
  return { server, route };
};

/** The delivery went out in the create's trace, as a child of the attempt's span, which says what happened. */
const expectDeliveryInTrace = async (
  otlp: OtlpReceiver,
  delivery: { headers: Record<string, unknown> } | undefined,
  endpointId: string,
) => {
  const traceparent = String(delivery?.headers.traceparent);
  expect(traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
  const spans = await traceWith(otlp, 'webhook attempt');
  const attempt = named(spans, 'webhook attempt');
  expect(traceparent.split('-')[2]).toBe(attempt.spanId);
  expect(attempt).toMatchObject({
    kind: CLIENT,
    attributes: {
      'webhook.endpoint.id': endpointId,
      'webhook.id': delivery?.headers['webhook-id'],
      'webhook.attempt': 1,
      'webhook.outcome': 'delivered',
      'http.response.status_code': 200,
    },
  });
  return attempt;
};

/** The log line of the create carries its trace id and the id of one of its spans. */
const expectLoggedInTrace = (service: RunningMain, spans: ReceivedSpan[]) => {
  const line = logLines(service.stdout()).find(
    (candidate) => (candidate.req as { url?: string; method?: string } | undefined)?.url === '/plants',
  );
  expect(line).toMatchObject({ trace_id: TRACE_ID, msg: 'request completed' });
  expect(spans.map((span) => span.spanId)).toContain(line?.span_id);
};

describe('tracing in the built service', () => {
  it('on SQLite: one trace from the caller through the route and the store to the webhook receiver, and the log line in it', async () => {
    const otlp = await otlpReceiver();
    const hook = await receiver();
    const service = await startBuiltMain(join(built, 'main.js'), {
      ...baseEnv({ PLANT_DATA_DIR: dataDir('plant-tracing-') }),
      ...tracedEnv(otlp),
    });
    const { endpoint, delivery } = await createTracedPlant(service, hook, 1n);

    const spans = await traceWith(otlp, 'POST /plants', 'request handler - /plants', 'sqlite create');
    const { route } = expectRequestSpans(spans);
    const store = named(spans, 'sqlite create');
    expect(store).toMatchObject({
      kind: CLIENT,
      parentSpanId: route.spanId,
      attributes: { 'db.system.name': 'sqlite', 'db.operation.name': 'create', 'db.operation.batch.size': 1 },
    });
    // Made in the delivery thread, a child of the store's span that wrote the outbox row.
    const attempt = await expectDeliveryInTrace(otlp, delivery, endpoint.id);
    expect(attempt.parentSpanId).toBe(store.spanId);
    expectLoggedInTrace(service, spans);
    expect(service.stderr()).toContain('/@opentelemetry/sdk-node/');
  }, 60_000);

  it('loads nothing of OpenTelemetry when no OTEL_ variable asks for traces, and sends no traceparent', async () => {
    const hook = await receiver();
    const service = await startBuiltMain(
      join(built, 'main.js'),
      baseEnv({ PLANT_DATA_DIR: dataDir('plant-untraced-') }),
    );
    const { delivery } = await createTracedPlant(service, hook, 2n);
    expect(delivery?.headers.traceparent).toBeUndefined();
    // prom-client requires @opentelemetry/api (the no-op API, for exemplars) whatever the configuration.
    expect(service.stderr()).toContain('/@opentelemetry/api/');
    expect(service.stderr()).not.toMatch(/\/(@opentelemetry\/(?!api\/)|import-in-the-middle|require-in-the-middle)/);
  }, 60_000);
});

describeWithPostgres('tracing in the built service on PostgreSQL', () => {
  /**
   * A traced API-only replica and a webhook worker process on one fresh database, the worker with
   * `workerEnv` beside the usual settings; resolves to the replica.
   */
  const startApiAndWorker = async (otlp: OtlpReceiver, workerEnv: NodeJS.ProcessEnv) => {
    const { url } = await database();
    const api = await startBuiltMain(join(built, 'main.js'), {
      ...baseEnv({ DATABASE_URL: url, PLANT_DATA_DIR: dataDir('plant-tracing-api-') }),
      ...tracedEnv(otlp),
      PLANT_WEBHOOK_DELIVERY: 'false',
    });
    await startBuiltWorker(join(built, 'worker.js'), { ...baseEnv({ DATABASE_URL: url }), ...workerEnv });
    return api;
  };

  it('puts the pg span in the create’s trace, and delivers in that trace', async () => {
    const otlp = await otlpReceiver();
    const hook = await receiver();
    const { url } = await database();
    const service = await startBuiltMain(join(built, 'main.js'), {
      ...baseEnv({ DATABASE_URL: url, PLANT_DATA_DIR: dataDir('plant-tracing-pg-') }),
      ...tracedEnv(otlp),
    });
    const { endpoint, delivery } = await createTracedPlant(service, hook, 3n);

    const spans = await otlp.waitFor(() => {
      const found = inTrace(otlp);
      return found.some((span) => span.scope === '@opentelemetry/instrumentation-pg') &&
        found.some((span) => span.name === 'request handler - /plants')
        ? found
        : undefined;
    });
    expectRequestSpans(spans);
    const query = spans.find(
      (span) => span.scope === '@opentelemetry/instrumentation-pg' && span.attributes['db.query.text'] !== undefined,
    );
    expect(query?.attributes).toMatchObject({ 'db.system.name': 'postgresql' });
    expect(String(query?.attributes['db.query.text'])).toContain('INSERT INTO plants');
    expect(query?.kind).toBe(CLIENT);
    await expectDeliveryInTrace(otlp, delivery, endpoint.id);
    expectLoggedInTrace(service, spans);
  }, 60_000);

  it('traces the attempts of a webhook worker process in the trace of the create an API replica served', async () => {
    const otlp = await otlpReceiver();
    const hook = await receiver();
    const api = await startApiAndWorker(otlp, { ...tracedEnv(otlp), OTEL_SERVICE_NAME: 'plant-store-worker' });
    const { endpoint, delivery } = await createTracedPlant(api, hook, 4n);
    const attempt = await expectDeliveryInTrace(otlp, delivery, endpoint.id);
    expect(attempt.serviceName).toBe('plant-store-worker');
    // The create's span as the API replica stored it with the outbox event: its route's.
    const route = named(await traceWith(otlp, 'request handler - /plants'), 'request handler - /plants');
    expect(attempt.parentSpanId).toBe(route.spanId);
  }, 60_000);

  it('has a webhook worker process that does not trace send the traceparent the create stored', async () => {
    const otlp = await otlpReceiver();
    const hook = await receiver();
    const api = await startApiAndWorker(otlp, {});
    const { delivery } = await createTracedPlant(api, hook, 5n);
    const route = named(await traceWith(otlp, 'request handler - /plants'), 'request handler - /plants');
    expect(delivery?.headers.traceparent).toBe(`00-${TRACE_ID}-${route.spanId}-01`);
  }, 60_000);
});
