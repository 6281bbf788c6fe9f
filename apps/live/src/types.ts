import type { Config, ServerDeps } from '@ukiyo/server';
import type { Logger } from 'pino';

export type Db = ServerDeps['db'];
export type SecretBox = ServerDeps['secrets'];

export interface LiveDeps {
  config: Config;
  db: Db;
  secrets: SecretBox;
  log: Logger;
}
