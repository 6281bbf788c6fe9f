import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A fresh PostgreSQL database for this run, when DATABASE_URL names a server; else ''. */
    testDatabaseUrl: string;
  }
}

/**
 * With DATABASE_URL set (CI), the integration suite runs on a database created for this run on
 * that server and dropped afterwards, so the server's own data is never touched. Without it,
 * each worker uses embedded PGlite in a temporary directory.
 */
export default async function setup(project: TestProject) {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    project.provide('testDatabaseUrl', '');
    return;
  }
  const name = `ukiyo_it_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  project.provide('testDatabaseUrl', url.toString());

  return async () => {
    const cleanup = new pg.Client({ connectionString: serverUrl });
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${name} with (force)`);
    await cleanup.end();
  };
}
