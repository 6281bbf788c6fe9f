import { messageRef, OriginKind } from '@ukiyo/contract';
import type { HttpOriginConfig } from './http.ts';
import type { S3OriginConfig } from './s3.ts';

export type OriginSource =
  { kind: 'http'; config: HttpOriginConfig } | { kind: 's3'; config: S3OriginConfig };

/**
 * Where an origin's images come from, from its row's kind and stored config, secrets opened
 * with `open` (which throws for a secret sealed under another key); else the message reference
 * of why not, the reason an origin's Error status carries. The edge's registry and origin.check
 * read origins the same way.
 */
export function originSource(
  kind: number,
  config: Record<string, unknown>,
  open: (sealed: string) => string,
): { source: OriginSource; problem: null } | { source: null; problem: string } {
  const fail = (problem: string) => ({ source: null, problem });
  const text = (key: string) => (typeof config[key] === 'string' ? config[key] : '');
  if (kind === OriginKind.http) {
    if (!text('host')) return fail(messageRef('originStatus.noHost'));
    return {
      problem: null,
      source: {
        kind: 'http',
        config: {
          scheme: text('scheme') === 'https' ? 'https' : 'http',
          host: text('host'),
          pathPrefix: text('pathPrefix'),
          rewriteHost: text('rewriteHost'),
        },
      },
    };
  }
  if (kind === OriginKind.s3) {
    let secretAccessKey = '';
    try {
      if (text('secretAccessKeyEnc')) secretAccessKey = open(text('secretAccessKeyEnc'));
    } catch {
      return fail(messageRef('originStatus.s3SecretUnreadable'));
    }
    if (!text('accessKeyID') || !secretAccessKey)
      return fail(messageRef('originStatus.s3CredentialsMissing'));
    return {
      problem: null,
      source: {
        kind: 's3',
        config: {
          accessKeyID: text('accessKeyID'),
          secretAccessKey,
          endPoint: text('endPoint'),
          region: text('region'),
          bucket: text('bucket'),
          pathPrefix: text('pathPrefix'),
        },
      },
    };
  }
  return fail(messageRef('originStatus.unknownKind'));
}
