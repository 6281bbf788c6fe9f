// Runs a TypeScript process entry from source (tests, `tsx` runs): registers tsx's loader, then
// imports the entry named by the first argument (the entry reads the ones after it). Bundled
// processes start the entry's own bundle instead (scripts/build.mjs), so production never
// loads this.
import { register } from 'tsx/esm/api';

register();
await import(process.argv[2]);
