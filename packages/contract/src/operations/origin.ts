import { z } from 'zod';
import { Origin, OriginCheckResult, OriginKind, OriginMinimum, TlsCertificate, Usage } from '../entities.ts';
import { messageRef } from '../messages.ts';
import { operation } from '../operation.ts';
import { Permission } from '../permissions.ts';
import { bool, hostname, id, integer, optionalText, PRINTABLE_ASCII, text } from '../validation.ts';

const withoutLeadingSlash = (max: number) =>
  optionalText(max).transform((value) => value.replace(/^\/+/, ''));

export const HttpConfigInput = z.object({
  scheme: z.enum(['http', 'https'], { error: 'validation.invalid' }),
  host: hostname(),
  pathPrefix: withoutLeadingSlash(1024),
  rewriteHost: optionalText(259),
});

export const S3ConfigInput = z.object({
  accessKeyID: optionalText(128),
  /** Empty on update keeps the stored secret. */
  secretAccessKey: optionalText(256),
  endPoint: optionalText(1024),
  region: optionalText(64),
  bucket: text(63).min(1, 'validation.required'),
  pathPrefix: withoutLeadingSlash(1024),
});

export const ConversionParameterInput = z.object({
  conversionParameterID: z.number().int().default(-1),
  pattern: withoutLeadingSlash(1024).pipe(z.string().min(1, 'validation.required')),
  path: withoutLeadingSlash(1024),
  parameter: text(2048).trim().min(1, 'validation.required'),
  disallowOverride: bool().default(false),
});

export const OriginInput = z
  .object({
    originID: z.number().int().default(-1),
    kind: z.union([z.literal(OriginKind.http), z.literal(OriginKind.s3), z.literal(OriginKind.live)], {
      error: 'validation.invalid',
    }),
    /** Custom domain; empty means the generated name only. */
    originName: optionalText(253),
    enableSignedUrl: bool().default(false),
    signingSecret: optionalText(256).refine(
      (s) => s === '' || PRINTABLE_ASCII.test(s),
      'validation.printableAscii',
    ),
    defaultCache: integer(0, 2147483647).default(0),
    enableClientHints: bool().default(false),
    allowSvg: bool().default(false),
    description: optionalText(1000),
    conversionParameters: z.array(ConversionParameterInput).max(100).default([]),
    overridableParameters: optionalText(1024),
    acl: z
      .object({
        isAllowList: bool().default(false),
        cidrs: z.array(text(64)).max(1000, messageRef('validation.maxLines', { n: 1000 })),
      })
      .default({ isAllowList: false, cidrs: [] }),
    config: z.union([HttpConfigInput, S3ConfigInput]),
  })
  .superRefine((origin, ctx) => {
    const seen = new Set<string>();
    origin.conversionParameters.forEach((rule, index) => {
      if (seen.has(rule.pattern)) {
        ctx.addIssue({
          code: 'custom',
          path: ['conversionParameters', index, 'pattern'],
          message: 'validation.duplicate',
        });
      }
      seen.add(rule.pattern);
    });
    if (origin.enableSignedUrl && origin.signingSecret === '') {
      ctx.addIssue({ code: 'custom', path: ['signingSecret'], message: 'validation.required' });
    }
  });

export const originOperations = {
  'origin.list': operation('origin.list', {
    input: z.object({ organizationID: id().optional() }),
    output: z.object({ origins: z.array(Origin.extend({ usage: Usage })) }),
    access: 'organization',
    permission: Permission.origin,
    organizationKind: 'image',
  }),
  'origin.list_minimum': operation('origin.list_minimum', {
    input: z.object({ organizationID: id().optional() }),
    output: z.object({ origins: z.array(OriginMinimum) }),
    access: 'organization',
  }),
  'origin.get': operation('origin.get', {
    input: z.object({ originID: id() }),
    output: z.object({ origin: Origin }),
    access: 'organization',
    permission: Permission.origin,
    organizationKind: 'image',
  }),
  'origin.add': operation('origin.add', {
    input: z.object({ origin: OriginInput }),
    output: z.object({ origin: Origin }),
    access: 'organization',
    permission: Permission.origin,
    organizationKind: 'image',
  }),
  'origin.update': operation('origin.update', {
    input: z.object({ origin: OriginInput }),
    output: z.object({ origin: Origin }),
    access: 'organization',
    permission: Permission.origin,
    organizationKind: 'image',
  }),
  'origin.delete': operation('origin.delete', {
    input: z.object({ originID: id() }),
    output: z.object({}),
    access: 'organization',
    permission: Permission.origin,
    organizationKind: 'image',
  }),
  /**
   * A new origin with another one’s settings, rules, ACL and secrets (the stored S3 key
   * included, which the console's copy screen asks for again), under a new generated name and
   * without the custom domain, which stays the original's.
   */
  'origin.copy': operation('origin.copy', {
    input: z.object({ originID: id(), description: text(1000).optional() }),
    output: z.object({ origin: Origin }),
    access: 'organization',
    permission: Permission.origin,
    organizationKind: 'image',
  }),
  /**
   * A new random signing secret for the origin, answered once here (and in origin.get). URLs
   * signed with the previous one stop verifying once the edges load the change.
   */
  'origin.rotate_signing_secret': operation('origin.rotate_signing_secret', {
    input: z.object({ originID: id() }),
    output: z.object({ origin: Origin }),
    access: 'organization',
    permission: Permission.origin,
    organizationKind: 'image',
  }),
  /**
   * Fetches one path of a saved origin (default its root) as the edge would, with a short
   * timeout and a small read, and says what happened (OriginCheckResult).
   */
  'origin.check': operation('origin.check', {
    input: z.object({
      originID: id(),
      /** Inside the origin; control characters cannot be part of a request line. */
      path: optionalText(1024).refine(
        (path) => [...path].every((char) => char >= ' ' && char !== '\u007f'),
        'validation.invalid',
      ),
    }),
    output: z.object({ result: OriginCheckResult }),
    access: 'organization',
    permission: Permission.origin,
    organizationKind: 'image',
  }),
  'origin.upload_tls_certificate': operation('origin.upload_tls_certificate', {
    input: z.object({
      originID: id(),
      certificate: text(65536).min(1, 'validation.required'),
      intermediateCertificate: optionalText(65536),
      privateKey: text(65536).min(1, 'validation.required'),
    }),
    output: z.object({ tlsCertificate: TlsCertificate }),
    access: 'organization',
    permission: Permission.origin,
    organizationKind: 'image',
  }),
};
