import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { SCHEMA_FILE, schemaSource } from './schema-source.ts';

it('has types generated from the current OpenAPI document (npm run generate -w packages/sdk)', async () => {
  expect(await readFile(SCHEMA_FILE, 'utf8')).toBe(await schemaSource());
}, 60_000);
