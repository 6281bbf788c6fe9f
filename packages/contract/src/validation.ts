import { z } from 'zod';
import type { Invalids } from './errors.ts';
import { messageRef } from './messages.ts';

/**
 * Schema builders whose failures carry the spec's message keys (console-spec section 5), so
 * the server's `invalids` and the console's form errors are the same strings.
 */
const requiredOrInvalid = {
  error: (issue: { input: unknown }) =>
    issue.input === undefined || issue.input === null ? 'validation.required' : 'validation.invalid',
};

/** Letters, digits and ._%+- before the @, a domain, and a final part of at least 2 letters. */
export const EMAIL_PATTERN = /^[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}$/;
export const HOSTNAME_PATTERN =
  /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::\d{1,5})?$/;
/** An IPv6 address literal as a URL writes it, in brackets, optionally with a port. */
const BRACKETED_IPV6_PATTERN = /^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;
export const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
export const PASSWORD_MAX = 128;

export const text = (max: number) =>
  z.string(requiredOrInvalid).max(max, messageRef('validation.maxLength', { n: max }));

export const requiredText = (max: number) =>
  z
    .string(requiredOrInvalid)
    .trim()
    .min(1, 'validation.required')
    .max(max, messageRef('validation.maxLength', { n: max }));

export const optionalText = (max: number) => text(max).default('');

export const email = () =>
  z
    .string(requiredOrInvalid)
    .trim()
    .min(1, 'validation.required')
    .max(254, messageRef('validation.maxLength', { n: 254 }))
    .regex(EMAIL_PATTERN, 'validation.email');

/** A password being checked at login: any non-empty string; length is the handler's message. */
export const loginPassword = () => z.string(requiredOrInvalid).min(1, 'validation.required');

/** A new password: alphanumeric and/or special characters, 8 to 128 of them. */
export const newPassword = () =>
  z
    .string(requiredOrInvalid)
    .min(8, messageRef('validation.minLength', { n: 8 }))
    .max(PASSWORD_MAX, messageRef('validation.maxLength', { n: PASSWORD_MAX }))
    .regex(PRINTABLE_ASCII, 'validation.password');

export const id = () => z.number(requiredOrInvalid).int('validation.numeric').positive('validation.invalid');

export const integer = (min: number, max: number) =>
  z
    .number({
      error: (issue) => (issue.input === undefined ? 'validation.required' : 'validation.numeric'),
    })
    .int('validation.numeric')
    .min(min, messageRef('validation.between', { min, max }))
    .max(max, messageRef('validation.between', { min, max }));

export const bool = () => z.boolean(requiredOrInvalid);

/** A host name or IPv4 address, or an IPv6 address in brackets, each with an optional port. */
export const hostname = () =>
  z
    .string(requiredOrInvalid)
    .trim()
    .min(1, 'validation.required')
    .max(253, messageRef('validation.maxLength', { n: 253 }))
    .refine(
      (value) =>
        HOSTNAME_PATTERN.test(value) ||
        (BRACKETED_IPV6_PATTERN.test(value) && URL.canParse(`http://${value}/`)),
      'validation.host',
    );

export const isoDateTime = () => z.iso.datetime({ offset: true, error: 'validation.invalid' });

/** Input for operations that take nothing: an empty object (extra keys are ignored). */
export const empty = () => z.object({}).default({});

const MESSAGE_REF = /^(validation|error|limit)\.[A-Za-z]+(\|.*)?$/;

/** zod issues to `invalids`: dot-joined field paths; the form's own root error is `root`. */
export function invalidsOf(error: z.ZodError): Invalids {
  const invalids: Invalids = {};
  for (const issue of error.issues) {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'root';
    const message = MESSAGE_REF.test(issue.message) ? issue.message : 'validation.invalid';
    const list = (invalids[field] ??= []);
    if (!list.includes(message)) list.push(message);
  }
  return invalids;
}
