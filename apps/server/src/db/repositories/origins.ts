import { sql, type Selectable } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import type { Db } from '../database.ts';
import type { ConversionParameterTable, OriginTable } from '../tables.ts';
import type { Scope } from './scope.ts';

export type OriginRow = Selectable<OriginTable>;
export type ConversionParameterRow = Selectable<ConversionParameterTable>;

export interface OriginValues {
  kind: number;
  originName: string;
  enableSignedUrl: boolean;
  signingSecretEnc: string;
  defaultCache: number;
  enableClientHints: boolean;
  allowSvg: boolean;
  description: string;
  config: Record<string, unknown>;
  acl: { isAllowList: boolean; cidrs: string[] };
  overridableParameters: string;
}

export interface RuleValues {
  pattern: string;
  path: string;
  parameter: string;
  disallowOverride: boolean;
}

/** Origins of the organizations the scope reaches (the same rule as organizations.ts). */
function reachable(db: Db, scope: Scope) {
  let query = db
    .selectFrom('origins')
    .innerJoin('organizations', 'organizations.id', 'origins.organization_id')
    .selectAll('origins');
  if (!scope.isAdmin) {
    query = query.where('organizations.sakura_account_id', '=', scope.accountId ?? -1);
    if (scope.restrictedTo.length > 0) query = query.where('organizations.id', 'in', scope.restrictedTo);
  }
  return query;
}

export function listOrigins(db: Db, scope: Scope, organizationId: number): Promise<OriginRow[]> {
  return reachable(db, scope)
    .where('origins.organization_id', '=', organizationId)
    .orderBy('origins.id')
    .execute();
}

/** An origin with what every presentation of it needs, read in one statement. */
export interface OriginDetails {
  row: OriginRow;
  rules: ConversionParameterRow[];
  certificate: CertificateSummary | undefined;
  /** This month's (UTC) requests and bytes. */
  usage: { requests: number; outboundBytes: number };
}

/**
 * The organization's origins (or the one `originId`) with their rules, certificate and this
 * month's usage: one statement (subqueries aggregated to JSON) rather than one per kind, since a
 * list is the Platform API's most frequent call.
 */
export async function originDetails(
  db: Db,
  scope: Scope,
  organizationId: number,
  options: { originId?: number; now?: Date } = {},
): Promise<OriginDetails[]> {
  const now = options.now ?? new Date();
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
    .toISOString()
    .slice(0, 10);
  let query = reachable(db, scope)
    .select((eb) => [
      jsonArrayFrom(
        eb
          .selectFrom('conversion_parameters')
          .select(['id', 'origin_id', 'position', 'pattern', 'path', 'parameter', 'disallow_override'])
          .whereRef('conversion_parameters.origin_id', '=', 'origins.id')
          .orderBy('position'),
      ).as('rules'),
      jsonObjectFrom(
        eb
          .selectFrom('tls_certificates')
          .select(['id', 'fingerprint', 'expires_at'])
          .whereRef('tls_certificates.origin_id', '=', 'origins.id'),
      ).as('certificate'),
      jsonObjectFrom(
        eb
          .selectFrom('usage_daily')
          .select((usage) => [
            usage.fn.coalesce(usage.fn.sum<number>('requests'), sql<number>`0`).as('requests'),
            usage.fn.coalesce(usage.fn.sum<number>('outbound_bytes'), sql<number>`0`).as('outboundBytes'),
          ])
          .whereRef('usage_daily.origin_id', '=', 'origins.id')
          .where('day', '>=', monthStart),
      ).as('usage'),
    ])
    .where('origins.organization_id', '=', organizationId)
    .orderBy('origins.id');
  if (options.originId !== undefined) query = query.where('origins.id', '=', options.originId);
  return (await query.execute()).map(({ rules, certificate, usage, ...row }) => ({
    row,
    rules,
    certificate: certificate
      ? {
          id: certificate.id,
          fingerprint: certificate.fingerprint,
          expiresAt: new Date(certificate.expires_at),
        }
      : undefined,
    // Sums of bigint columns arrive as JSON numbers or strings, by driver.
    usage: { requests: Number(usage?.requests ?? 0), outboundBytes: Number(usage?.outboundBytes ?? 0) },
  }));
}

export function findOrigin(
  db: Db,
  scope: Scope,
  organizationId: number,
  originId: number,
): Promise<OriginRow | undefined> {
  return reachable(db, scope)
    .where('origins.organization_id', '=', organizationId)
    .where('origins.id', '=', originId)
    .executeTakeFirst();
}

