#!/usr/bin/env node
// `npx ukiyo …` from the repository: the CLI's TypeScript runs through tsx, as the repository's scripts do.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
