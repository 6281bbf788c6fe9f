import { randomInt } from 'node:crypto';
import {
  HOSTNAME_PATTERN,
  HttpConfigInput,
  invalidsOf,
  OriginKind,
  S3ConfigInput,
  planFeatures,
  type Invalids,
  type OriginInput,
} from '@ukiyo/contract';
import { validateRules } from '@ukiyo/imaging';
import ipaddr from 'ipaddr.js';
import type { z } from 'zod';
import type { Config } from '../config.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Db } from '../db/database.ts';
import type { OrganizationRecord } from '../db/repositories/organizations.ts';
import {
  countOrigins,
  hostTaken,
  type OriginRow,
  type OriginValues,
  type RuleValues,
} from '../db/repositories/origins.ts';
import { AppError } from '../http/app-error.ts';
import { privateUrlInvalids } from './public-hosts.ts';

export type OriginInputData = z.output<typeof OriginInput>;

// Lower-case letters and digits only: the name is a DNS label under EDGE_DOMAIN.
const NAME_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const NAME_LENGTH = 12;

export function generateOriginName(edgeDomain: string): string {
  let label = '';
  for (let i = 0; i < NAME_LENGTH; i++) label += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return `${label}.${edgeDomain}`;
}

/** The edge's public address for an origin host name (EDGE_PUBLIC_URL's `{host}`). */
export function deliveryUrlOf(config: Config, host: string): string {
  return (config.EDGE_PUBLIC_URL ?? `http://{host}:${config.EDGE_PORT}`).replace('{host}', host);
}

/** Plan limits hold for members; administrators are never limited (console-spec section 6). */
export async function checkOriginLimit(
  db: Db,
  organization: OrganizationRecord,
  isAdmin: boolean,
): Promise<void> {
  if (isAdmin) return;
  if ((await countOrigins(db, organization.id)) >= planFeatures(organization.plan).originLimit)
    throw new AppError('too many origin exists for this plan');
}

/**
 * One IP address or CIDR per entry, in canonical form; blank lines dropped. A bare address
 * stays a bare address so the console shows what was typed.
 */
export function normaliseAcl(cidrs: readonly string[]): { cidrs: string[]; invalids: Invalids } {
  const normalised: string[] = [];
  const invalids: Invalids = {};
  cidrs.forEach((line, index) => {
    const entry = line.trim();
    if (!entry) return;
    try {
      if (entry.includes('/')) {
        const [address, bits] = ipaddr.parseCIDR(entry);
        normalised.push(`${address.toString()}/${bits}`);
      } else {
        normalised.push(ipaddr.parse(entry).toString());
      }
    } catch {
      invalids[`origin.acl.cidrs.${index}`] = ['validation.cidr'];
    }
  });
  return { cidrs: normalised, invalids };
}

/**
 * Everything the input schema cannot check alone: the config must match the kind, the kind
 * must suit the organization and plan, rules must parse, the source must not be on a private
 * address (unless ALLOW_PRIVATE_ORIGINS), the custom domain must be free.
 * Returns the values to store, secrets sealed.
 */
