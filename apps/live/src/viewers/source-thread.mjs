// Runs a TypeScript worker entry from source (tests, `tsx` runs): the thread registers tsx's
// loader, then imports the entry named in its workerData. Bundled processes start the entry's
// own bundle instead (scripts/build.mjs), so production never loads this.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
