import {
  generateSigningSecret,
  OriginKind,
  type HttpConfigInput,
  type Origin,
  type S3ConfigInput,
} from '@ukiyo/contract';
import { checkOrigin, originSource } from '@ukiyo/edge/origin-check';
import type { z } from 'zod';
import type { RateRule } from '../auth/rate-limits.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { findReachableOrganization } from '../db/repositories/organizations.ts';
import {
  certificatesOf,
  deleteOrigin,
  findOrigin,
  insertOrigin,
  listOrigins,
  originDetails,
  saveCertificate,
  updateOrigin,
  type CertificateSummary,
  type OriginDetails,
  type OriginRow,
} from '../db/repositories/origins.ts';
import { AppError, uniqueOr } from '../http/app-error.ts';
import { checkCertificate } from '../services/certificates.ts';
import { checkOriginLimit, deliveryUrlOf, originValues, type OriginInputData } from '../services/origins.ts';
import { authOf, organizationOf, type Handlers, type OperationContext, type ServerDeps } from './context.ts';

/**
 * origin.check fetches from the console server: per user a handful a minute (a save checks
 * once), each one attempt of at most ORIGIN_CHECK_TIMEOUT_MS reading ORIGIN_CHECK_MAX_BYTES.
 */
export const ORIGIN_CHECK_PER_USER: RateRule = { points: 20, seconds: 60 };
const ORIGIN_CHECK_TIMEOUT_MS = 5_000;
const ORIGIN_CHECK_MAX_BYTES = 256 * 1024;

export function openSecret(secrets: SecretBox, sealed: string): string {
  if (!sealed) return '';
  try {
    return secrets.open(sealed);
  } catch {
    // A secret sealed under another key (SECRET_KEY changed) reads as unset, not as a crash.
    return '';
  }
}

function presentConfig(row: OriginRow): Origin['config'] {
  const config = row.config;
  const string = (key: string) => (typeof config[key] === 'string' ? config[key] : '');
  if (row.kind === OriginKind.http) {
    return {
      scheme: string('scheme') === 'https' ? 'https' : 'http',
      host: string('host'),
      pathPrefix: string('pathPrefix'),
      rewriteHost: string('rewriteHost'),
    };
  }
  if (row.kind === OriginKind.s3) {
    return {
      accessKeyID: string('accessKeyID'),
      // Never sent back: the console only learns whether one is stored.
      secretAccessKey: string('secretAccessKeyEnc') ? '********' : '',
      endPoint: string('endPoint'),
      region: string('region'),
      bucket: string('bucket'),
      pathPrefix: string('pathPrefix'),
    };
  }
  return {};
}

function presentCertificate(certificate: CertificateSummary | undefined): Origin['tlsCertificate'] {
  if (!certificate) return null;
  return {
    tlsCertificateId: certificate.id,
    fingerprint: certificate.fingerprint,
    expiresAt: certificate.expiresAt.toISOString(),
  };
}

function presentOrigin(
  { row, rules, certificate }: OriginDetails,
  { secrets, config }: Pick<ServerDeps, 'secrets' | 'config'>,
): Origin {
  return {
    originID: row.id,
    organizationID: row.organization_id,
    name: row.name,
    kind: row.kind,
    status: row.status,
    statusMessage: row.status_message,
    originName: row.origin_name,
    enableSignedUrl: row.enable_signed_url,
    signingSecret: openSecret(secrets, row.signing_secret_enc),
    defaultCache: row.default_cache,
    enableClientHints: row.enable_client_hints,
    allowSvg: row.allow_svg,
    description: row.description,
    tlsCertificate: presentCertificate(certificate),
    conversionParameters: rules.map((rule) => ({
      conversionParameterID: rule.id,
      originID: rule.origin_id,
      pattern: rule.pattern,
      path: rule.path,
      parameter: rule.parameter,
      disallowOverride: rule.disallow_override,
    })),
    overridableParameters: row.overridable_parameters,
    acl: row.acl,
    config: presentConfig(row),
    deliveryUrl: deliveryUrlOf(config, row.name),
  };
}

/**
 * After an edit of the caller's organization's origins (settings, rules, ACL, certificate): every
 * console process's origin.list reads them anew from the next call on.
 */
