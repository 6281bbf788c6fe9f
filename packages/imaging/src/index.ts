export {
  canonicalKey,
  defaults,
  formatPath,
  paramLimits,
  paramsFromRaw,
  parseParams,
  parsePath,
  printParams,
  splitParams,
  splitPath,
  type Blur,
  type Clip,
  type FallbackFormat,
  type Font,
  type FormatParam,
  type GeometryParams,
  type Gravity,
  type Mask,
  type Orientation,
  type OverlayParams,
  type ParamsResult,
  type ParsedParams,
  type PathResult,
  type Placement,
  type Prefix,
  type RawParam,
  type SplitPathResult,
  type Rect,
  type Result,
  type Rgba,
  type Rotation,
  type TextParams,
  type ThroughFormat,
  type Unsharp,
} from './grammar';
export { sign, signedPathOf, signPath, verifySignature } from './signing';
export {
  cachePolicy,
  formatExpires,
  isExpired,
  parseExpires,
  type CachePolicy,
  type CachePolicyInput,
} from './expiry';
export {
  applyRules,
  findRule,
  validateRules,
  type ConversionRule,
  type RuleProblem,
  type RuleResolution,
  type RuleSet,
} from './rules';
export { ImagingError, type ImagingErrorCode } from './pipeline/errors';
export { CONTENT_TYPES, type InputFormat, type OutputFormat } from './pipeline/formats';
export { MAX_SIDE } from './pipeline/geometry';
export {
  transform,
  type TransformLimits,
  type TransformRequest,
  type TransformResult,
} from './pipeline/transform';
