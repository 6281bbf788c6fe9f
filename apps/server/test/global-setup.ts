import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A fresh PostgreSQL database per worker of the project, when DATABASE_URL names a server. */
    testDatabaseUrls: string[];
  }
}

/**
 * With DATABASE_URL set (CI), each worker of the integration project runs on a database created
 * for this run on that server and dropped afterwards, so the server's own data is never touched
 * and two workers' files never share a database (as two workers' PGlites never do). Without it,
 * each worker uses embedded PGlite in a temporary directory.
 */
export default async function setup(project: TestProject) {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    project.provide('testDatabaseUrls', []);
    return;
  }
  // A project without file parallelism resolves to one worker.
  const names = Array.from(
    { length: project.config.maxWorkers },
    () => `ukiyo_it_${randomBytes(6).toString('hex')}`,
  );
  await onServer(
    serverUrl,
    names.map((name) => `create database ${name}`),
  );
  project.provide(
    'testDatabaseUrls',
    names.map((name) => {
      const url = new URL(serverUrl);
      url.pathname = `/${name}`;
      return url.toString();
    }),
  );
  return () =>
    onServer(
      serverUrl,
      names.map((name) => `drop database if exists ${name} with (force)`),
    );
}

async function onServer(serverUrl: string, statements: string[]): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    for (const statement of statements) await admin.query(statement);
  } finally {
    await admin.end();
  }
}
