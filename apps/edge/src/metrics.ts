import {
  Counter,
  Histogram,
  Registry,
  type MetricObjectWithValues,
  type MetricValueWithName,
} from 'prom-client';
import { probeGauges } from '@ukiyo/server/process';

/** Latency buckets in seconds: cached hits are sub-millisecond, misses tens to hundreds of ms. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The edge's Prometheus metrics, on a registry of its own (a process may hold several edges,
 * as the tests do); the process entry merges it into the one it exposes. Labels stay bounded:
 * no origin names or paths.
 */
export class EdgeMetrics {
  readonly registry = new Registry();

  /** Answers not yet handed to `requests`, by cache result and status (no key built per answer). */
  private readonly unreported = new Map<string, Map<number, number>>();
  private readonly latency = new LatencyHistogram(
    'ukiyo_edge_request_duration_seconds',
    'Delivery request latency until the answer is written, by cache result',
    'cache',
  );

  readonly requests = new Counter({
    name: 'ukiyo_edge_requests_total',
    help: 'Delivery requests answered, by HTTP status and cache result (HIT, MISS, STALE, - for refusals)',
    labelNames: ['status', 'cache'] as const,
    registers: [this.registry],
    collect: () => {
      for (const [cache, byStatus] of this.unreported) {
        for (const [status, count] of byStatus) this.requests.inc({ status, cache }, count);
        byStatus.clear();
      }
    },
  });

  private readonly cacheHits = new Tally(
    this.registry,
    'ukiyo_edge_cache_hits_total',
    'Requests answered from the cache (fresh, or stale because the origin failed)',
  );

  private readonly hotPathAnswers = new Tally(
    this.registry,
    'ukiyo_edge_hot_path_answers_total',
    'Cache hits answered on the socket, without node:http (a share of the cache hits)',
  );

  private readonly cacheMisses = new Tally(
    this.registry,
    'ukiyo_edge_cache_misses_total',
    'Requests that had to produce their variant',
  );

  readonly originFetch = new Histogram({
    name: 'ukiyo_edge_origin_fetch_duration_seconds',
    help: 'Time to fetch a source image from the origin, by origin kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly transform = new Histogram({
    name: 'ukiyo_edge_transform_duration_seconds',
    help: 'Time spent transforming one variant (sharp), excluding the wait for a slot',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly refusedTransforms = new Counter({
    name: 'ukiyo_edge_transforms_refused_total',
    help: 'Transforms refused: over the cost budget (422), waiting room full, waited too long or past the deadline (503)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly purges = new Counter({
    name: 'ukiyo_edge_purges_total',
    help: 'Cache purges applied by this edge, by where they came from (local call or Redis)',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  readonly sharedLookups = new Counter({
    name: 'ukiyo_edge_shared_cache_lookups_total',
    help: 'Shared result cache (RESULT_CACHE_S3_*) lookups on a local miss, by result: hit, expired, miss, timeout, error',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly sharedWriteFailures = new Counter({
    name: 'ukiyo_edge_shared_cache_write_failures_total',
    help: 'Variants not written to the shared result cache, by reason: error (S3 failed or timed out), busy (too many writes in flight)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /**
   * One delivery answer: counted in plain numbers here and handed to prom-client when scraped,
   * so that a cache hit pays no label hashing.
   */
  answered(status: number, cache: string, seconds: number): void {
    let byStatus = this.unreported.get(cache);
    if (!byStatus) this.unreported.set(cache, (byStatus = new Map()));
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.latency.observe(cache, seconds);
    if (cache === 'HIT' || cache === 'STALE') this.cacheHits.count++;
    else if (cache === 'MISS') this.cacheMisses.count++;
  }

  /** One of the answers counted by `answered` was written by the hot path. */
  answeredOnSocket(): void {
    this.hotPathAnswers.count++;
  }

  constructor(probes: {
    queueDepth: () => number;
    activeTransforms: () => number;
    cacheSize: () => { entries: number; bytes: number; memoryBytes: number };
    sourceBytes: () => number;
    redisConnected: () => number;
  }) {
    // A metric of its own kind (see LatencyHistogram): prom-client's types name only its own.
    this.registry.registerMetric(this.latency as unknown as Histogram);
    probeGauges(this.registry, [
      ['ukiyo_edge_transform_queue_depth', 'Transforms waiting for a free slot', probes.queueDepth],
      ['ukiyo_edge_transforms_active', 'Transforms running now', probes.activeTransforms],
      ['ukiyo_edge_cache_entries', 'Variants in the disk cache', () => probes.cacheSize().entries],
      ['ukiyo_edge_cache_bytes', 'Bytes of variants in the disk cache', () => probes.cacheSize().bytes],
      [
        'ukiyo_edge_memory_cache_bytes',
        'Bytes of variant data also held in memory for hits (bounded by the memory cache size)',
        () => probes.cacheSize().memoryBytes,
      ],
      [
        'ukiyo_edge_source_cache_bytes',
        'Bytes of fetched originals held in memory for their next variants (SourceCache)',
        probes.sourceBytes,
      ],
      [
        'ukiyo_edge_redis_connected',
        '1 when the Redis fan-out is connected (always 0 without REDIS_URL)',
        probes.redisConnected,
      ],
    ]);
  }
}

/** A counter counted in a plain number and handed to prom-client when scraped. */
class Tally {
  /** Counted since the last scrape. */
  count = 0;

  constructor(registry: Registry, name: string, help: string) {
    const counter: Counter = new Counter({
      name,
      help,
      registers: [registry],
      collect: () => {
        counter.inc(this.count);
        this.count = 0;
      },
    });
  }
}

/**
 * A histogram by one label, observed with an array index and two additions, read by
 * prom-client's registry through the same `get()` its own metrics answer. prom-client's
 * Histogram hashes the label set and validates it on every observation: on the hit path that
 * cost more than the answer.
 */
class LatencyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, { buckets: Float64Array; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelName: string,
  ) {}

  observe(label: string, seconds: number): void {
    let series = this.series.get(label);
    if (!series) {
      series = { buckets: new Float64Array(LATENCY_BUCKETS.length), sum: 0, count: 0 };
      this.series.set(label, series);
    }
    // A loop, not findIndex: no closure per observation.
    for (let bucket = 0; bucket < LATENCY_BUCKETS.length; bucket++)
      if (seconds <= LATENCY_BUCKETS[bucket]!) {
        series.buckets[bucket]!++;
        break;
      }
    series.sum += seconds;
    series.count++;
  }

  get(): Omit<MetricObjectWithValues<MetricValueWithName<string>>, 'collect'> {
    const values: MetricValueWithName<string>[] = [];
    for (const [label, { buckets, sum, count }] of this.series) {
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((bound, index) => {
        cumulative += buckets[index]!;
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { le: bound, [this.labelName]: label },
          value: cumulative,
        });
      });
      values.push({
        metricName: `${this.name}_bucket`,
        labels: { le: '+Inf', [this.labelName]: label },
        value: count,
      });
      values.push({ metricName: `${this.name}_sum`, labels: { [this.labelName]: label }, value: sum });
      values.push({ metricName: `${this.name}_count`, labels: { [this.labelName]: label }, value: count });
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type as never,
      aggregator: this.aggregator,
      values,
    };
  }

  reset(): void {
    this.series.clear();
  }
}
