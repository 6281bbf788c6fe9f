import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, callApi } from './api-client.ts';
import { applyInvalids, classifyApiError } from './api-errors.ts';

function answer(status: number, body: unknown) {
  const fetchMock = vi.fn(
    async () => new Response(typeof body === 'string' ? body : JSON.stringify(body), { status }),
  );
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

async function failure(status: number, body: unknown) {
  answer(status, body);
  return callApi('user.whoami', {}).then(
    () => expect.unreachable('the call should fail'),
    (error: unknown) => error,
  );
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('callApi', () => {
  it('posts JSON to the versioned operation URL with the XHR marker', async () => {
    const fetchMock = answer(200, { organizations: [] });
    await expect(callApi('organization.list', {})).resolves.toEqual({ organizations: [] });
    expect(fetchMock).toHaveBeenCalledWith(
      '/.ui-api/organization.list?api-version=2.29',
      expect.objectContaining({
        method: 'POST',
        credentials: 'same-origin',
        body: '{}',
        headers: expect.objectContaining({ 'X-Requested-With': 'XMLHttpRequest' }),
      }),
    );
  });

  it('carries status, code, invalids and params of a failure', async () => {
    const error = await failure(400, {
      error: 'validation error',
      invalids: { emailAddress: ['validation.email'] },
      params: { n: 1 },
    });
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 400,
      code: 'validation error',
      invalids: { emailAddress: ['validation.email'] },
      params: { n: 1 },
    });
  });
});

describe('classifyApiError', () => {
  it('treats any 403 as a lost session', async () => {
    expect(classifyApiError(await failure(403, { error: 'session is invalid' }))).toEqual({
      kind: 'session',
    });
    expect(classifyApiError(await failure(403, 'Forbidden'))).toEqual({ kind: 'session' });
  });

  it('hands validation errors to the form', async () => {
    const error = await failure(400, {
      error: 'validation error',
      invalids: { 'origin.config.host': ['validation.host'] },
    });
    expect(classifyApiError(error)).toEqual({
      kind: 'validation',
      invalids: { 'origin.config.host': ['validation.host'] },
    });
  });

  it('sends a user not activated to the password page', async () => {
    expect(classifyApiError(await failure(412, { error: 'not activated' }))).toEqual({
      kind: 'notActivated',
    });
  });

  it('maps catalogued codes to their messages, with parameters', async () => {
    expect(classifyApiError(await failure(400, { error: 'too many origin exists for this plan' }))).toEqual({
      kind: 'message',
      key: 'error.tooManyOrigins',
      params: {},
    });
    expect(classifyApiError(await failure(404, { error: 'origin not found', params: { id: 42 } }))).toEqual({
      kind: 'message',
      key: 'error.originNotFound',
      params: { id: 42 },
    });
    expect(classifyApiError(await failure(404, { error: 'sql: no rows in result set' }))).toMatchObject({
      key: 'error.activationNotFound',
    });
  });

  it('reports everything else as an internal error', async () => {
    expect(classifyApiError(await failure(400, { error: 'something new' }))).toEqual({ kind: 'internal' });
    expect(classifyApiError(await failure(500, { error: 'internal error' }))).toEqual({ kind: 'internal' });
    expect(classifyApiError(await failure(502, '<html>Bad Gateway</html>'))).toEqual({ kind: 'internal' });
    expect(classifyApiError(new Error('boom'))).toEqual({ kind: 'internal' });

    vi.stubGlobal(
      'fetch',
      vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))),
    );
    const network = await callApi('user.whoami', {}).catch((error: unknown) => error);
    expect(network).toMatchObject({ status: 0, code: 'internal error' });
    expect(classifyApiError(network)).toEqual({ kind: 'internal' });
  });

  it('ignores calls the caller aborted', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => Promise.reject(new DOMException('aborted', 'AbortError'))),
    );
    const aborted = await callApi('user.whoami', {}).catch((error: unknown) => error);
    expect(classifyApiError(aborted)).toEqual({ kind: 'aborted' });
  });
});

describe('applyInvalids', () => {
  it('sets each field by its dot path, with the first message, focusing the first field', () => {
    const setError = vi.fn();
    applyInvalids(setError, {
      'origin.conversionParameters.0.pattern': ['validation.duplicate'],
      password: ['validation.maxLength|n=128', 'validation.password'],
    });
    expect(setError.mock.calls).toEqual([
      [
        'origin.conversionParameters.0.pattern',
        { type: 'server', message: 'validation.duplicate' },
        { shouldFocus: true },
      ],
      ['password', { type: 'server', message: 'validation.maxLength|n=128' }, { shouldFocus: false }],
    ]);
  });
});
