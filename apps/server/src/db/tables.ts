import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** Row types of the schema in migrations/ (kept in step with them by hand: one place). */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;
type NullableJson<T> = ColumnType<T | null, string | null | undefined, string | null>;

export interface SakuraAccountTable {
  id: Generated<number>;
  member_code: string;
  name: string;
  created_at: Generated<Date>;
}

export interface OrganizationTable {
  id: Generated<number>;
  sakura_account_id: number;
  name: string;
  service_code: string;
  service_domain: Generated<string>;
  plan: Generated<number>;
  pending_plan: number | null;
  pending_plan_at: NullableTimestamp;
  is_live: Generated<boolean>;
  enable_text_overlay: Generated<boolean>;
  description: Generated<string>;
  /** The Standard Webhooks signing secret (`whsec_…`), sealed; null until first used. */
  webhook_secret_enc: string | null;
  webhook_secret_created_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface UserTable {
  id: Generated<number>;
  email: string;
  full_name: Generated<string>;
  password_hash: string;
  permission: Generated<number>;
  enabled: Generated<boolean>;
  activated_at: NullableTimestamp;
  activation_token_hash: string | null;
  activation_expires_at: NullableTimestamp;
  sakura_account_id: number | null;
  totp_secret_enc: string | null;
  totp_enabled_at: NullableTimestamp;
  /** The TOTP time step last accepted: codes of it and earlier steps are refused. */
  totp_last_step: string | number | null;
  last_organization_id: number | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface UserRestrictionTable {
  user_id: number;
  organization_id: number;
}

export interface TotpBackupCodeTable {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  used_at: NullableTimestamp;
}

export interface PasswordResetTable {
  token_hash: string;
  user_id: number;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  created_at: Generated<Date>;
}

export interface SessionTable {
  id_hash: string;
  user_id: number;
  organization_id: number | null;
  second_factor_pending: Generated<boolean>;
  created_at: Generated<Date>;
  last_seen_at: Generated<Date>;
  expires_at: Timestamp;
  ip: Generated<string>;
  user_agent: Generated<string>;
}

export interface AuthTokenTable {
  id: Generated<number>;
  organization_id: number;
  token_hash: string;
  token_last4: string;
  description: Generated<string>;
  permission: number | null;
  enabled: Generated<boolean>;
  created_by: number | null;
  created_at: Generated<Date>;
  deleted_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
}

/** A creating /api/v1 call's Idempotency-Key; status and body stay null while it runs. */
export interface ApiIdempotencyTable {
  token_id: number;
  idempotency_key: string;
  request_digest: string;
  status: number | null;
  body_enc: string | null;
  created_at: Generated<Date>;
}

export interface OriginTable {
  id: Generated<number>;
  organization_id: number;
  name: string;
  origin_name: string;
  kind: number;
  status: Generated<number>;
  status_message: Generated<string>;
  config_version: Generated<number>;
  enable_signed_url: Generated<boolean>;
  signing_secret_enc: Generated<string>;
  default_cache: Generated<number>;
  enable_client_hints: Generated<boolean>;
  allow_svg: Generated<boolean>;
  description: Generated<string>;
  config: Json<Record<string, unknown>>;
  acl: Json<{ isAllowList: boolean; cidrs: string[] }>;
  overridable_parameters: Generated<string>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ConversionParameterTable {
  id: Generated<number>;
  origin_id: number;
  position: number;
  pattern: string;
  path: Generated<string>;
  parameter: string;
  disallow_override: Generated<boolean>;
}

export interface TlsCertificateTable {
  id: Generated<number>;
  origin_id: number;
  fingerprint: string;
  expires_at: Timestamp;
  certificate: string;
  intermediate_certificate: Generated<string>;
  private_key_enc: string;
  created_at: Generated<Date>;
}

/**
 * The counters usage_hourly and usage_daily share: the billed requests and body bytes, then the
 * delivery analytics (migration 0011): answers by status class and by where they came from,
 * bytes fetched from the origin, and for converted images answered whole the originals' bytes
 * and the bytes delivered.
 */
export const USAGE_COUNTERS = [
  'requests',
  'outbound_bytes',
  'status_2xx',
  'status_304',
  'status_4xx',
  'status_5xx',
  'cache_memory',
  'cache_disk',
  'cache_shared',
  'cache_miss',
  'cache_coalesced',
  'cache_stale',
  'origin_bytes',
  'source_bytes',
  'converted_bytes',
] as const;
export type UsageCounter = (typeof USAGE_COUNTERS)[number];
type UsageCounters = Record<UsageCounter, Generated<number>>;

export interface UsageHourlyTable extends UsageCounters {
  origin_id: number;
  organization_id: number;
  hour: Timestamp;
}

export interface UsageDailyTable extends UsageCounters {
  origin_id: number;
  organization_id: number;
  /** 'YYYY-MM-DD' (UTC day): dates are read as strings, never shifted by a local time zone. */
  day: string;
}

/** Prices per plan, in `currency` (docs/plans.md). */
export interface PlanPriceTable {
  plan: number;
  currency: string;
  monthly_fee: number;
  included_requests: number;
  included_bytes: number;
  per_10k_requests: number;
  per_gib: number;
}

/** The most requested keys of one origin and day per dimension (capped by the edge's writer). */
export interface UsageTopDailyTable {
  origin_id: number;
  organization_id: number;
  day: string;
  dimension: 'path' | 'transform' | 'format' | 'error';
  key: string;
  requests: Generated<number>;
  bytes: Generated<number>;
  saved_bytes: Generated<number>;
}

export interface ChannelTable {
  id: string;
  organization_id: number;
  status: Generated<string>;
  settings: Json<Record<string, unknown>>;
  encrypt_key_uri: Generated<string>;
  encrypt_key_enc: string | null;
  auth_webhook_url: Generated<string>;
  event_webhook_url: Generated<string>;
  created_at: Generated<Date>;
  deleted_at: NullableTimestamp;
  /** Names the channel's HLS key in EXT-X-KEY URIs and GetEncryptKey. */
  kid: string | null;
  active_connections: Generated<number>;
  connection_id: string | null;
  playlist_url: string | null;
  /** Refreshed by the process holding the publisher; an old one frees the channel. */
  heartbeat_at: NullableTimestamp;
  /** Where the process holding the publisher serves the channel's HLS files to its peers. */
  host_url: string | null;
}

export interface ArchiveDestinationTable {
  id: string;
  organization_id: number;
  bucket_uri: string;
  config_enc: Generated<string>;
  created_at: Generated<Date>;
}

/** An archived file waiting for its upload job (migration 0008). */
export interface ArchiveUploadTable {
  id: Generated<number>;
  organization_id: number;
  destination_id: string;
  /** The publisher session: its files go up in id order. */
  connection_id: string;
  object_key: string;
  file_type: 'ts' | 'm3u8';
  body: Uint8Array;
  created_at: Generated<Date>;
}

export interface LiveUsageHourlyTable {
  channel_id: string;
  organization_id: number;
  hour: Timestamp;
  connected_seconds: Generated<number>;
  max_concurrent: Generated<number>;
  /** WebRTC connections opened in the hour. */
  connections: Generated<number>;
  bytes_in: Generated<number>;
  hls_requests: Generated<number>;
  hls_bytes_out: Generated<number>;
  /** The publisher's connected time (connected_seconds counts viewers' too). */
  publishing_seconds: Generated<number>;
  /** The most distinct HLS clients fetching within one usage flush (~5 s) in the hour. */
  hls_max_viewers: Generated<number>;
}

export interface InvoiceTable {
  organization_id: number;
  month: string;
  requests: number;
  outbound_bytes: number;
  issued_at: Generated<Date>;
}

export interface AuditEventTable {
  id: Generated<number>;
  user_id: number | null;
  organization_id: number | null;
  kind: string;
  email: string;
  ip: Generated<string>;
  token_id: number | null;
  token_name: string | null;
  operation: string | null;
  subject: Generated<string>;
  before: NullableJson<Record<string, unknown>>;
  after: NullableJson<Record<string, unknown>>;
  created_at: Generated<Date>;
}

export interface HelpRequestTable {
  id: Generated<number>;
  user_id: number | null;
  organization_id: number | null;
  service: string;
  category: string;
  company: Generated<string>;
  name: string;
  email: string;
  message: string;
  created_at: Generated<Date>;
}

export interface StatusEventTable {
  id: Generated<number>;
  kind: string;
  title: string;
  body: Generated<string>;
  state: string;
  starts_at: Timestamp;
  ends_at: NullableTimestamp;
  created_at: Generated<Date>;
}

export interface MailOutboxTable {
  id: Generated<number>;
  recipient: string;
  subject: string;
  body: string;
  created_at: Generated<Date>;
  sent_at: NullableTimestamp;
  error: string | null;
  /** SHA-256 of the single-use token in the body's link, while the body shows it. */
  link_token_hash: string | null;
  /** The body with that token masked, swapped in once the link no longer works or was sent. */
  redacted_body: string | null;
}

export interface Database {
  sakura_accounts: SakuraAccountTable;
  organizations: OrganizationTable;
  users: UserTable;
  user_restrictions: UserRestrictionTable;
  totp_backup_codes: TotpBackupCodeTable;
  password_resets: PasswordResetTable;
  sessions: SessionTable;
  auth_tokens: AuthTokenTable;
  api_idempotency: ApiIdempotencyTable;
  origins: OriginTable;
  conversion_parameters: ConversionParameterTable;
  tls_certificates: TlsCertificateTable;
  usage_hourly: UsageHourlyTable;
  usage_daily: UsageDailyTable;
  usage_top_daily: UsageTopDailyTable;
  plan_prices: PlanPriceTable;
  channels: ChannelTable;
  archive_destinations: ArchiveDestinationTable;
  archive_uploads: ArchiveUploadTable;
  live_usage_hourly: LiveUsageHourlyTable;
  invoices: InvoiceTable;
  audit_events: AuditEventTable;
  help_requests: HelpRequestTable;
  status_events: StatusEventTable;
  mail_outbox: MailOutboxTable;
}

export type UserRow = Selectable<UserTable>;
export type NewUser = Insertable<UserTable>;
export type UserUpdate = Updateable<UserTable>;
export type OrganizationRow = Selectable<OrganizationTable>;
export type SakuraAccountRow = Selectable<SakuraAccountTable>;
export type SessionRow = Selectable<SessionTable>;
