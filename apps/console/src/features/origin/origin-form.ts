import {
  invalidsOf,
  operations,
  OriginKind,
  type Invalids,
  type OperationInput,
  type Operations,
  type Origin,
} from '@ukiyo/contract';
import { hasCustomDomain } from './origin-display.ts';

type OriginInput = OperationInput<Operations['origin.add']>['origin'];

/**
 * The origin form's own shape: both source configurations are kept, so switching the kind back
 * and forth loses nothing; the ACL is the textarea's text; the cache seconds are what was typed.
 */
export interface OriginFormValues {
  kind: typeof OriginKind.http | typeof OriginKind.s3;
  http: { scheme: 'http' | 'https'; host: string; pathPrefix: string; rewriteHost: string };
  s3: {
    accessKeyID: string;
    secretAccessKey: string;
    endPoint: string;
    region: string;
    bucket: string;
    pathPrefix: string;
  };
  useCustomDomain: boolean;
  originName: string;
  domainConfirmed: boolean;
  enableSignedUrl: boolean;
  signingSecret: string;
  defaultCache: string;
  enableClientHints: boolean;
  allowSvg: boolean;
  conversionParameters: { pattern: string; path: string; parameter: string; disallowOverride: boolean }[];
  overridableParameters: string;
  aclMode: 'deny' | 'allow';
  aclCidrs: string;
  description: string;
}

export const ACL_MAX_LINES = 1000;

const EMPTY_HTTP: OriginFormValues['http'] = { scheme: 'https', host: '', pathPrefix: '', rewriteHost: '' };
const EMPTY_S3: OriginFormValues['s3'] = {
  accessKeyID: '',
  secretAccessKey: '',
  endPoint: '',
  region: '',
  bucket: '',
  pathPrefix: '',
};

/**
 * The form for a new origin, a copy of `origin` (its settings, not its names: a domain serves
 * one origin only; nor its S3 secret, which the console never receives) or an edit of it.
 */
export function formValuesOf(origin: Origin | null, mode: 'create' | 'copy' | 'update'): OriginFormValues {
  if (!origin) {
    return {
      kind: OriginKind.http,
      http: EMPTY_HTTP,
      s3: EMPTY_S3,
      useCustomDomain: false,
      originName: '',
      domainConfirmed: false,
      enableSignedUrl: false,
      signingSecret: '',
      defaultCache: '0',
      enableClientHints: false,
      allowSvg: false,
      conversionParameters: [],
      overridableParameters: '',
      aclMode: 'deny',
      aclCidrs: '',
      description: '',
    };
  }
  const config = origin.config as Record<string, string>;
  const s3 = origin.kind === OriginKind.s3;
  const custom = mode === 'update' && hasCustomDomain(origin);
  return {
    kind: s3 ? OriginKind.s3 : OriginKind.http,
    http: s3
      ? EMPTY_HTTP
      : {
          scheme: config.scheme === 'http' ? 'http' : 'https',
          host: config.host ?? '',
          pathPrefix: config.pathPrefix ?? '',
          rewriteHost: config.rewriteHost ?? '',
        },
    s3: s3
      ? {
          accessKeyID: config.accessKeyID ?? '',
          // Empty keeps the stored key on update; a copy needs it typed again.
          secretAccessKey: '',
          endPoint: config.endPoint ?? '',
          region: config.region ?? '',
          bucket: config.bucket ?? '',
          pathPrefix: config.pathPrefix ?? '',
        }
      : EMPTY_S3,
    useCustomDomain: custom,
    originName: custom ? origin.originName : '',
    domainConfirmed: custom,
    enableSignedUrl: origin.enableSignedUrl,
    signingSecret: origin.signingSecret,
    defaultCache: String(origin.defaultCache),
    enableClientHints: origin.enableClientHints,
    allowSvg: origin.allowSvg,
    conversionParameters: origin.conversionParameters.map(
      ({ pattern, path, parameter, disallowOverride }) => ({
        pattern,
        path,
        parameter,
        disallowOverride,
      }),
    ),
    overridableParameters: origin.overridableParameters,
    aclMode: origin.acl.isAllowList ? 'allow' : 'deny',
    aclCidrs: origin.acl.cidrs.join('\n'),
    description: origin.description,
  };
}

function aclLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** What origin.add / origin.update receive. `defaultCache` must already be checked as numeric. */
export function originInputOf(values: OriginFormValues, originID: number): OriginInput {
  return {
    originID,
    kind: values.kind,
    originName: values.useCustomDomain ? values.originName.trim() : '',
    enableSignedUrl: values.enableSignedUrl,
    signingSecret: values.signingSecret,
    defaultCache: Number(values.defaultCache),
    enableClientHints: values.enableClientHints,
    allowSvg: values.allowSvg,
    description: values.description,
    conversionParameters: values.conversionParameters.map((rule) => ({ conversionParameterID: -1, ...rule })),
    overridableParameters: values.overridableParameters,
    acl: { isAllowList: values.aclMode === 'allow', cidrs: aclLines(values.aclCidrs) },
    config: values.kind === OriginKind.s3 ? values.s3 : values.http,
  };
}

/** A server field path (`origin.config.host`, `origin.acl.cidrs.3`) as the form's field. */
export function formFieldOf(field: string, kind: OriginFormValues['kind']): string {
  const path = field.replace(/^origin\./, '');
  if (path.startsWith('config.')) return `${kind === OriginKind.s3 ? 's3' : 'http'}.${path.slice(7)}`;
  if (path.startsWith('acl.cidrs')) return 'aclCidrs';
  if (path === 'acl.isAllowList' || path === 'acl') return 'aclMode';
  if (path === 'originName') return 'originName';
  return path === field ? 'root' : path;
}

/** The server's `invalids` keyed by the form's fields. */
export function formInvalids(invalids: Invalids, kind: OriginFormValues['kind']): Invalids {
  const mapped: Invalids = {};
  for (const [field, messages] of Object.entries(invalids)) {
    const list = (mapped[formFieldOf(field, kind)] ??= []);
    for (const message of messages) if (!list.includes(message)) list.push(message);
  }
  return mapped;
}

/**
 * The checks the console can make before sending, with the same messages the server would
 * give: the contract's schema, plus what only the form knows (the custom-domain choice and its
 * confirmation). `previous` is the origin being edited.
 */
export function checkOriginForm(values: OriginFormValues, previous: Origin | null): Invalids {
  const invalids: Invalids = {};
  const add = (field: string, message: string) => (invalids[field] ??= []).push(message);
  if (!/^\d+$/.test(values.defaultCache.trim())) add('defaultCache', 'validation.numeric');
  if (aclLines(values.aclCidrs).length > ACL_MAX_LINES)
    add('aclCidrs', `validation.maxLines|n=${ACL_MAX_LINES}`);
  if (values.useCustomDomain) {
    const domain = values.originName.trim().toLowerCase();
    if (domain === '') add('originName', 'error.customDomainRequired');
    else if (!values.domainConfirmed && domain !== previous?.originName.toLowerCase())
      add('domainConfirmed', 'validation.required');
  }
  if (Object.keys(invalids).length > 0) return invalids;
  const parsed = operations['origin.add'].input.safeParse({ origin: originInputOf(values, -1) });
  return parsed.success ? {} : formInvalids(invalidsOf(parsed.error), values.kind);
}

/**
 * Whether saving changes what signed URLs are accepted: a new secret invalidates every signed
 * URL given out; turning signing on refuses every unsigned one. Both are asked about first.
 */
export function changesSigning(values: OriginFormValues, previous: Origin | null): boolean {
  if (!previous) return false;
  if (values.enableSignedUrl !== previous.enableSignedUrl) return true;
  return values.enableSignedUrl && values.signingSecret !== previous.signingSecret;
}
