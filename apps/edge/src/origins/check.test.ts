import { describe, expect, it } from 'vitest';
import { failureOutcome, statusOutcome } from './check.ts';
import { OriginError } from './errors.ts';
import { RedirectError } from './http.ts';

/** Node's errors as the fetchers wrap them (OriginError 'failed' with the error as its cause). */
const wrapped = (code: string) =>
  new OriginError('failed', 'origin unreachable', { cause: Object.assign(new Error(code), { code }) });

describe('origin check outcomes', () => {
  it('names failures by the fetchers kind first, then by the network code', () => {
    expect(failureOutcome(new OriginError('forbidden', 'origin address 10.0.0.1 is not allowed'))).toBe(
      'privateAddress',
    );
    expect(failureOutcome(new OriginError('timeout', 'origin did not answer in time'))).toBe('timeout');
    expect(failureOutcome(new RedirectError('origin redirected too many times'))).toBe('redirectFailed');
    expect(failureOutcome(new OriginError('failed', 'origin answered 502'))).toBe('connectionFailed');
    expect(failureOutcome(wrapped('ENOTFOUND'))).toBe('dnsFailure');
    expect(failureOutcome(wrapped('EAI_AGAIN'))).toBe('dnsFailure');
    expect(failureOutcome(wrapped('DEPTH_ZERO_SELF_SIGNED_CERT'))).toBe('tlsError');
    expect(failureOutcome(wrapped('ERR_TLS_CERT_ALTNAME_INVALID'))).toBe('tlsError');
    expect(failureOutcome(wrapped('ERR_SSL_WRONG_VERSION_NUMBER'))).toBe('tlsError');
    expect(failureOutcome(wrapped('ECONNREFUSED'))).toBe('connectionFailed');
    expect(failureOutcome(new Error('anything else'))).toBe('connectionFailed');
  });

  it('names answers by their status', () => {
    expect(statusOutcome(200)).toBe('ok');
    expect(statusOutcome(204)).toBe('ok');
    expect(statusOutcome(401)).toBe('forbidden');
    expect(statusOutcome(403)).toBe('forbidden');
    expect(statusOutcome(404)).toBe('notFound');
    expect(statusOutcome(410)).toBe('notFound');
    expect(statusOutcome(500)).toBe('httpError');
    expect(statusOutcome(304)).toBe('httpError');
  });
});
