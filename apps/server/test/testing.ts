// `@ukiyo/server/testing`: what the other apps' tests share with the server's (the harness, the
// process helpers) and the few internals they check against, so that no test reaches into this
// package's files by relative path.
import type {} from './global-setup.ts';

export * from './harness.ts';
export * from './processes.ts';
export { encodeToken } from '../src/auth/api-tokens.ts';
export { issuePublishCredential, PUBLISH_CREDENTIAL_SECONDS } from '../src/auth/publish-credentials.ts';
export { randomToken, tokenDigest } from '../src/crypto/tokens.ts';
export { SecretBox } from '../src/crypto/secret-box.ts';
export { BAD_TOKENS_PER_ADDRESS } from '../src/http/public-api.ts';
export { rotateWebhookSecret } from '../src/services/webhook-secrets.ts';
