import { z } from 'zod';
import { Organization, User } from '../entities.ts';
import { operation } from '../operation.ts';
import { email, empty, id, loginPassword } from '../validation.ts';

const Session = z.object({ user: User.nullable(), organization: Organization.nullable() });

export const authOperations = {
  'auth.login': operation('auth.login', {
    input: z.object({ emailAddress: email(), password: loginPassword() }),
    output: Session.extend({ totpRequired: z.boolean() }),
    access: 'public',
  }),
  /** The second step of a two-step login: a TOTP code or one unused backup code. */
  'auth.verify_totp': operation('auth.verify_totp', {
    input: z.object({ code: z.string().trim().min(1, 'validation.required').max(32) }),
    output: Session,
    access: 'public',
  }),
  'auth.logout': operation('auth.logout', { input: empty(), output: z.object({}), access: 'public' }),
  'auth.change_organization': operation('auth.change_organization', {
    input: z.object({ organizationID: id() }),
    output: Session,
    access: 'activated',
  }),
  'user.whoami': operation('user.whoami', { input: empty(), output: Session, access: 'public' }),
};
