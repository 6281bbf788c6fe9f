// Origin-side conversion parameter rules: a request whose image path starts with a rule's
// pattern is served as the rule's parameters applied to `{path}{rest}`.
//
// Once a rule matches, URL parameters count only where the rule allows overriding
// (!disallowOverride) and the key is listed in overridableParameters; any other URL key is
// ignored, not refused, as ImageFlux does. `sig` and `expires` always come from the URL,
// since they control access rather than conversion.

import { canonicalKey, paramsFromRaw, splitParams, type ParsedParams, type RawParam } from './grammar';

export interface ConversionRule {
  pattern: string;
  path: string;
  parameter: string;
  disallowOverride: boolean;
}

export interface RuleSet {
  rules: readonly ConversionRule[];
  /** Comma-separated parameter keys a URL may set on a rule-governed path. */
  overridableParameters: string;
}

export type RuleResolution =
  | {
      ok: true;
      rule: ConversionRule | null;
      imagePath: string;
      params: ParsedParams;
      /** URL keys dropped because the rule does not let them override. */
      ignored: string[];
    }
  | { ok: false; reason: string };

export interface RuleProblem {
  /** Index in the rule list, or null for overridableParameters. */
  index: number | null;
  field: 'pattern' | 'path' | 'parameter' | 'overridableParameters';
  reason: string;
}

const ACCESS_KEYS: ReadonlySet<string> = new Set(['sig', 'expires']);

/** The rule whose pattern prefixes the image path; the longest pattern wins. */
export function findRule(rules: readonly ConversionRule[], imagePath: string): ConversionRule | null {
  let best: ConversionRule | null = null;
  for (const rule of rules) {
    if (imagePath.startsWith(rule.pattern) && (!best || rule.pattern.length > best.pattern.length))
      best = rule;
  }
  return best;
}

export function applyRules(
  request: { imagePath: string; rawParams: readonly RawParam[] },
  ruleSet: RuleSet,
): RuleResolution {
  const rule = findRule(ruleSet.rules, request.imagePath);
  if (!rule) {
    const parsed = paramsFromRaw(request.rawParams);
    return parsed.ok
      ? { ok: true, rule: null, imagePath: request.imagePath, params: parsed.params, ignored: [] }
      : parsed;
  }
  const split = splitParams(rule.parameter);
  if (!split.ok) return { ok: false, reason: `origin rule ${rule.pattern}: ${split.reason}` };
  const overridable = rule.disallowOverride
    ? new Set<string>()
    : overridableKeys(ruleSet.overridableParameters);
  const fromUrl: RawParam[] = [];
  const ignored: string[] = [];
  for (const param of request.rawParams) {
    const key = keyOf(param);
    if (ACCESS_KEYS.has(key) || overridable.has(key)) fromUrl.push(param);
    else ignored.push(param[0]);
  }
  const overridden = new Set(fromUrl.map(keyOf));
  const merged = [...split.rawParams.filter((param) => !overridden.has(keyOf(param))), ...fromUrl];
  const parsed = paramsFromRaw(merged);
  if (!parsed.ok) return parsed;
  const imagePath = rule.path + request.imagePath.slice(rule.pattern.length);
  return { ok: true, rule, imagePath, params: parsed.params, ignored };
}

/** Problems that make a rule set unusable; empty when it is valid. */
export function validateRules(ruleSet: RuleSet): RuleProblem[] {
  const problems: RuleProblem[] = [];
  const seen = new Set<string>();
  ruleSet.rules.forEach((rule, index) => {
    if (!rule.pattern.startsWith('/'))
      problems.push({ index, field: 'pattern', reason: 'must start with "/"' });
    else if (seen.has(rule.pattern)) problems.push({ index, field: 'pattern', reason: 'duplicate pattern' });
    seen.add(rule.pattern);
    if (!rule.path.startsWith('/')) problems.push({ index, field: 'path', reason: 'must start with "/"' });
    const reason = parameterProblem(rule.parameter);
    if (reason) problems.push({ index, field: 'parameter', reason });
  });
  for (const key of listedKeys(ruleSet.overridableParameters)) {
    const canonical = canonicalKey(key);
    if (canonical === null || ACCESS_KEYS.has(canonical)) {
      problems.push({
        index: null,
        field: 'overridableParameters',
        reason: `not a conversion parameter: ${key}`,
      });
    }
  }
  return problems;
}

function parameterProblem(parameter: string): string | null {
  if (!parameter.trim()) return 'must not be empty';
  const split = splitParams(parameter);
  if (!split.ok) return split.reason;
  if (split.rawParams.some((param) => ACCESS_KEYS.has(keyOf(param))))
    return 'sig and expires belong in the URL';
  const parsed = paramsFromRaw(split.rawParams);
  return parsed.ok ? null : parsed.reason;
}

function overridableKeys(list: string): Set<string> {
  return new Set(listedKeys(list).map((key) => canonicalKey(key) ?? key));
}

function listedKeys(list: string): string[] {
  return list
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean);
}

function keyOf([key]: RawParam): string {
  return canonicalKey(key) ?? key;
}
