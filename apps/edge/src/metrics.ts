import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Latency buckets in seconds: cached hits are sub-millisecond, misses tens to hundreds of ms. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The edge's Prometheus metrics, on a registry of its own (a process may hold several edges,
 * as the tests do); the process entry merges it into the one it exposes. Labels stay bounded:
 * no origin names or paths.
 */
export class EdgeMetrics {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: 'ukiyo_edge_requests_total',
    help: 'Delivery requests answered, by HTTP status and cache result (HIT, MISS, STALE, - for refusals)',
    labelNames: ['status', 'cache'] as const,
    registers: [this.registry],
  });

  readonly duration = new Histogram({
    name: 'ukiyo_edge_request_duration_seconds',
    help: 'Delivery request latency until the answer is written, by cache result',
    labelNames: ['cache'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly cacheHits = new Counter({
    name: 'ukiyo_edge_cache_hits_total',
    help: 'Requests answered from the cache (fresh, or stale because the origin failed)',
    registers: [this.registry],
  });

  readonly cacheMisses = new Counter({
    name: 'ukiyo_edge_cache_misses_total',
    help: 'Requests that had to produce their variant',
    registers: [this.registry],
  });

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

  constructor(probes: {
    queueDepth: () => number;
    activeTransforms: () => number;
    cacheSize: () => { entries: number; bytes: number; memoryBytes: number };
    redisConnected: () => number;
  }) {
    new Gauge({
      name: 'ukiyo_edge_transform_queue_depth',
      help: 'Transforms waiting for a free slot',
      registers: [this.registry],
      collect() {
        this.set(probes.queueDepth());
      },
    });
    new Gauge({
      name: 'ukiyo_edge_transforms_active',
      help: 'Transforms running now',
      registers: [this.registry],
      collect() {
        this.set(probes.activeTransforms());
      },
    });
    new Gauge({
      name: 'ukiyo_edge_cache_entries',
      help: 'Variants in the disk cache',
      registers: [this.registry],
      collect() {
        this.set(probes.cacheSize().entries);
      },
    });
    new Gauge({
      name: 'ukiyo_edge_cache_bytes',
      help: 'Bytes of variants in the disk cache',
      registers: [this.registry],
      collect() {
        this.set(probes.cacheSize().bytes);
      },
    });
    new Gauge({
      name: 'ukiyo_edge_memory_cache_bytes',
      help: 'Bytes of variant data also held in memory for hits (bounded by the memory cache size)',
      registers: [this.registry],
      collect() {
        this.set(probes.cacheSize().memoryBytes);
      },
    });
    new Gauge({
      name: 'ukiyo_edge_redis_connected',
      help: '1 when the Redis fan-out is connected (always 0 without REDIS_URL)',
      registers: [this.registry],
      collect() {
        this.set(probes.redisConnected());
      },
    });
  }
}