export async function originValues(
  deps: { db: Db; secrets: SecretBox; edgeDomain: string; allowPrivateOrigins: boolean },
  input: OriginInputData,
  organization: OrganizationRecord,
  isAdmin: boolean,
  existing: OriginRow | null,
): Promise<{ values: OriginValues; rules: RuleValues[]; name: string }> {
  const invalids: Invalids = {};
  const add = (field: string, message: string) => (invalids[field] ??= []).push(message);
  const features = planFeatures(organization.plan);

  const liveKind = input.kind === OriginKind.live;
  if (liveKind !== organization.is_live) add('origin.kind', 'validation.invalid');
  if (input.kind === OriginKind.s3 && !features.s3Origins && !isAdmin)
    add('origin.kind', 'validation.invalid');

  let config: Record<string, unknown> = {};
  // The URL each source field makes the edge connect to, by field path.
  const sourceUrls: Record<string, string> = {};
  if (input.kind === OriginKind.http) {
    const parsed = HttpConfigInput.safeParse(input.config);
    if (parsed.success) {
      config = parsed.data;
      sourceUrls['origin.config.host'] = `${parsed.data.scheme}://${parsed.data.host}/`;
    } else {
      Object.assign(invalids, prefixed(invalidsOf(parsed.error), 'origin.config'));
    }
  } else if (input.kind === OriginKind.s3) {
    const parsed = S3ConfigInput.safeParse(input.config);
    if (parsed.success) {
      const { secretAccessKey, ...rest } = parsed.data;
      // The stored key is never sent back, so an empty one on update means "keep it".
      const previous = existing?.kind === OriginKind.s3 ? existing.config.secretAccessKeyEnc : '';
      config = {
        ...rest,
        secretAccessKeyEnc: secretAccessKey
          ? deps.secrets.seal(secretAccessKey)
          : typeof previous === 'string'
            ? previous
            : '',
      };
      if (rest.endPoint && !isHttpUrl(rest.endPoint)) add('origin.config.endPoint', 'validation.invalid');
      else if (rest.endPoint) sourceUrls['origin.config.endPoint'] = rest.endPoint;
    } else {
      Object.assign(invalids, prefixed(invalidsOf(parsed.error), 'origin.config'));
    }
  }

  const rules = input.conversionParameters.map((rule) => ({
    pattern: rule.pattern,
    path: rule.path,
    parameter: rule.parameter,
    disallowOverride: rule.disallowOverride,
  }));
  // The grammar works on paths with their leading slash; the console stores them without.
  const problems = validateRules({
    rules: rules.map((rule) => ({ ...rule, pattern: `/${rule.pattern}`, path: `/${rule.path}` })),
    overridableParameters: input.overridableParameters,
  });
  for (const problem of problems) {
    if (problem.index === null) add('origin.overridableParameters', 'validation.invalid');
    else if (problem.reason === 'duplicate pattern')
      add(`origin.conversionParameters.${problem.index}.${problem.field}`, 'validation.duplicate');
    else add(`origin.conversionParameters.${problem.index}.${problem.field}`, 'validation.invalid');
  }

  Object.assign(invalids, await privateUrlInvalids(sourceUrls, deps.allowPrivateOrigins));

  const acl = normaliseAcl(input.acl.cidrs);
  Object.assign(invalids, acl.invalids);

  const name = existing?.name ?? generateOriginName(deps.edgeDomain);
  const customDomain = input.originName.trim().toLowerCase();
  const originName = customDomain === '' ? name : customDomain;
  if (originName !== name) {
    if (!features.customDomain && !isAdmin) add('origin.originName', 'validation.invalid');
    else if (!HOSTNAME_PATTERN.test(customDomain) || customDomain.includes(':'))
      add('origin.originName', 'validation.host');
    else if (customDomain.endsWith(`.${deps.edgeDomain.toLowerCase()}`))
      add('origin.originName', 'validation.invalid');
  }

  if (Object.keys(invalids).length > 0) throw new AppError('validation error', { invalids });
  if (originName !== name && (await hostTaken(deps.db, originName, existing?.id)))
    throw new AppError('domain already in use');

  return {
    name,
    rules,
    values: {
      kind: input.kind,
      originName,
      enableSignedUrl: input.enableSignedUrl,
      signingSecretEnc: input.signingSecret ? deps.secrets.seal(input.signingSecret) : '',
      defaultCache: input.defaultCache,
      enableClientHints: input.enableClientHints,
      allowSvg: input.allowSvg,
      description: input.description,
      config,
      acl: { isAllowList: input.acl.isAllowList, cidrs: acl.cidrs },
      overridableParameters: input.overridableParameters
        .split(',')
        .map((key) => key.trim())
        .filter(Boolean)
        .join(','),
    },
  };
}

function prefixed(invalids: Invalids, prefix: string): Invalids {
  return Object.fromEntries(
    Object.entries(invalids).map(([field, messages]) => [`${prefix}.${field}`, messages]),
  );
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
