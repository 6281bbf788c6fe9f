import { sql, type Kysely } from 'kysely';

/**
 * The whole domain of console-spec section 3 in one first schema, so later features add
 * columns rather than redesign tables. Never edit once landed: add a new numbered file.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table sakura_accounts (
      id serial primary key,
      member_code text not null unique,
      name text not null,
      created_at timestamptz not null default now()
    );

    create table organizations (
      id serial primary key,
      sakura_account_id integer not null references sakura_accounts(id),
      name text not null,
      service_code text not null unique,
      service_domain text not null default '',
      plan smallint not null default 4,
      pending_plan smallint,
      pending_plan_at timestamptz,
      is_live boolean not null default false,
      enable_text_overlay boolean not null default false,
      description text not null default '',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index organizations_account_idx on organizations (sakura_account_id);

    create table users (
      id serial primary key,
      email text not null,
      full_name text not null default '',
      password_hash text not null,
      permission integer not null default 0,
      enabled boolean not null default true,
      activated_at timestamptz,
      activation_token_hash text unique,
      activation_expires_at timestamptz,
      sakura_account_id integer references sakura_accounts(id),
      totp_secret_enc text,
      totp_enabled_at timestamptz,
      last_organization_id integer references organizations(id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index users_email_idx on users (lower(email));
    create index users_account_idx on users (sakura_account_id);

    -- A user limited to some organizations of their account; no rows means all of them.
    create table user_restrictions (
      user_id integer not null references users(id) on delete cascade,
      organization_id integer not null references organizations(id) on delete cascade,
      primary key (user_id, organization_id)
    );

    create table totp_backup_codes (
      id serial primary key,
      user_id integer not null references users(id) on delete cascade,
      code_hash text not null,
      used_at timestamptz
    );
    create index totp_backup_codes_user_idx on totp_backup_codes (user_id);

    create table password_resets (
      token_hash text primary key,
      user_id integer not null references users(id) on delete cascade,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    );

    -- The session id is never stored: only its SHA-256, so a database leak yields no cookies.
    create table sessions (
      id_hash text primary key,
      user_id integer not null references users(id) on delete cascade,
      organization_id integer references organizations(id) on delete set null,
      second_factor_pending boolean not null default false,
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      expires_at timestamptz not null,
      ip text not null default '',
      user_agent text not null default ''
    );
    create index sessions_user_idx on sessions (user_id);
    create index sessions_expires_idx on sessions (expires_at);

    -- Failed-login counters per e-mail and per client address, shared by every server process.
    create table auth_throttle (
      key text primary key,
      failures integer not null default 0,
      window_started_at timestamptz not null default now(),
      locked_until timestamptz
    );

    create table auth_tokens (
      id serial primary key,
      organization_id integer not null references organizations(id) on delete cascade,
      token_hash text not null unique,
      token_last4 text not null,
      description text not null default '',
      permission integer,
      enabled boolean not null default true,
      created_by integer references users(id) on delete set null,
      created_at timestamptz not null default now(),
      deleted_at timestamptz,
      last_used_at timestamptz
    );
    create index auth_tokens_org_idx on auth_tokens (organization_id);

    create table origins (
      id serial primary key,
      organization_id integer not null references organizations(id) on delete cascade,
      name text not null unique,
      origin_name text not null,
      kind smallint not null,
      status smallint not null default 2,
      status_message text not null default '',
      config_version integer not null default 1,
      enable_signed_url boolean not null default false,
      signing_secret_enc text not null default '',
      default_cache integer not null default 0,
      description text not null default '',
      config jsonb not null default '{}',
      acl jsonb not null default '{"isAllowList": false, "cidrs": []}',
      overridable_parameters text not null default '',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index origins_origin_name_idx on origins (lower(origin_name));
    create index origins_org_idx on origins (organization_id);

    create table conversion_parameters (
      id serial primary key,
      origin_id integer not null references origins(id) on delete cascade,
      position integer not null,
      pattern text not null,
      path text not null default '',
      parameter text not null,
      disallow_override boolean not null default false,
      unique (origin_id, pattern)
    );

    create table tls_certificates (
      id serial primary key,
      origin_id integer not null unique references origins(id) on delete cascade,
      fingerprint text not null,
      expires_at timestamptz not null,
      certificate text not null,
      intermediate_certificate text not null default '',
      private_key_enc text not null,
      created_at timestamptz not null default now()
    );

    -- Edge usage, aggregated by the edges in batches; daily rows answer month-long queries.
    create table usage_hourly (
      origin_id integer not null references origins(id) on delete cascade,
      organization_id integer not null references organizations(id) on delete cascade,
      hour timestamptz not null,
      requests bigint not null default 0,
      outbound_bytes bigint not null default 0,
      primary key (origin_id, hour)
    );
    create index usage_hourly_org_idx on usage_hourly (organization_id, hour);
    create table usage_daily (
      origin_id integer not null references origins(id) on delete cascade,
      organization_id integer not null references organizations(id) on delete cascade,
      day date not null,
      requests bigint not null default 0,
      outbound_bytes bigint not null default 0,
      primary key (origin_id, day)
    );
    create index usage_daily_org_idx on usage_daily (organization_id, day);

    create table channels (
      id text primary key,
      organization_id integer not null references organizations(id) on delete cascade,
      status text not null default 'normal',
      settings jsonb not null default '{}',
      encrypt_key_uri text not null default '',
      encrypt_key_enc text,
      auth_webhook_url text not null default '',
      event_webhook_url text not null default '',
      created_at timestamptz not null default now(),
      deleted_at timestamptz
    );
    create index channels_org_idx on channels (organization_id);

    create table archive_destinations (
      id text primary key,
      organization_id integer not null references organizations(id) on delete cascade,
      bucket_uri text not null,
      config_enc text not null default '',
      created_at timestamptz not null default now()
    );
    create index archive_destinations_org_idx on archive_destinations (organization_id);

    create table live_usage_hourly (
      channel_id text not null references channels(id) on delete cascade,
      organization_id integer not null references organizations(id) on delete cascade,
      hour timestamptz not null,
      connected_seconds bigint not null default 0,
      max_concurrent integer not null default 0,
      bytes_in bigint not null default 0,
      hls_requests bigint not null default 0,
      hls_bytes_out bigint not null default 0,
      primary key (channel_id, hour)
    );
    create index live_usage_hourly_org_idx on live_usage_hourly (organization_id, hour);

    -- Closed months: the invoice as issued, so later corrections to usage do not rewrite it.
    create table invoices (
      organization_id integer not null references organizations(id) on delete cascade,
      month date not null,
      requests bigint not null,
      outbound_bytes bigint not null,
      issued_at timestamptz not null default now(),
      primary key (organization_id, month)
    );

    create table audit_events (
      id bigserial primary key,
      user_id integer references users(id) on delete set null,
      organization_id integer references organizations(id) on delete set null,
      kind text not null,
      email text not null,
      ip text not null default '',
      created_at timestamptz not null default now()
    );
    create index audit_events_user_idx on audit_events (user_id, created_at desc);

    create table help_requests (
      id serial primary key,
      user_id integer references users(id) on delete set null,
      organization_id integer references organizations(id) on delete set null,
      service text not null,
      category text not null,
      company text not null default '',
      name text not null,
      email text not null,
      message text not null,
      created_at timestamptz not null default now()
    );

    create table status_events (
      id serial primary key,
      kind text not null,
      title text not null,
      body text not null default '',
      state text not null,
      starts_at timestamptz not null,
      ends_at timestamptz,
      created_at timestamptz not null default now()
    );
    create index status_events_starts_idx on status_events (starts_at desc);

    create table mail_outbox (
      id serial primary key,
      recipient text not null,
      subject text not null,
      body text not null,
      created_at timestamptz not null default now(),
      sent_at timestamptz,
      error text
    );
  `.execute(db);
}
