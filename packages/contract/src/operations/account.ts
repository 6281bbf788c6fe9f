import { z } from 'zod';
import { AuthToken, Channel, LiveUsage, StatusEvent } from '../entities.ts';
import { optionalHttpUrl, RenditionLadder } from '../live-api.ts';
import { operation } from '../operation.ts';
import { Permission } from '../permissions.ts';
import {
  bool,
  email,
  empty,
  id,
  integer,
  isoDateTime,
  optionalText,
  requiredText,
  text,
} from '../validation.ts';

export const accountOperations = {
  /**
   * Token operations need no permission bit, but list, disable and delete reach only the
   * caller's own tokens unless they hold the member-management bit (or are an administrator):
   * others' tokens are left out of the list and answer 'not found'.
   */
  'auth_token.list': operation('auth_token.list', {
    input: z.object({ showDeleted: bool().default(false) }),
    output: z.object({ authTokens: z.array(AuthToken) }),
    access: 'organization',
  }),
  'auth_token.add': operation('auth_token.add', {
    input: z.object({
      authToken: z.object({
        enabled: bool().default(true),
        description: optionalText(200),
        /** null: every permission the organization allows. */
        permission: integer(0, 127).nullable().default(null),
      }),
    }),
    /** The only answer that carries the secret and its encoded bearer form. */
    output: z.object({ authToken: AuthToken, encodedToken: z.string() }),
    access: 'organization',
  }),
  'auth_token.disable': operation('auth_token.disable', {
    input: z.object({ authTokenID: id() }),
    output: z.object({ authToken: AuthToken }),
    access: 'organization',
  }),
  'auth_token.delete': operation('auth_token.delete', {
    input: z.object({ authTokenID: id() }),
    output: z.object({}),
    access: 'organization',
  }),
  'channel.list': operation('channel.list', {
    input: empty(),
    output: z.object({ channels: z.array(Channel) }),
    access: 'organization',
    permission: Permission.channel,
    organizationKind: 'live',
  }),
  'channel.add': operation('channel.add', {
    input: z.object({
      hls: RenditionLadder,
      encryptKeyUri: optionalHttpUrl(),
      authWebhookUrl: optionalHttpUrl(),
      eventWebhookUrl: optionalHttpUrl(),
    }),
    output: z.object({ channel: Channel }),
    access: 'organization',
    permission: Permission.channel,
    organizationKind: 'live',
  }),
  'channel.delete': operation('channel.delete', {
    input: z.object({ id: requiredText(64) }),
    output: z.object({}),
    access: 'organization',
    permission: Permission.channel,
    organizationKind: 'live',
  }),
  /**
   * A short-lived bearer credential for the console's browser publisher: WHIP POST and DELETE of
   * this one channel of the caller's organization until `expiresAt`, nothing else.
   */
  'channel.publish_credential': operation('channel.publish_credential', {
    input: z.object({ channelId: requiredText(64) }),
    output: z.object({ credential: z.string(), expiresAt: z.string() }),
    access: 'organization',
    permission: Permission.channel,
    organizationKind: 'live',
  }),
  /** WebRTC ingest and HLS delivery per channel over a period (/livestreaming, /statistics). */
  'channel.statistics': operation('channel.statistics', {
    input: z.object({ from: isoDateTime(), to: isoDateTime() }),
    output: z.object({
      channels: z.array(
        LiveUsage.extend({
          channelId: z.string(),
          daily: z.array(LiveUsage.extend({ day: z.string() })),
        }),
      ),
      total: LiveUsage,
      daily: z.array(LiveUsage.extend({ day: z.string() })),
    }),
    access: 'organization',
    permission: Permission.statistics,
    organizationKind: 'live',
  }),
  /** The help centre's contact form. */
  'user.mail': operation('user.mail', {
    input: z.object({
      service: requiredText(100),
      category: requiredText(100),
      company: optionalText(200),
      name: requiredText(100),
      emailAddress: email(),
      message: requiredText(10000),
      agreement: z.literal(true, { error: 'validation.agreement' }),
    }),
    output: z.object({}),
    access: 'organization',
  }),
  'status.list': operation('status.list', {
    input: empty(),
    output: z.object({ events: z.array(StatusEvent), externalUrl: z.string().nullable() }),
    access: 'public',
  }),
  'admin.status_save': operation('admin.status_save', {
    input: z.object({
      statusEventID: z.number().int().default(-1),
      kind: z.enum(['incident', 'maintenance'], { error: 'validation.invalid' }),
      title: requiredText(200),
      body: text(10000).default(''),
      state: z.enum(['scheduled', 'in_progress', 'resolved'], { error: 'validation.invalid' }),
      startsAt: isoDateTime(),
      endsAt: isoDateTime().nullable().default(null),
    }),
    output: z.object({ event: StatusEvent }),
    access: 'activated',
    adminOnly: true,
  }),
  'admin.status_delete': operation('admin.status_delete', {
    input: z.object({ statusEventID: id() }),
    output: z.object({}),
    access: 'activated',
    adminOnly: true,
  }),
  'admin.outbox_list': operation('admin.outbox_list', {
    input: empty(),
    output: z.object({
      mails: z.array(
        z.object({
          mailID: z.number(),
          to: z.string(),
          subject: z.string(),
          body: z.string(),
          createdAt: z.string(),
        }),
      ),
    }),
    access: 'activated',
    adminOnly: true,
  }),
  'preview.guest_origin': operation('preview.guest_origin', {
    input: empty(),
    output: z.object({ name: z.string(), edgeUrl: z.string(), samplePaths: z.array(z.string()) }),
    access: 'public',
  }),
};
