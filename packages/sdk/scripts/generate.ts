// Regenerates src/schema.ts from the server's OpenAPI document (run after changing the API).
import { writeFile } from 'node:fs/promises';
import { SCHEMA_FILE, schemaSource } from '../src/schema-source.ts';

await writeFile(SCHEMA_FILE, await schemaSource());
