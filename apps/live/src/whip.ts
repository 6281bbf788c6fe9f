import type { Context, Hono, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { errorResponse, LiveApiError, type LiveEnv } from './api.ts';
import type { LiveCore } from './core.ts';
import { PublishError } from './ingest/ingest.ts';

export const CHANNEL = '[0-9a-f]{1,64}';

/** When a viewer refused for want of room may try again. */
const NO_ROOM_RETRY_AFTER_SECONDS = 5;

/** A refusal of a publisher or viewer as the error body; anything else is the server's fault. */
export function refuse(c: Context, error: unknown) {
  if (!(error instanceof PublishError)) throw error;
  // 503: no room for another viewer now, which a viewer a little later may find.
  if (error.status === 503) c.header('Retry-After', String(NO_ROOM_RETRY_AFTER_SECONDS));
  return errorResponse(c, new LiveApiError(error.status as 400, error.message));
}

/** At most 64 KiB of SDP per offer. */
export const sdpBodyLimit = bodyLimit({
  maxSize: 64 * 1024,
  onError: (c) => errorResponse(c, new LiveApiError(413, 'the SDP offer is larger than 64 KiB')),
});

/** CORS of WHIP and WHEP: browsers publish and view from any origin. */
export const sdpCors = cors({
  origin: '*',
  allowMethods: ['POST', 'DELETE', 'PATCH', 'OPTIONS'],
  allowHeaders: ['Authorization', 'Content-Type', 'If-Match'],
  exposeHeaders: ['Location', 'ETag', 'Link'],
  maxAge: 86400,
});

/** PATCH on a session: the answer carries every candidate, trickle ICE and ICE restarts are not taken. */
export const refuseTrickle = (c: Context) =>
  c.body('trickle ICE and ICE restarts are not supported', 405, { Allow: 'DELETE' });

/** The request's SDP offer, or the error answer when it is not one. */
export async function sdpOffer(c: Context): Promise<{ offer: string } | { refusal: Response }> {
  if (!/^application\/sdp\b/i.test(c.req.header('content-type') ?? '')) {
    return { refusal: errorResponse(c, new LiveApiError(415, 'the offer must be sent as application/sdp')) };
  }
  const offer = await c.req.text();
  if (!offer.startsWith('v=0')) {
    return { refusal: errorResponse(c, new LiveApiError(400, 'the body is not an SDP offer')) };
  }
  return { offer };
}

/**
 * WHIP (RFC 9725): `POST /whip/{channel_id}` with an SDP offer answers 201 with the SDP answer
 * and the session's Location; `DELETE` on it ends the session. CORS lets browsers publish.
 * No trickle ICE or ICE restart: the answer carries every candidate, so PATCH is 405.
 */
export function mountWhip(app: Hono<LiveEnv>, auth: MiddlewareHandler<LiveEnv>, core: LiveCore): void {
  app.use('/whip/*', sdpCors);
  app.post(`/whip/:channel{${CHANNEL}}`, sdpBodyLimit, auth, async (c) => {
    const body = await sdpOffer(c);
    if ('refusal' in body) return body.refusal;
    const { offer } = body;
    const channelId = c.req.param('channel');
    try {
      const ingest = core.webRtcIngest('whip');
      let answer = '';
      const { connectionId } = await core.publish(
        c.get('principal').organizationId,
        channelId,
        ingest,
        async () => {
          answer = await ingest.answer(offer);
        },
      );
      return c.body(answer, 201, {
        'Content-Type': 'application/sdp',
        Location: `/whip/${channelId}/${connectionId}`,
        ETag: `"${connectionId}"`,
      });
    } catch (error) {
      return refuse(c, error);
    }
  });
  app.delete(`/whip/:channel{${CHANNEL}}/:connection{[0-9a-f]{1,64}}`, auth, async (c) => {
    const ended = await core.unpublish(
      c.get('principal').organizationId,
      c.req.param('channel'),
      c.req.param('connection'),
    );
    if (!ended) return errorResponse(c, new LiveApiError(404, 'no such WHIP session'));
    return c.body(null, 200);
  });
  app.patch(`/whip/:channel{${CHANNEL}}/:connection{[0-9a-f]{1,64}}`, refuseTrickle);
}
