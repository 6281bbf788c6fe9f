// s3rver ships no types; the edge and live tests and bench/result-cache use this much of it.
declare module 's3rver' {
  import type { AddressInfo } from 'node:net';

  export default class S3rver {
    constructor(options: { port: number; address: string; silent: boolean; directory: string });
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
}