function originsChanged(context: OperationContext): Promise<void> {
  return context.deps.invalidations.publish({ originsOf: organizationOf(context).id });
}

/** The organization asked for (administrators may name another one), else the current one. */
async function targetOrganization(context: OperationContext, organizationID: number | undefined) {
  const current = organizationOf(context);
  if (organizationID === undefined || organizationID === current.id) return current;
  const other = await findReachableOrganization(context.deps.db, authOf(context).scope, organizationID);
  if (!other) throw new AppError('not found');
  return other;
}

async function loadOrigin(context: OperationContext, originId: number) {
  const row = await findOrigin(context.deps.db, authOf(context).scope, organizationOf(context).id, originId);
  if (!row) throw new AppError('origin not found', { params: { id: originId } });
  return row;
}

async function present(context: OperationContext, originId: number): Promise<Origin> {
  const [details] = await originDetails(context.deps.db, authOf(context).scope, organizationOf(context).id, {
    originId,
  });
  if (!details) throw new AppError('origin not found', { params: { id: originId } });
  return presentOrigin(details, context.deps);
}

function originValuesDeps({ db, secrets, config }: ServerDeps) {
  return { db, secrets, edgeDomain: config.EDGE_DOMAIN, allowPrivateOrigins: config.ALLOW_PRIVATE_ORIGINS };
}

/** Validates against the organization's plan and stores a new origin: origin.add and origin.copy. */
async function addOrigin(context: OperationContext, origin: OriginInputData): Promise<Origin> {
  const { db } = context.deps;
  const auth = authOf(context);
  const organization = organizationOf(context);
  await checkOriginLimit(db, organization, auth.scope.isAdmin);
  const { name, values, rules } = await originValues(
    originValuesDeps(context.deps),
    origin,
    organization,
    auth.scope.isAdmin,
    null,
  );
  const id = await uniqueOr(new AppError('domain already in use'), () =>
    insertOrigin(db, organization.id, name, values, rules),
  );
  await originsChanged(context);
  return present(context, id);
}

/** Validates and stores an origin's new settings: origin.update and the secret's rotation. */
async function changeOrigin(context: OperationContext, existing: OriginRow, origin: OriginInputData) {
  const { values, rules } = await originValues(
    originValuesDeps(context.deps),
    origin,
    organizationOf(context),
    authOf(context).scope.isAdmin,
    existing,
  );
  await uniqueOr(new AppError('domain already in use'), () =>
    updateOrigin(context.deps.db, existing.id, values, rules),
  );
  await originsChanged(context);
  return present(context, existing.id);
}

/**
 * A stored origin as the input that would save it again unchanged, its secrets opened (the S3
 * key too: a copy needs it, and an update sealing it anew is harmless).
 */
async function inputOf(context: OperationContext, row: OriginRow): Promise<OriginInputData> {
  const { secrets } = context.deps;
  const origin = await present(context, row.id);
  const config =
    row.kind === OriginKind.s3
      ? {
          ...(origin.config as z.output<typeof S3ConfigInput>),
          secretAccessKey: openSecret(secrets, String(row.config.secretAccessKeyEnc ?? '')),
        }
      : (origin.config as z.output<typeof HttpConfigInput>);
  return {
    originID: row.id,
    kind: row.kind as OriginInputData['kind'],
    originName: origin.originName === origin.name ? '' : origin.originName,
    enableSignedUrl: origin.enableSignedUrl,
    signingSecret: origin.signingSecret,
    defaultCache: origin.defaultCache,
    enableClientHints: origin.enableClientHints,
    allowSvg: origin.allowSvg,
    description: origin.description,
    conversionParameters: origin.conversionParameters,
    overridableParameters: origin.overridableParameters,
    acl: origin.acl,
    config,
  };
}

