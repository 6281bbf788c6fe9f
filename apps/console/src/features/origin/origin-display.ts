import { OriginKind, OriginStatus, type Origin } from '@ukiyo/contract';

/** Where the origin's images come from, as the list shows it (console-spec: the displayed URL). */
export function sourceAddress(origin: Pick<Origin, 'kind' | 'config'>): string {
  const config = origin.config as Record<string, string | undefined>;
  const prefix = config.pathPrefix ? `/${config.pathPrefix}` : '';
  if (origin.kind === OriginKind.s3) {
    const endPoint = (config.endPoint || 'https://s3.amazonaws.com').replace(/\/+$/, '');
    return `${endPoint}/${config.bucket ?? ''}${prefix}`;
  }
  if (origin.kind === OriginKind.http) return `${config.scheme ?? 'http'}://${config.host ?? ''}${prefix}`;
  return '';
}

export type StatusName = 'error' | 'applied' | 'updating';

export function statusName(status: number): StatusName {
  if (status === OriginStatus.applied) return 'applied';
  if (status === OriginStatus.updating) return 'updating';
  return 'error';
}

/**
 * The message reference to show for an Error origin's reason: the edge writes `originStatus.*`
 * references; anything else (a reason stored before them) is the generic one.
 */
export function statusReasonKey(statusMessage: string): string {
  return statusMessage.startsWith('originStatus.') ? statusMessage : 'origin.statusReasonUnknown';
}

/** An origin serves a custom domain when its originName is not the generated name. */
export function hasCustomDomain(origin: Pick<Origin, 'name' | 'originName'>): boolean {
  return origin.originName !== '' && origin.originName.toLowerCase() !== origin.name.toLowerCase();
}

export type TlsState = 'notSet' | 'expired' | 'expiresSoon' | 'valid';

/** The certificate warning starts one month before expiry (console-spec section 9). */
export function tlsState(certificate: Origin['tlsCertificate'], now: Date = new Date()): TlsState {
  if (!certificate) return 'notSet';
  const expiresAt = new Date(certificate.expiresAt);
  if (expiresAt.getTime() <= now.getTime()) return 'expired';
  const warnFrom = new Date(now);
  warnFrom.setUTCMonth(warnFrom.getUTCMonth() + 1);
  return expiresAt.getTime() <= warnFrom.getTime() ? 'expiresSoon' : 'valid';
}
