import { sql, type Kysely } from 'kysely';

/**
 * Delivery analytics beside the billed usage: each hourly and daily usage row also splits its
 * requests by status class and by where the answer came from, and counts the bytes fetched
 * from the origin and, for converted images answered whole, the originals' bytes against the
 * bytes delivered (what conversion saved). usage_top_daily keeps the most requested paths,
 * transformations, output formats and error reasons per origin and day, capped by the edge's
 * writer (at most TOP_ROWS_KEPT rows per origin, day and dimension).
 *
 * plan_prices is the one place prices live (docs/plans.md): per plan, the monthly fee, what it
 * includes, and the price of requests and traffic beyond that. Operators change the rows; the
 * dashboard, its projection and the administrators' invoices read them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['usage_hourly', 'usage_daily']) {
    await sql`
      alter table ${sql.table(table)}
        add column status_2xx bigint not null default 0,
        add column status_304 bigint not null default 0,
        add column status_4xx bigint not null default 0,
        add column status_5xx bigint not null default 0,
        add column cache_memory bigint not null default 0,
        add column cache_disk bigint not null default 0,
        add column cache_shared bigint not null default 0,
        add column cache_miss bigint not null default 0,
        add column cache_coalesced bigint not null default 0,
        add column cache_stale bigint not null default 0,
        add column origin_bytes bigint not null default 0,
        add column source_bytes bigint not null default 0,
        add column converted_bytes bigint not null default 0
    `.execute(db);
  }
  await sql`
    create table usage_top_daily (
      origin_id integer not null references origins(id) on delete cascade,
      organization_id integer not null references organizations(id) on delete cascade,
      day date not null,
      dimension text not null,
      key text not null,
      requests bigint not null default 0,
      bytes bigint not null default 0,
      saved_bytes bigint not null default 0,
      primary key (origin_id, day, dimension, key)
    );
    create index usage_top_daily_org_idx on usage_top_daily (organization_id, day, dimension);
  `.execute(db);
  await sql`
    create table plan_prices (
      plan integer primary key,
      currency text not null,
      monthly_fee double precision not null,
      included_requests bigint not null,
      included_bytes bigint not null,
      per_10k_requests double precision not null,
      per_gib double precision not null
    );
    insert into plan_prices values
      (1, 'JPY', 5000, 1000000, 107374182400, 5, 10),
      (2, 'JPY', 20000, 10000000, 1099511627776, 4, 8),
      (3, 'JPY', 80000, 50000000, 5497558138880, 3, 6),
      (4, 'JPY', 300000, 300000000, 32985348833280, 2, 4);
  `.execute(db);
}
