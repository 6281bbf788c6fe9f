/**
 * The check every form with a password confirmation adds to its operation's schema, as the
 * arguments of zod's `refine`: the mismatch is reported on the confirmation, where the user typed
 * last. The console has no zod of its own, hence arguments rather than a schema helper.
 */
export function confirmationMatches<Field extends string>(
  field: Field,
): [(form: Record<Field | 'confirmation', string>) => boolean, { path: string[]; message: string }] {
  return [
    (form) => form[field] === form.confirmation,
    { path: ['confirmation'], message: 'validation.notMatch' },
  ];
}
