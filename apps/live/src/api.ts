import { randomBytes } from 'node:crypto';
import {
  isLiveTarget,
  LIVE_TARGETS,
  Permission,
  type LiveRequest,
  type LiveResponse,
  type LiveTarget,
} from '@ukiyo/contract';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { every } from 'hono/combine';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import {
  AppError,
  bearerAuth,
  createChannelRecord,
  findChannel,
  listChannels,
  publishAuth,
  refusePrivateUrls,
  ingestEndpoints,
  type TokenPrincipal,
} from '@ukiyo/server';
import type { DestinationSecrets } from './archive.ts';
import type { LiveCore } from './core.ts';
import { mintPlaybackToken } from './playback-token-format.ts';
import { playbackKey } from './playback-tokens.ts';
import type { LiveDeps } from './types.ts';

export type LiveEnv = { Variables: { principal: TokenPrincipal } };

/** A refusal of the live API: `{ok: false, error, invalids?}` with this status. */
export class LiveApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly invalids?: Record<string, string[]>,
  ) {
    super(message);
  }
}

export function errorResponse(c: Context, error: LiveApiError) {
  return c.json(
    { ok: false, error: error.message, ...(error.invalids ? { invalids: error.invalids } : {}) },
    error.status,
  );
}

/**
 * The shared bearer check of the public APIs (encoded API token holding the live permission,
 * bit 2) against the token's budget for the live API or for WHIP, where the console's publish
 * credential for the channel also passes; then: the organization must be a live one.
 */
export function liveAuth(deps: LiveDeps, budget: 'live' | 'whip'): MiddlewareHandler<LiveEnv> {
  const bearer = budget === 'whip' ? publishAuth(deps) : bearerAuth(deps, Permission.channel, 'live');
  const live: MiddlewareHandler<LiveEnv> = async (c, next) => {
    if (!c.get('principal').isLive) {
      return errorResponse(c, new LiveApiError(403, 'live streaming is not available for this organization'));
    }
    await next();
  };
  return every(bearer, live);
}

type Implementations = {
  [T in LiveTarget]: (request: LiveRequest<T>, organizationId: number) => Promise<LiveResponse<T>>;
};

const notFound = (what: string) => new LiveApiError(404, `${what} not found`);

