export type { Db, SecretBox } from '@ukiyo/server/runtime';
/** The edge needs nothing of the console's beyond what every process has. */
export type { ProcessDeps as EdgeDeps } from '@ukiyo/server/runtime';
