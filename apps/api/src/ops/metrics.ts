import type { Request, RequestHandler } from 'express';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { ShedReason } from '../http/admission.ts';
import { type PlantStore, StoreUnavailableError } from '../store/plant-store.ts';
import { type HistogramSeries, SeriesHistogram } from './series-histogram.ts';

export type PoolStats = { total: number; idle: number; waiting: number };

export type MetricsOptions = {
  /** Process metrics (CPU, memory, event loop lag, GC); default true. */
  processMetrics?: boolean;
  /** The database connection pool, when the store has one. */
  poolStats?: () => PoolStats;
  /** Log lines dropped so far because the log output's buffer was full (ops/log-output.ts). */
  droppedLogLines?: () => number;
};

export type Metrics = {
  readonly registry: Registry;
  /** Counts and times every request, once answered, by method, route and status. */
  readonly observeRequests: RequestHandler;
  /** Answers GET /metrics in the Prometheus text format. */
  readonly expose: RequestHandler;
  /** The same store, with each operation timed and each failure counted. */
  instrumentStore(store: PlantStore): PlantStore;
  /** Counts a request shed by admission control (answered 503 before the app saw it). */
  countShed(reason: ShedReason): void;
  /**
   * Adds metrics kept elsewhere (another thread's registry) to every scrape: `collect` answers
   * them in the text format, with metric names of their own.
   */
  include(collect: () => Promise<string>): void;
};

/** Routes are labelled by their pattern, never the raw path, so that ids cannot explode the series. */
const UNMATCHED_ROUTE = '(unmatched)';

/** The pattern that answered: the contract's route (ts-rest marks it), or an Express route of ours. */
const routePattern = (req: Request & { tsRestRoute?: { path: string } }): string => {
  if (req.tsRestRoute) return req.tsRestRoute.path;
  const route = req.route as { path?: unknown } | undefined;
  return typeof route?.path === 'string' ? `${req.baseUrl}${route.path}` : UNMATCHED_ROUTE;
};

const STORE_OPERATIONS = ['create', 'get', 'list', 'delete', 'health'] as const;

/** Prometheus metrics on a registry of their own, so that several apps in one process do not collide. */
export const createMetrics = ({ processMetrics = true, poolStats, droppedLogLines }: MetricsOptions = {}): Metrics => {
  const registry = new Registry();
  if (processMetrics) collectDefaultMetrics({ register: registry });

  const labelNames = ['method', 'route', 'status'] as const;
  const duration = new SeriesHistogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by method, route pattern and status.',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  // Metrics a request would update are read when scraped instead: the count is the histogram's own,
  // the requests in flight a variable (prom-client hashes the labels at every update).
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, count } of duration.counts()) this.inc(labels, count);
    },
  });
  let unanswered = 0;
  new Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests received and not yet answered.',
    registers: [registry],
    collect() {
      this.set(unanswered);
    },
  });
  const storeErrors = new Counter({
    name: 'plant_store_errors_total',
    help: 'Failed store operations, by operation and kind (unavailable: answered 503; unexpected: answered 500).',
    labelNames: ['operation', 'kind'] as const,
    registers: [registry],
  });
  const storeDuration = new SeriesHistogram({
    name: 'plant_store_operation_duration_seconds',
    help: 'Time spent in store operations, by operation and outcome.',
    labelNames: ['operation', 'outcome'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const shed = new Counter({
    name: 'plant_http_requests_shed_total',
    help: 'Requests answered 503 by admission control before reaching the app, by the bound reached (in_flight, connections, event_loop_delay).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  // Every reason from the start, so that a rate over the series is defined before the first shed.
  for (const reason of ['in_flight', 'connections', 'event_loop_delay'] as const) shed.inc({ reason }, 0);
  if (poolStats) {
    new Gauge({
      name: 'plant_store_pool_connections',
      help: 'Database connections of this process: total open, idle, and requests waiting for one.',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const stats = poolStats();
        this.set({ state: 'total' }, stats.total);
        this.set({ state: 'idle' }, stats.idle);
        this.set({ state: 'waiting' }, stats.waiting);
      },
    });
  }
  if (droppedLogLines) {
    new Counter({
      name: 'plant_log_lines_dropped_total',
      help: 'Log lines dropped because stdout could not keep up and the log buffer (PLANT_LOG_BUFFER_BYTES) was full.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(droppedLogLines());
      },
    });
  }

  const observeRequests: RequestHandler = (req, res, next) => {
    const started = performance.now();
    unanswered += 1;
    // 'close' follows every response, finished or cut off, once: one listener (`on`: a `once`
    // wrapper would cost an allocation and a removal per request), no timer closure.
    res.on('close', () => {
      unanswered -= 1;
      duration
        .series(req.method, routePattern(req), String(res.statusCode))
        .observe((performance.now() - started) / 1000);
    });
    next();
  };

  const included: (() => Promise<string>)[] = [];
  const expose: RequestHandler = (_req, res, next) => {
    Promise.all([registry.metrics(), ...included.map((collect) => collect())]).then((texts) => {
      // Exactly the exposition format's type: res.type() would rewrite its parameters.
      res.setHeader('Content-Type', registry.contentType);
      res.end(texts.map((text) => (text.endsWith('\n') || text === '' ? text : `${text}\n`)).join(''));
    }, next);
  };

  const instrumentStore = (store: PlantStore): PlantStore => {
    const timed = <A extends unknown[], R>(
      operation: (typeof STORE_OPERATIONS)[number],
      run: (...args: A) => Promise<R>,
    ) => {
      let ok: HistogramSeries | undefined;
      let failed: HistogramSeries | undefined;
      return async (...args: A): Promise<R> => {
        const started = performance.now();
        try {
          const result = await run(...args);
          ok ??= storeDuration.series(operation, 'ok');
          ok.observe((performance.now() - started) / 1000);
          return result;
        } catch (error) {
          failed ??= storeDuration.series(operation, 'error');
          failed.observe((performance.now() - started) / 1000);
          storeErrors.inc({ operation, kind: error instanceof StoreUnavailableError ? 'unavailable' : 'unexpected' });
          throw error;
        }
      };
    };
    return {
      create: timed('create', (plant) => store.create(plant)),
      get: timed('get', (id) => store.get(id)),
      list: timed('list', (options) => store.list(options)),
      delete: timed('delete', (id) => store.delete(id)),
      health: timed('health', () => store.health()),
      alive: () => store.alive(),
      close: () => store.close(),
      webhooks: store.webhooks,
      requests: store.requests,
    };
  };

  const countShed = (reason: ShedReason) => shed.inc({ reason });

  return {
    registry,
    observeRequests,
    expose,
    instrumentStore,
    countShed,
    include: (collect) => included.push(collect),
  };
};
