// Failures caused by the request or the source image, never by the service: the edge answers
// them with `status` and the message as a short plain-text reason instead of a 500. A
// transform past its deadline is 503: the same request may well succeed on a quieter edge, as
// may a video on an edge that has ffmpeg.

export type ImagingErrorCode =
  | 'unsupported-format'
  | 'invalid-image'
  | 'unsafe-svg'
  | 'too-large'
  | 'empty-clip'
  | 'overlay-unavailable'
  | 'text-disabled'
  | 'too-costly'
  | 'timeout'
  | 'not-animated'
  | 'video-unavailable';

type ImagingStatus = 400 | 403 | 422 | 503;

const STATUS: Record<ImagingErrorCode, ImagingStatus> = {
  'unsupported-format': 422,
  'invalid-image': 422,
  'unsafe-svg': 422,
  'too-large': 422,
  'empty-clip': 422,
  'overlay-unavailable': 422,
  'text-disabled': 403,
  'too-costly': 422,
  timeout: 503,
  'not-animated': 400,
  'video-unavailable': 503,
};

export class ImagingError extends Error {
  readonly status: ImagingStatus;

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
