import { constants } from 'node:fs';
import { access, mkdir, statfs } from 'node:fs/promises';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

export interface HealthCheck {
  /** A failing critical check makes the process unready (503); others only mark it degraded. */
  critical: boolean;
  run(): Promise<void>;
}

export interface HealthReport {
  status: 'ok' | 'degraded' | 'unready' | 'shutting down';
  checks: Record<string, { ok: boolean; ms: number; error?: string }>;
}

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Liveness and readiness of one process. `/healthz` answers 200 while the process runs (a
 * restart would not help anything else); `/readyz` runs every check and answers 503 when a
 * critical one fails or the process is draining for shutdown, so a load balancer stops sending
 * it work. Non-critical failures (Redis for either app, the database for an edge that already
 * has its origins) answer 200 with status "degraded".
 */
export class Health {
  shuttingDown = false;

  constructor(private readonly checks: Record<string, HealthCheck> = {}) {}

  add(name: string, check: HealthCheck): this {
    this.checks[name] = check;
    return this;
  }

  /** Another part's checks as this one's, named `{prefix}.{name}` (the all-in-one process). */
  include(prefix: string, other: Health): this {
    for (const [name, check] of Object.entries(other.checks)) this.checks[`${prefix}.${name}`] = check;
    return this;
  }

  async report(): Promise<{ status: number; body: HealthReport }> {
    const entries = await Promise.all(
      Object.entries(this.checks).map(async ([name, check]) => {
        const started = performance.now();
        try {
          await withTimeout(check.run(), CHECK_TIMEOUT_MS);
          return [name, check, { ok: true, ms: Math.round(performance.now() - started) }] as const;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          return [
            name,
            check,
            { ok: false, ms: Math.round(performance.now() - started), error: message },
          ] as const;
        }
      }),
    );
    const checks: HealthReport['checks'] = {};
    let criticalFailed = false;
    let anyFailed = false;
    for (const [name, check, result] of entries) {
      checks[name] = result;
      if (!result.ok) {
        anyFailed = true;
        if (check.critical) criticalFailed = true;
      }
    }
    const status: HealthReport['status'] = this.shuttingDown
      ? 'shutting down'
      : criticalFailed
        ? 'unready'
        : anyFailed
          ? 'degraded'
          : 'ok';
    return { status: status === 'ok' || status === 'degraded' ? 200 : 503, body: { status, checks } };
  }

  /** The answer of a probe path, or undefined for any other path. */
  async probe(path: string): Promise<{ status: number; body: unknown }> {
    if (path === '/healthz') return { status: 200, body: { status: 'alive' } };
    return this.report();
  }
}

/** The database answers a trivial query. */
export function databaseCheck(db: Db, critical = true): HealthCheck {
  return {
    critical,
    async run() {
      await sql`select 1`.execute(db);
    },
  };
}

/** A directory the process writes to exists, is writable, and has room left. */
export function diskCheck(directory: string, minFreeBytes: number, critical = true): HealthCheck {
  return {
    critical,
    async run() {
      await mkdir(directory, { recursive: true });
      await access(directory, constants.W_OK);
      const stats = await statfs(directory);
      const free = stats.bavail * stats.bsize;
      if (free < minFreeBytes) {
        throw new Error(
          `${Math.round(free / 1024 ** 2)} MiB free, below ${Math.round(minFreeBytes / 1024 ** 2)} MiB`,
        );
      }
    },
  };
}

/** Redis answers PING (`ping` rejects when it is down). */
export function redisCheck(ping: () => Promise<unknown>, critical = false): HealthCheck {
  return {
    critical,
    async run() {
      await ping();
    },
  };
}