function implementations(deps: LiveDeps, core: LiveCore): Implementations {
  const { db, secrets } = deps;
  const allowPrivate = deps.config.ALLOW_PRIVATE_ORIGINS;
  const createChannel = async (
    organizationId: number,
    request: LiveRequest<'ImageFlux_20200316.CreateMultistreamChannel'>,
    ladder: Pick<Parameters<typeof createChannelRecord>[3], 'hls' | 'encryptKeyUri'>,
  ): Promise<LiveResponse<'ImageFlux_20200316.CreateMultistreamChannel'>> => {
    const webhooks = {
      auth_webhook_url: request.auth_webhook_url,
      event_webhook_url: request.event_webhook_url,
    };
    await refusePrivateUrls(webhooks, allowPrivate);
    const row = await createChannelRecord(db, secrets, organizationId, {
      ...ladder,
      authWebhookUrl: webhooks.auth_webhook_url,
      eventWebhookUrl: webhooks.event_webhook_url,
      playbackTokens: request.playback_token_required,
    });
    const ingest = ingestEndpoints(deps.config, secrets, row.id);
    return {
      channel_id: row.id,
      sora_url: ingest.soraUrl,
      whip_url: ingest.whipUrl,
      rtmp_url: ingest.rtmpUrl,
      rtmps_url: ingest.rtmpsUrl,
      stream_key: ingest.streamKey,
      srt_url: ingest.srtUrl,
    };
  };
  return {
    'ImageFlux_20200316.CreateMultistreamChannelWithHLS': (request, organizationId) =>
      createChannel(organizationId, request, { hls: request.hls, encryptKeyUri: request.encrypt_key_uri }),
    'ImageFlux_20200316.CreateMultistreamChannel': (request, organizationId) =>
      createChannel(organizationId, request, { hls: [], encryptKeyUri: '' }),
    'ImageFlux_20200207.ListPlaylistURLs': async ({ channel_id }, organizationId) => {
      const channel = await findChannel(db, organizationId, channel_id);
      if (!channel) throw notFound('channel');
      return {
        channel_id,
        hls:
          channel.playlist_url && channel.connection_id
            ? [{ connection_id: channel.connection_id, playlist_url: channel.playlist_url }]
            : [],
      };
    },
    'ImageFlux_20180501.DeleteChannel': async ({ channel_id }, organizationId) => {
      if (!(await core.deleteChannel(organizationId, channel_id))) throw notFound('channel');
      return {};
    },
    'ImageFlux_20200729.ListChannelIDs': async (_request, organizationId) => ({
      channel_ids: (await listChannels(db, organizationId)).map((channel) => channel.id),
    }),
    'ImageFlux_20190205.CreateArchiveDestination': async (request, organizationId) => {
      const { bucket_uri, ...config } = request;
      await refusePrivateUrls({ aws_end_point: config.aws_end_point }, allowPrivate);
      const row = await db
        .insertInto('archive_destinations')
        .values({
          id: randomBytes(10).toString('hex'),
          organization_id: organizationId,
          bucket_uri,
          config_enc: secrets.seal(JSON.stringify(config satisfies DestinationSecrets)),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { archive_destination_id: row.id };
    },
    'ImageFlux_20190205.DeleteArchiveDestination': async ({ archive_destination_id }, organizationId) => {
      const result = await db
        .deleteFrom('archive_destinations')
        .where('id', '=', archive_destination_id)
        .where('organization_id', '=', organizationId)
        .executeTakeFirst();
      if (result.numDeletedRows === 0n) throw notFound('archive destination');
      return {};
    },
    'ImageFlux_20190205.ListArchiveDestinations': async (_request, organizationId) => {
      const rows = await db
        .selectFrom('archive_destinations')
        .select(['id', 'bucket_uri'])
        .where('organization_id', '=', organizationId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return {
        archive_destinations: rows.map((row) => ({
          archive_destination_id: row.id,
          bucket_uri: row.bucket_uri,
        })),
      };
    },
    'Ukiyo_20261125.CreatePlaybackToken': async ({ channel_id, expires_in_seconds }, organizationId) => {
      const channel = await findChannel(db, organizationId, channel_id);
      if (!channel) throw notFound('channel');
      const key = playbackKey(secrets, channel);
      if (!key) throw new LiveApiError(409, 'the channel was created without playback_token_required');
      const expiresAt = new Date(Date.now() + expires_in_seconds * 1000);
      return {
        channel_id,
        token: mintPlaybackToken(key, channel_id, expiresAt),
        expires_at: expiresAt.toISOString(),
      };
    },
    'ImageFlux_20200707.GetEncryptKey': async ({ kid }, organizationId) => {
      // Deleted channels included: their archived segments still need the key.
      const row = await db
        .selectFrom('channels')
        .select('encrypt_key_enc')
        .where('kid', '=', kid)
        .where('organization_id', '=', organizationId)
        .executeTakeFirst();
      if (!row?.encrypt_key_enc) throw notFound('key');
      return { encrypt_key: secrets.open(row.encrypt_key_enc) };
    },
  };
}

function invalidsOf(error: z.ZodError): Record<string, string[]> {
  const invalids: Record<string, string[]> = {};
  for (const issue of error.issues) {
    const path = issue.path.map(String).join('.') || '(body)';
    (invalids[path] ??= []).push(issue.message);
  }
  return invalids;
}

/**
 * The Sora-style API: `POST /` (or `POST /api`) with `X-Sora-Target: {Namespace_YYYYMMDD}.{Operation}`
 * and a JSON body, validated by the contract's schema for that target.
 */
export function mountLiveApi(
  app: Hono<LiveEnv>,
  deps: LiveDeps,
  auth: MiddlewareHandler<LiveEnv>,
  core: LiveCore,
): void {
  const operations = implementations(deps, core);
  const handler = async (c: Context<LiveEnv>) => {
    const target = c.req.header('x-sora-target') ?? '';
    if (!isLiveTarget(target)) {
      return errorResponse(
        c,
        new LiveApiError(400, `unknown X-Sora-Target: ${target.slice(0, 100) || '(none)'}`),
      );
    }
    const text = await c.req.text();
    let body: unknown = {};
    if (text.trim() !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        return errorResponse(c, new LiveApiError(400, 'the body must be JSON'));
      }
    }
    const { request, response } = LIVE_TARGETS[target];
    const parsed = request.safeParse(body);
    if (!parsed.success) {
      return errorResponse(c, new LiveApiError(400, 'validation error', invalidsOf(parsed.error)));
    }
    try {
      const run = operations[target] as (request: unknown, organizationId: number) => Promise<unknown>;
      const result = await run(parsed.data, c.get('principal').organizationId);
      return c.json(response.parse(result));
    } catch (error) {
      if (error instanceof LiveApiError) return errorResponse(c, error);
      // The console's own checks (archive destinations, private addresses) on the same fields.
      if (error instanceof AppError && error.code === 'validation error')
        return errorResponse(c, new LiveApiError(400, 'validation error', error.details.invalids));
      throw error;
    }
  };
  const limit = bodyLimit({
    maxSize: 1024 * 1024,
    onError: (c) => errorResponse(c, new LiveApiError(413, 'the body is larger than 1 MiB')),
  });
  for (const path of ['/', '/api']) app.post(path, limit, auth, handler);
}
