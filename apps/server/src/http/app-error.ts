import type { ErrorCode, Invalids } from '@ukiyo/contract';

/**
 * A refusal with a catalogue code: the dispatcher turns it into `{error, invalids?, params?}`,
 * with a Retry-After header when the refusal says when to come back.
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly details: { invalids?: Invalids; params?: Record<string, string | number> } = {},
    readonly headers: { retryAfterSeconds?: number } = {},
  ) {
    super(code);
  }
}

/** A validation error on named fields, for rules a schema cannot express (uniqueness, ...). */
export function invalid(field: string, ...messages: string[]): AppError {
  return new AppError('validation error', { invalids: { [field]: messages } });
}

/** Runs a write; a unique-key violation (a race past the pre-check) becomes `refusal`. */
export async function uniqueOr<T>(refusal: AppError, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (typeof error === 'object' && error !== null && 'code' in error && error.code === '23505')
      throw refusal;
    throw error;
  }
}
