export * from './entities.ts';
export * from './errors.ts';
export * from './live-api.ts';
export * from './messages.ts';
export * from './operation.ts';
export * from './operations/index.ts';
export {
  HttpConfigInput,
  OriginInput,
  S3ConfigInput,
  ConversionParameterInput,
} from './operations/origin.ts';
export { DeadLetter, JOB_KINDS, type JobKind } from './operations/jobs.ts';
export { NewUserInput, OrganizationInput } from './operations/organization.ts';
export * from './permissions.ts';
export * from './plans.ts';
export * from './public-api.ts';
export * from './samples.ts';
export { generateSigningSecret } from './signing-secret.ts';
export * from './validation.ts';

/** The ui-api version the server answers (console-spec section 9). */
export const API_VERSION = '2.29';
export const UI_API_PREFIX = '/.ui-api/';
export const PRODUCT_NAME = 'Ukiyo';