export async function countOrigins(db: Db, organizationId: number): Promise<number> {
  const row = await db
    .selectFrom('origins')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Whether a host name is taken as any origin's name or custom domain (other than `exceptId`). */
export async function hostTaken(db: Db, host: string, exceptId = -1): Promise<boolean> {
  const lower = host.toLowerCase();
  const row = await db
    .selectFrom('origins')
    .select('id')
    .where((eb) => eb.or([eb(sql`lower(origin_name)`, '=', lower), eb(sql`lower(name)`, '=', lower)]))
    .where('id', '<>', exceptId)
    .executeTakeFirst();
  return row !== undefined;
}

async function replaceRules(db: Db, originId: number, rules: readonly RuleValues[]): Promise<void> {
  await db.deleteFrom('conversion_parameters').where('origin_id', '=', originId).execute();
  if (rules.length === 0) return;
  await db
    .insertInto('conversion_parameters')
    .values(
      rules.map((rule, position) => ({
        origin_id: originId,
        position,
        pattern: rule.pattern,
        path: rule.path,
        parameter: rule.parameter,
        disallow_override: rule.disallowOverride,
      })),
    )
    .execute();
}

function columns(values: OriginValues) {
  return {
    kind: values.kind,
    origin_name: values.originName,
    enable_signed_url: values.enableSignedUrl,
    signing_secret_enc: values.signingSecretEnc,
    default_cache: values.defaultCache,
    enable_client_hints: values.enableClientHints,
    allow_svg: values.allowSvg,
    description: values.description,
    config: JSON.stringify(values.config),
    acl: JSON.stringify(values.acl),
    overridable_parameters: values.overridableParameters,
  };
}

/** A new origin, Updating until an edge has loaded it. */
export async function insertOrigin(
  db: Db,
  organizationId: number,
  name: string,
  values: OriginValues,
  rules: readonly RuleValues[],
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('origins')
      .values({ organization_id: organizationId, name, ...columns(values) })
      .returning('id')
      .executeTakeFirstOrThrow();
    await replaceRules(trx, row.id, rules);
    return row.id;
  });
}

/** Every change is a new config version that the edges have yet to load: back to Updating. */
export async function updateOrigin(
  db: Db,
  originId: number,
  values: OriginValues,
  rules: readonly RuleValues[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('origins')
      .set((eb) => ({
        ...columns(values),
        status: 2,
        status_message: '',
        config_version: eb('config_version', '+', 1),
        updated_at: new Date(),
      }))
      .where('id', '=', originId)
      .execute();
    await replaceRules(trx, originId, rules);
  });
}

export async function deleteOrigin(db: Db, originId: number): Promise<void> {
  await db.deleteFrom('origins').where('id', '=', originId).execute();
}

export interface CertificateSummary {
  id: number;
  fingerprint: string;
  expiresAt: Date;
}

/** The stored TLS certificate of each origin that has one (never the key). */
export async function certificatesOf(
  db: Db,
  originIds: readonly number[],
): Promise<Map<number, CertificateSummary>> {
  const map = new Map<number, CertificateSummary>();
  if (originIds.length === 0) return map;
  const rows = await db
    .selectFrom('tls_certificates')
    .select(['id', 'origin_id', 'fingerprint', 'expires_at'])
    .where('origin_id', 'in', originIds)
    .execute();
  for (const row of rows)
    map.set(row.origin_id, { id: row.id, fingerprint: row.fingerprint, expiresAt: new Date(row.expires_at) });
  return map;
}

export interface CertificateValues {
  fingerprint: string;
  expiresAt: Date;
  certificate: string;
  intermediateCertificate: string;
  privateKeyEnc: string;
}

/**
 * Stores (or replaces) an origin's certificate; like any origin change it is a new config
 * version, so every edge reloads the origin and its TLS context.
 */
export async function saveCertificate(db: Db, originId: number, values: CertificateValues): Promise<void> {
  const columns = {
    fingerprint: values.fingerprint,
    expires_at: values.expiresAt,
    certificate: values.certificate,
    intermediate_certificate: values.intermediateCertificate,
    private_key_enc: values.privateKeyEnc,
    created_at: new Date(),
  };
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('tls_certificates')
      .values({ origin_id: originId, ...columns })
      .onConflict((conflict) => conflict.column('origin_id').doUpdateSet(columns))
      .execute();
    await trx
      .updateTable('origins')
      .set((eb) => ({
        status: 2,
        status_message: '',
        config_version: eb('config_version', '+', 1),
        updated_at: new Date(),
      }))
      .where('id', '=', originId)
      .execute();
  });
}
