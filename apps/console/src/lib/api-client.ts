import {
  API_VERSION,
  UI_API_PREFIX,
  errorMessageKey,
  type Invalids,
  type MessageKey,
  type OperationInput,
  type OperationName,
  type OperationOutput,
  type Operations,
} from '@ukiyo/contract';

/** A failed ui-api call, or a call that never got a well-formed answer (status 0). */
export class ApiError extends Error {
  readonly status: number;
  /** The body's error code; 'internal error' when there was no usable body. */
  readonly code: string;
  readonly invalids: Invalids;
  readonly params: Record<string, string | number>;

  constructor(
    status: number,
    code: string,
    invalids: Invalids = {},
    params: Record<string, string | number> = {},
    options?: { cause?: unknown },
  ) {
    super(`${code} (${status})`, options);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.invalids = invalids;
    this.params = params;
  }

  get messageKey(): MessageKey {
    return errorMessageKey(this.code);
  }
}

export function operationUrl(name: OperationName): string {
  return `${UI_API_PREFIX}${name}?api-version=${API_VERSION}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorFromBody(status: number, body: unknown): ApiError {
  if (!isRecord(body) || typeof body.error !== 'string') return new ApiError(status, 'internal error');
  const invalids = isRecord(body.invalids) ? (body.invalids as Invalids) : {};
  const params = isRecord(body.params) ? (body.params as Record<string, string | number>) : {};
  return new ApiError(status, body.error, invalids, params);
}

/**
 * Calls one ui-api operation. Input and output types come from the contract, so a renamed
 * field breaks the build here rather than at run time. Responses are not re-validated: the
 * server already answers through the same output schemas.
 */
export async function callApi<Name extends OperationName>(
  name: Name,
  input: OperationInput<Operations[Name]>,
  options: { signal?: AbortSignal } = {},
): Promise<OperationOutput<Operations[Name]>> {
  let response: Response;
  try {
    response = await fetch(operationUrl(name), {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Requested-With': 'XMLHttpRequest' },
      body: JSON.stringify(input ?? {}),
      signal: options.signal ?? null,
    });
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === 'AbortError') throw cause;
    throw new ApiError(0, 'internal error', {}, {}, { cause });
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch (cause) {
    throw new ApiError(response.status, 'internal error', {}, {}, { cause });
  }
  if (!response.ok) throw errorFromBody(response.status, body);
  return body as OperationOutput<Operations[Name]>;
}
