import type { MessageKey } from './messages.ts';

/**
 * The error catalogue: every failure body is `{error, invalids?}` where `error` is one of these
 * codes (console-spec section 8 spells several of them; they are kept verbatim for
 * compatibility). Each code has one HTTP status and one message key: the single mapping table
 * from codes to messages. 403 means only "no valid session".
 */
export const ERRORS = {
  'validation error': { status: 400, message: 'error.invalidInputs' },
  'session is invalid': { status: 403, message: 'error.sessionInvalid' },
  'not activated': { status: 412, message: 'error.notActivated' },
  'organization not selected': { status: 412, message: 'error.noOrganization' },
  'not enough permission': { status: 404, message: 'limit.notEnoughPermission' },
  'image not available': { status: 404, message: 'limit.imageNotAvailable' },
  'live streaming not available': { status: 404, message: 'limit.liveStreamingNotAvailable' },
  'not found': { status: 404, message: 'error.notFound' },
  'too many attempts': { status: 429, message: 'error.tooManyAttempts' },
  'wrong email or password': { status: 400, message: 'error.wrongCredentials' },
  'password too long': { status: 400, message: 'error.passwordTooLong' },
  'too many origin exists for this plan': { status: 400, message: 'error.tooManyOrigins' },
  'too many users exist in organization': { status: 400, message: 'error.tooManyUsers' },
  'sql: no rows in result set': { status: 404, message: 'error.activationNotFound' },
  'already activated': { status: 409, message: 'error.alreadyActivated' },
  'token is expired': { status: 410, message: 'error.activationExpired' },
  'emailAddress not match': { status: 400, message: 'error.emailNotMatch' },
  'not valid user': { status: 400, message: 'error.notValidUser' },
  'wrong old password': { status: 400, message: 'error.wrongOldPassword' },
  'password is incorrect': { status: 400, message: 'error.passwordIncorrect' },
  'domain already in use': { status: 409, message: 'error.domainInUse' },
  'custom domain required': { status: 400, message: 'error.customDomainRequired' },
  'origin not found': { status: 404, message: 'error.originNotFound' },
  'cache unavailable': { status: 503, message: 'error.cacheUnavailable' },
  'invalid origin for certificate': { status: 400, message: 'error.invalidCertificateOrigin' },
  'certificate host mismatch': { status: 400, message: 'error.certificateHostMismatch' },
  'certificate expired': { status: 400, message: 'error.certificateExpired' },
  'certificate chain invalid': { status: 400, message: 'error.certificateChainInvalid' },
  'certificate key mismatch': { status: 400, message: 'error.certificateKeyMismatch' },
  'certificate key encrypted': { status: 400, message: 'error.certificateKeyEncrypted' },
  'certificate unreadable': { status: 400, message: 'error.certificateUnreadable' },
  'at least one user must have all permissions': { status: 409, message: 'error.lastFullPermissionUser' },
  'plan user count over limit': { status: 409, message: 'error.planUserCount' },
  'plan custom domain in use': { status: 409, message: 'error.planCustomDomain' },
  'plan origin count over limit': { status: 409, message: 'error.planOriginCount' },
  'plan non-http origin in use': { status: 409, message: 'error.planNonHttpOrigin' },
  'plan change invalid': { status: 400, message: 'error.planInvalid' },
  'plan change needs sales': { status: 409, message: 'error.planContactSales' },
  'invalid verification code': { status: 400, message: 'error.totpInvalid' },
  // Transport-level refusals of the dispatcher: never reached by the console's own calls.
  'method not allowed': { status: 405, message: 'error.badRequest' },
  'unsupported api version': { status: 400, message: 'error.badRequest' },
  'missing X-Requested-With header': { status: 400, message: 'error.badRequest' },
  'cross-site request refused': { status: 400, message: 'error.badRequest' },
  'unknown operation': { status: 404, message: 'error.badRequest' },
  'malformed request body': { status: 400, message: 'error.badRequest' },
  // The Platform API's own refusals (/api/v1).
  'api token invalid': { status: 401, message: 'error.apiTokenInvalid' },
  'too many requests': { status: 429, message: 'error.tooManyRequests' },
  'precondition failed': { status: 412, message: 'error.preconditionFailed' },
  'idempotency key reused': { status: 422, message: 'error.idempotencyKeyReused' },
  'idempotency key in use': { status: 409, message: 'error.idempotencyKeyInUse' },
  'not implemented': { status: 501, message: 'error.notImplemented' },
  'internal error': { status: 500, message: 'error.internal' },
} as const satisfies Record<string, { status: number; message: MessageKey }>;

export type ErrorCode = keyof typeof ERRORS;

/** `invalids`: field path (dot-joined) to message references (see messageRef). */
export type Invalids = Record<string, string[]>;

export interface ErrorBody {
  error: ErrorCode;
  invalids?: Invalids;
  /** Parameters of the error's message, e.g. `{id}` for 'origin not found'. */
  params?: Record<string, string | number>;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERRORS, value);
}

/** The message key the console shows for an error body's code; unknown codes are internal. */
export function errorMessageKey(code: string): MessageKey {
  return isErrorCode(code) ? ERRORS[code].message : 'error.internal';
}
