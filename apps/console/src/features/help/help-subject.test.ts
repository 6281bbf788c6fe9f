import { describe, expect, it } from 'vitest';
import { helpSubjectOf, helpSubjectPath } from './help-subject.ts';

describe('help subject', () => {
  it('reads back the subject it wrote', () => {
    const path = helpSubjectPath({ kind: 'plan', plan: 4 });
    expect(path).toBe('/help/?subject=plan&plan=4#help-contact');
    const query = new URL(path, 'http://console.test').searchParams;
    expect(helpSubjectOf(query)).toEqual({ kind: 'plan', plan: 4 });
  });

  it('ignores unknown subjects and plans that are not numbers', () => {
    expect(helpSubjectOf(new URLSearchParams('subject=other&plan=2'))).toBeNull();
    expect(helpSubjectOf(new URLSearchParams('subject=plan&plan=x'))).toBeNull();
    expect(helpSubjectOf(new URLSearchParams(''))).toBeNull();
    expect(helpSubjectOf(new URLSearchParams('subject=plan&plan=9'))).toEqual({ kind: 'plan', plan: 4 });
  });
});
