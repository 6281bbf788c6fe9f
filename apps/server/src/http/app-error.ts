import type { ErrorCode, Invalids } from '@ukiyo/contract';

/** A refusal with a catalogue code: the dispatcher turns it into `{error, invalids?, params?}`. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly details: { invalids?: Invalids; params?: Record<string, string | number> } = {},
  ) {
    super(code);
  }
}

/** A validation error on named fields, for rules a schema cannot express (uniqueness, ...). */
export function invalid(field: string, ...messages: string[]): AppError {
  return new AppError('validation error', { invalids: { [field]: messages } });
}
