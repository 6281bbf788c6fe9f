import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/** What the console server asks of the image edge's cache (the edge in this process). */
export interface CacheControl {
  lookup(originId: number, imageUrlOrPath: string): Promise<string[]>;
  purge(originId: number, imageUrlOrPath: string): Promise<string[]>;
  /** Removes every image whose path starts with `pathPrefix` ('/': the whole origin); answers how many. */
  purgePrefix(originId: number, pathPrefix: string): Promise<number>;
}

function hostOf(url: string): string | undefined {
  if (!/^https?:\/\//i.test(url)) return undefined;
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * The organization's origin an image URL belongs to, chosen by the URL's host (the generated
 * name or the custom domain); with `originId` given, a bare path belongs to that origin and a
 * full URL must name it. Never another organization's origin.
 */
export async function originOfUrl(
  db: Db,
  organizationId: number,
  url: string,
  originId?: number,
): Promise<number | undefined> {
  const host = hostOf(url);
  if (host === undefined && originId === undefined) return undefined;
  let query = db.selectFrom('origins').select('id').where('organization_id', '=', organizationId);
  if (originId !== undefined) query = query.where('id', '=', originId);
  if (host !== undefined) {
    query = query.where((eb) =>
      eb.or([eb(sql<string>`lower(name)`, '=', host), eb(sql<string>`lower(origin_name)`, '=', host)]),
    );
  }
  return (await query.executeTakeFirst())?.id;
}
