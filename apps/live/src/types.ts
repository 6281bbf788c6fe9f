import type { Config, RateLimits, ServerDeps } from '@ukiyo/server';
import type { Logger } from 'pino';

export type Db = ServerDeps['db'];
export type SecretBox = ServerDeps['secrets'];
export type JobQueue = ServerDeps['jobs'];

export interface LiveDeps {
  config: Config;
  db: Db;
  secrets: SecretBox;
  log: Logger;
  /** Where webhook deliveries and archive uploads wait (this process works them too). */
  jobs: JobQueue;
  /**
   * Shared with the console server in one process (`npm start`), so an address's bad tokens
   * count once across the public and live APIs.
   */
  limits: RateLimits;
}
