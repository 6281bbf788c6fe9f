import { sql, type Kysely } from 'kysely';

/**
 * Two origin settings of the image edge, off for every existing origin: honouring client
 * hints (DPR, Width) when the URL leaves the size open, and rasterising SVG images.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table origins
      add column enable_client_hints boolean not null default false,
      add column allow_svg boolean not null default false
  `.execute(db);
}
