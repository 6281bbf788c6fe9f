// The embedded database's own thread, started by pglite-thread.ts. Plain JavaScript: a worker
// does not inherit tsx's loader under every runner (vitest's workers have none), and this file
// needs no types to run.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, types } from '@electric-sql/pglite';

const pglite = await PGlite.create(workerData.directory, {
  postgresqlconf: workerData.settings,
  // A calendar date stays the 'YYYY-MM-DD' it is, as on node-postgres (database.ts): a Date
  // would shift it by the local time zone.
  parsers: { [types.DATE]: (value) => value },
});

/**
 * What of an error crosses back: its plain fields (code, constraint, detail, ...), which callers
 * check (23505 for a unique key). PGlite also attaches the query's parameters and options, which
 * a copy to another thread cannot always carry (options may hold functions).
 */
function plain(error) {
  const fields = Object.entries(error).filter(
    ([, value]) => typeof value !== 'object' && typeof value !== 'function',
  );
  return { ...Object.fromEntries(fields), message: error.message ?? String(error) };
}

async function handle(message) {
  if (message.close) {
    // Flushes the database to disk; the thread's exit tells the caller it is done.
    await pglite.close();
    process.exit(0);
  }
  const { id, sql, params } = message;
  try {
    // Without parameters, the simple protocol (as node-postgres does), which takes several
    // statements at once: migrations are written that way.
    const result = params.length === 0 ? (await pglite.exec(sql)).at(-1) : await pglite.query(sql, params);
    parentPort.postMessage({ id, rows: result?.rows ?? [], affectedRows: result?.affectedRows });
  } catch (error) {
    parentPort.postMessage({ id, error: plain(error) });
  }
}

// One message at a time, in arrival order: a close waits for the queries sent before it.
let work = Promise.resolve();
parentPort.on('message', (message) => {
  work = work.then(() => handle(message));
});
