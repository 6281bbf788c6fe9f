import { normalisePlan, type PlanNumber } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';

/** The contact form's section, which the navigation scrolls to by its id. */
export const HELP_CONTACT_ID = 'help-contact';

/** What a page may ask the contact form to be about: the form fills its category and message. */
export type HelpSubject = { kind: 'plan'; plan: PlanNumber };

/** The help centre's contact form about `subject` (read back by helpSubjectOf). */
export function helpSubjectPath(subject: HelpSubject): string {
  const query = new URLSearchParams({ subject: subject.kind, plan: String(subject.plan) });
  return `${paths.help()}?${query.toString()}#${HELP_CONTACT_ID}`;
}

/** The subject of the help page's query, when it names a known one; anything else is none. */
export function helpSubjectOf(query: URLSearchParams): HelpSubject | null {
  const plan = Number(query.get('plan'));
  if (query.get('subject') === 'plan' && Number.isInteger(plan) && plan >= 1) {
    return { kind: 'plan', plan: normalisePlan(plan) };
  }
  return null;
}