export const originHandlers: Handlers = {
  'origin.list': async ({ organizationID }, context) => {
    const organization = await targetOrganization(context, organizationID);
    // Kept per organization for a second (OriginLists): the caller's reach was checked above.
    return context.deps.originLists.of(organization.id, async () => {
      const origins = await originDetails(context.deps.db, authOf(context).scope, organization.id);
      return {
        origins: origins.map((details) => ({
          ...presentOrigin(details, context.deps),
          usage: details.usage,
        })),
      };
    });
  },

  'origin.list_minimum': async ({ organizationID }, context) => {
    const organization = await targetOrganization(context, organizationID);
    const rows = await listOrigins(context.deps.db, authOf(context).scope, organization.id);
    return {
      origins: rows.map((row) => ({
        originID: row.id,
        name: row.name,
        originName: row.origin_name,
        kind: row.kind,
        enableSignedUrl: row.enable_signed_url,
        deliveryUrl: deliveryUrlOf(context.deps.config, row.name),
      })),
    };
  },

  'origin.get': async ({ originID }, context) => ({ origin: await present(context, originID) }),

  'origin.add': async ({ origin }, context) => ({ origin: await addOrigin(context, origin) }),

  'origin.update': async ({ origin }, context) => ({
    origin: await changeOrigin(context, await loadOrigin(context, origin.originID), origin),
  }),

  'origin.copy': async ({ originID, description }, context) => {
    const source = await loadOrigin(context, originID);
    const input = await inputOf(context, source);
    return {
      origin: await addOrigin(context, {
        ...input,
        originID: -1,
        originName: '',
        description: description ?? input.description,
      }),
    };
  },

  'origin.rotate_signing_secret': async ({ originID }, context) => {
    const existing = await loadOrigin(context, originID);
    const input = await inputOf(context, existing);
    return {
      origin: await changeOrigin(context, existing, { ...input, signingSecret: generateSigningSecret() }),
    };
  },

  'origin.delete': async ({ originID }, context) => {
    const existing = await loadOrigin(context, originID);
    await deleteOrigin(context.deps.db, existing.id);
    await originsChanged(context);
    return {};
  },

  /**
   * The edge's own fetch code runs here (no call to an edge process), so the check works the
   * same in `npm start` and on a console server alone; the SSRF guard follows this process's
   * ALLOW_PRIVATE_ORIGINS, as the edges' does.
   */
  'origin.check': async ({ originID, path }, context) => {
    const { limits, secrets, config } = context.deps;
    const row = await loadOrigin(context, originID);
    await limits.spend('origin-check', ORIGIN_CHECK_PER_USER, String(authOf(context).user.id));
    const target = `/${path.replace(/^\/+/, '')}`;
    const { source, problem } = originSource(row.kind, row.config, (sealed) => secrets.open(sealed));
    if (!source) {
      return {
        result: {
          outcome: 'unusable',
          path: target,
          status: null,
          contentType: null,
          bytes: 0,
          truncated: false,
          elapsedMs: 0,
          reason: problem,
        },
      };
    }
    const result = await checkOrigin(source, target, {
      allowPrivate: config.ALLOW_PRIVATE_ORIGINS,
      timeoutMs: Math.min(config.EDGE_ORIGIN_TIMEOUT_MS, ORIGIN_CHECK_TIMEOUT_MS),
      maxBytes: ORIGIN_CHECK_MAX_BYTES,
    });
    return { result };
  },

  /**
   * Only a custom domain of the caller's organization takes a certificate: the product's own
   * names are served under EDGE_DOMAIN's certificate, not the tenant's.
   */
  'origin.upload_tls_certificate': async (input, context) => {
    const { db, secrets } = context.deps;
    const origin = await findOrigin(db, authOf(context).scope, organizationOf(context).id, input.originID);
    if (
      !origin ||
      origin.kind === OriginKind.live ||
      origin.origin_name.toLowerCase() === origin.name.toLowerCase()
    )
      throw new AppError('invalid origin for certificate');
    const checked = checkCertificate(input, origin.origin_name, new Date());
    await saveCertificate(db, origin.id, {
      fingerprint: checked.fingerprint,
      expiresAt: checked.expiresAt,
      certificate: checked.certificate,
      intermediateCertificate: checked.intermediateCertificate,
      privateKeyEnc: secrets.seal(checked.privateKey),
    });
    await originsChanged(context);
    const stored = (await certificatesOf(db, [origin.id])).get(origin.id);
    const tlsCertificate = presentCertificate(stored);
    if (!tlsCertificate) throw new Error('the certificate was not stored');
    return { tlsCertificate };
  },
};
