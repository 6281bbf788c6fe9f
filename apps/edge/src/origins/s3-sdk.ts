// The AWS SDK's S3 client is some 5 MB of heap, which every garbage collection marks again, and
// a collection comes every few dozen misses (sharp's output buffers set it off). Most edges have
// no S3 origin and no shared tier: it loads at the first use instead of at start-up.
import type * as S3 from '@aws-sdk/client-s3';

export type S3Sdk = typeof S3;

let loading: Promise<S3Sdk> | undefined;

export function s3Sdk(): Promise<S3Sdk> {
  loading ??= import('@aws-sdk/client-s3');
  return loading;
}
