import type { z } from 'zod';

/**
 * What a caller must have before a handler runs, from least to most:
 * - public: nothing (login, activation, password reset, whoami answering "nobody");
 * - session: a logged-in user, even one not activated yet;
 * - activated: an activated user, with or without a current organization;
 * - organization: an activated user with a current organization.
 */
export type Access = 'public' | 'session' | 'activated' | 'organization';
export type OrganizationKind = 'image' | 'live';

export interface Operation<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  input: I;
  output: O;
  access: Access;
  /** Permission bits all required (0: none). Administrators pass every check. */
  permission: number;
  adminOnly: boolean;
  /** Only for image (non-live) or live organizations. */
  organizationKind?: OrganizationKind;
}

export function operation<I extends z.ZodType, O extends z.ZodType>(
  name: string,
  def: {
    input: I;
    output: O;
    access: Access;
    permission?: number;
    adminOnly?: boolean;
    organizationKind?: OrganizationKind;
  },
): Operation<I, O> {
  return { name, permission: 0, adminOnly: false, ...def };
}

export type OperationInput<Op> = Op extends Operation<infer I, z.ZodType> ? z.input<I> : never;
export type OperationParsedInput<Op> = Op extends Operation<infer I, z.ZodType> ? z.output<I> : never;
export type OperationOutput<Op> = Op extends Operation<z.ZodType, infer O> ? z.output<O> : never;
