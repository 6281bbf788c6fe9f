import { describe, expect, it } from 'vitest';
import { splitPath } from './grammar';
import { applyRules, findRule, validateRules, type ConversionRule, type RuleSet } from './rules';

const thumb: ConversionRule = {
  pattern: '/thumb/',
  path: '/images/',
  parameter: 'w=200,h=200,a=2',
  disallowOverride: false,
};
const thumbLarge: ConversionRule = {
  pattern: '/thumb/large/',
  path: '/images/',
  parameter: 'w=800',
  disallowOverride: false,
};
const fixed: ConversionRule = {
  pattern: '/fixed/',
  path: '/',
  parameter: 'w=100,f=webp:auto',
  disallowOverride: true,
};
const ruleSet: RuleSet = { rules: [thumb, thumbLarge, fixed], overridableParameters: 'w, f,c' };

function resolve(path: string, set: RuleSet = ruleSet) {
  const split = splitPath(path);
  if (!split.ok) throw new Error(split.reason);
  return applyRules(split, set);
}

describe('rules', () => {
  it('picks the longest matching pattern', () => {
    expect(findRule(ruleSet.rules, '/thumb/large/a.jpg')).toBe(thumbLarge);
    expect(findRule(ruleSet.rules, '/thumb/a.jpg')).toBe(thumb);
    expect(findRule(ruleSet.rules, '/images/a.jpg')).toBeNull();
  });

  it('maps the path and applies the rule parameters', () => {
    expect(resolve('/thumb/a/b.jpg')).toEqual({
      ok: true,
      rule: thumb,
      imagePath: '/images/a/b.jpg',
      params: { w: 200, h: 200, a: 2 },
      ignored: [],
    });
    expect(resolve('/fixed/x.png')).toMatchObject({
      imagePath: '/x.png',
      params: { w: 100, f: 'webp:auto' },
    });
  });

  it('lets overridable URL parameters override and ignores the others', () => {
    expect(resolve('/w=300,h=50,c=0:0:10:10,sig=1.x/thumb/a.jpg')).toEqual({
      ok: true,
      rule: thumb,
      imagePath: '/images/a.jpg',
      params: {
        w: 300,
        h: 200,
        a: 2,
        oc: { unit: 'px', rect: { x1: 0, y1: 0, x2: 10, y2: 10 } },
        sig: '1.x',
      },
      ignored: ['h'],
    });
    expect(resolve('/w=1,a=1/thumb/a.jpg')).toMatchObject({ params: { w: 1, h: 200, a: 2 }, ignored: ['a'] });
  });

  it('ignores every URL conversion parameter when the rule disallows overriding', () => {
    expect(resolve('/w=300,zoom=2,expires=2030-01-01T00:00:00Z/fixed/a.jpg')).toMatchObject({
      params: { w: 100, f: 'webp:auto', expires: Date.UTC(2030, 0, 1) / 1000 },
      ignored: ['w', 'zoom'],
    });
  });

  it('uses the URL as is without a matching rule', () => {
    expect(resolve('/w=300/images/a.jpg')).toEqual({
      ok: true,
      rule: null,
      imagePath: '/images/a.jpg',
      params: { w: 300 },
      ignored: [],
    });
    expect(resolve('/zoom=1/images/a.jpg')).toEqual({ ok: false, reason: 'unknown parameter "zoom"' });
  });

  it('reports a bad overriding value or a broken rule', () => {
    expect(resolve('/w=0/thumb/a.jpg')).toEqual({ ok: false, reason: 'w: must be 1..65535' });
    const broken = { rules: [{ ...thumb, parameter: 'w=1,,h=2' }], overridableParameters: '' };
    expect(resolve('/thumb/a.jpg', broken)).toEqual({
      ok: false,
      reason: 'origin rule /thumb/: empty parameter',
    });
  });

  it('validates rule sets', () => {
    expect(validateRules(ruleSet)).toEqual([]);
    expect(
      validateRules({
        rules: [
          thumb,
          { ...thumb, path: 'images' },
          { pattern: 'x', path: '/', parameter: ' ', disallowOverride: false },
          { pattern: '/a/', path: '/', parameter: 'w=200,zoom=1', disallowOverride: false },
          { pattern: '/b/', path: '/', parameter: 'w=200,sig=1.x', disallowOverride: false },
        ],
        overridableParameters: 'w,zoom,expires',
      }),
    ).toEqual([
      { index: 1, field: 'pattern', reason: 'duplicate pattern' },
      { index: 1, field: 'path', reason: 'must start with "/"' },
      { index: 2, field: 'pattern', reason: 'must start with "/"' },
      { index: 2, field: 'parameter', reason: 'must not be empty' },
      { index: 3, field: 'parameter', reason: 'unknown parameter "zoom"' },
      { index: 4, field: 'parameter', reason: 'sig and expires belong in the URL' },
      { index: null, field: 'overridableParameters', reason: 'not a conversion parameter: zoom' },
      { index: null, field: 'overridableParameters', reason: 'not a conversion parameter: expires' },
    ]);
  });
});
