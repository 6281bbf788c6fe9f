import { z } from 'zod';
import { AuditEntry, AuditKind, Restriction, User } from '../entities.ts';
import { operation } from '../operation.ts';
import { Permission } from '../permissions.ts';
import {
  bool,
  email,
  empty,
  id,
  integer,
  isoDateTime,
  loginPassword,
  newPassword,
  optionalText,
  requiredText,
  text,
} from '../validation.ts';
import { NewUserInput } from './organization.ts';

const RestrictionInput = Restriction.extend({ organizationIDs: z.array(id()).max(1000).default([]) });
/** Filters and paging of the audit trail: `cursor` is the last entry id of the page before. */
const AuditQuery = z
  .object({
    kind: AuditKind.optional(),
    /** Part of the person's e-mail address or of the API token's name. */
    actor: optionalText(254),
    from: isoDateTime().optional(),
    to: isoDateTime().optional(),
    cursor: id().optional(),
    limit: integer(1, 500).default(100),
  })
  .default({ actor: '', limit: 100 });
const AuditPage = z.object({ entries: z.array(AuditEntry), nextCursor: z.number().nullable() });

const totpCode = () =>
  z
    .string()
    .trim()
    .regex(/^\d{6}$/, 'validation.invalid');

export const userOperations = {
  'user.info': operation('user.info', {
    input: z.object({ userID: id() }),
    output: z.object({ user: User }),
    access: 'session',
  }),
  'user.list': operation('user.list', {
    input: z.object({ organization_id: id().optional() }),
    output: z.object({ users: z.array(User) }),
    access: 'organization',
    permission: Permission.member,
  }),
  'user.add': operation('user.add', {
    input: z.object({
      user: NewUserInput.extend({ restriction: RestrictionInput.optional() }),
      password: newPassword(),
    }),
    output: z.object({ user: User }),
    access: 'organization',
    permission: Permission.member,
  }),
  'user.update': operation('user.update', {
    input: z.object({
      oldEmailAddress: email(),
      emailAddress: email(),
      fullName: requiredText(100),
      permission: integer(0, 127),
      restriction: RestrictionInput.optional(),
      /** Required when a user changes their own e-mail address. */
      password: text(128).optional(),
    }),
    output: z.object({ user: User }),
    access: 'activated',
  }),
  'user.set_enabled': operation('user.set_enabled', {
    input: z.object({ emailAddress: email(), enabled: bool() }),
    output: z.object({ user: User }),
    access: 'organization',
    permission: Permission.member,
  }),
  'user.delete': operation('user.delete', {
    input: z.object({ userID: id() }),
    output: z.object({}),
    access: 'organization',
    permission: Permission.member,
  }),
  /** Sets the first password of a not-yet-activated user (which activates them), or changes it. */
  'user.update_password': operation('user.update_password', {
    input: z.object({ userId: id(), oldPassword: loginPassword(), newPassword: newPassword() }),
    output: z.object({ user: User }),
    access: 'session',
  }),
  'user.activate': operation('user.activate', {
    input: z.object({ token: z.string().min(1, 'validation.required').max(200) }),
    output: z.object({ emailAddress: z.string() }),
    access: 'public',
  }),
  'user.request_password_reset': operation('user.request_password_reset', {
    input: z.object({ emailAddress: email() }),
    output: z.object({}),
    access: 'public',
  }),
  'user.reset_password': operation('user.reset_password', {
    input: z.object({
      token: z.string().min(1, 'validation.required').max(200),
      emailAddress: email(),
      newPassword: newPassword(),
    }),
    output: z.object({}),
    access: 'public',
  }),
  'user.totp_begin': operation('user.totp_begin', {
    input: empty(),
    output: z.object({ otpauthUri: z.string(), qrCodeDataUrl: z.string(), secret: z.string() }),
    access: 'activated',
  }),
  'user.totp_enable': operation('user.totp_enable', {
    input: z.object({ code: totpCode() }),
    output: z.object({ backupCodes: z.array(z.string()) }),
    access: 'activated',
  }),
  'user.totp_disable': operation('user.totp_disable', {
    input: z.object({ password: loginPassword() }),
    output: z.object({}),
    access: 'activated',
  }),
  'user.regenerate_backup_codes': operation('user.regenerate_backup_codes', {
    input: z.object({ password: loginPassword() }),
    output: z.object({ backupCodes: z.array(z.string()) }),
    access: 'activated',
  }),
  /** One's own sign-ins, sign-outs and changes, newest first. */
  'audit.list': operation('audit.list', {
    input: AuditQuery,
    output: AuditPage,
    access: 'activated',
  }),
  /** Every change to the current organization's configuration and every sign-in to it, newest first. */
  'audit.organization_list': operation('audit.organization_list', {
    input: AuditQuery,
    output: AuditPage,
    access: 'organization',
    permission: Permission.member,
  }),
};
