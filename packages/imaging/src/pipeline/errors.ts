// Failures caused by the request or the source image, never by the service: the edge answers
// them with `status` and the message as a short plain-text reason instead of a 500.

export type ImagingErrorCode =
  | 'unsupported-format'
  | 'invalid-image'
  | 'too-large'
  | 'empty-clip'
  | 'overlay-unavailable'
  | 'text-disabled';

const STATUS: Record<ImagingErrorCode, 403 | 422> = {
  'unsupported-format': 422,
  'invalid-image': 422,
  'too-large': 422,
  'empty-clip': 422,
  'overlay-unavailable': 422,
  'text-disabled': 403,
};

export class ImagingError extends Error {
  readonly status: 403 | 422;

  constructor(
    readonly code: ImagingErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ImagingError';
    this.status = STATUS[code];
  }
}
