// Embedded PGlite on its own thread (db/pglite-thread.ts): values and errors cross the thread
// as PGlite returned them in-process, a close is flushed to disk, and a thread that cannot run
// fails queries instead of leaving them waiting. Embedded only by nature, so it runs with or
// without DATABASE_URL.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.ts';
import { PGliteThread } from '../src/db/pglite-thread.ts';
import { AppError, uniqueOr } from '../src/http/app-error.ts';

const fresh = () => openDatabase({ dataDir: mkdtempSync(join(tmpdir(), 'ukiyo-pglite-')) });

describe('embedded PGlite on its own thread', () => {
  it('returns values of every kind the schema uses as PGlite does in-process', async () => {
    const { db, close } = await fresh();
    const at = new Date('2026-03-04T05:06:07.089Z');
    const { rows } = await sql<{
      at: Date;
      day: string;
      big: number;
      doc: unknown;
      flag: boolean;
      bytes: Uint8Array;
      list: number[];
    }>`select ${at}::timestamptz as at, '2026-03-04'::date as day, 9007199254740991::bigint as big,
        ${JSON.stringify({ a: [1, 'two'] })}::jsonb as doc, true as flag,
        '\\x00ff'::bytea as bytes, array[1, 2] as list`.execute(db);
    await close();
    expect(rows).toEqual([
      {
        at,
        day: '2026-03-04',
        big: 9007199254740991,
        doc: { a: [1, 'two'] },
        flag: true,
        bytes: new Uint8Array([0, 255]),
        list: [1, 2],
      },
    ]);
    expect(rows[0]!.at).toBeInstanceOf(Date);
  });

  it("keeps PostgreSQL's error fields, which callers check", async () => {
    const { db, close } = await fresh();
    await sql`create table names (name text primary key)`.execute(db);
    await sql`insert into names values (${'a'})`.execute(db);
    const error = await sql`insert into names values (${'a'})`.execute(db).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: '23505', constraint: 'names_pkey', table: 'names' });
    expect((error as Error).message).toContain('duplicate key');
    const refusal = new AppError('domain already in use');
    await expect(uniqueOr(refusal, () => sql`insert into names values (${'a'})`.execute(db))).rejects.toBe(
      refusal,
    );
    await close();
  });

  it('flushes to disk on close and reopens with the data', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ukiyo-pglite-'));
    const first = await openDatabase({ dataDir });
    await sql`create table kept (n int)`.execute(first.db);
    await sql`insert into kept values (${42})`.execute(first.db);
    await first.close();
    const second = await openDatabase({ dataDir });
    expect((await sql<{ n: number }>`select n from kept`.execute(second.db)).rows).toEqual([{ n: 42 }]);
    await second.close();
  });

  it('fails queries, rather than leaving them waiting, when the thread cannot run', async () => {
    // A file where the database's directory should be: PGlite cannot start.
    const notADirectory = join(mkdtempSync(join(tmpdir(), 'ukiyo-pglite-')), 'pg');
    writeFileSync(notADirectory, 'not a database');
    const thread = new PGliteThread(notADirectory, []);
    await expect(thread.query('select 1', [])).rejects.toThrow();
    await expect(thread.query('select 1', [])).rejects.toThrow();
  });

  it('fails the waiting and later queries when the thread dies', async () => {
    const thread = new PGliteThread(mkdtempSync(join(tmpdir(), 'ukiyo-pglite-')), []);
    await thread.query('select 1', []);
    const waiting = thread.query('select pg_sleep(5)', []);
    // A stand-in for a crash (a WebAssembly abort, say): the thread is gone mid-query.
    await thread['worker'].terminate();
    await expect(waiting).rejects.toThrow('stopped');
    await expect(thread.query('select 1', [])).rejects.toThrow('stopped');
  });
});
