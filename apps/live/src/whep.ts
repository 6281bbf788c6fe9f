import type { Context, Hono } from 'hono';
import { errorResponse, LiveApiError, type LiveEnv } from './api.ts';
import type { LiveCore } from './core.ts';
import { PEER_HEADER } from './hls/peer-signature.ts';
import { CHANNEL, refuse, refuseTrickle, sdpBodyLimit, sdpCors, sdpOffer } from './whip.ts';

/** Answering an offer takes ICE gathering: up to its 5 s timeout, and the first video's 5 s. */
const PEER_TIMEOUT_MS = 15_000;

/**
 * WHEP (WebRTC-HTTP egress): `POST /whep/{channel_id}` with a viewer's SDP offer answers 201
 * with the SDP answer (every candidate of ours in it) and the viewer's Location; `DELETE` on it
 * ends the viewer. A channel created with playback_token_required takes viewers with a playback
 * token as their bearer (`Authorization: Bearer {token}`). The Location is the viewer's handle:
 * DELETE needs no other credential. With several live processes, a request for a channel
 * published on another is passed on to that process (LIVE_INTERNAL_URL), whose answer names its
 * own ICE candidates: the viewer's media goes to it directly.
 */
export function mountWhep(app: Hono<LiveEnv>, core: LiveCore): void {
  /** The answer of the live process holding the channel's publisher, when another one does. */
  const fromPeer = async (c: Context, channelId: string, body?: string): Promise<Response | undefined> => {
    if (core.served(channelId)?.session || c.req.header(PEER_HEADER) !== undefined) return undefined;
    const peer = await core.peerOf(channelId);
    if (!peer) return undefined;
    const headers: Record<string, string> = { [PEER_HEADER]: '1' };
    for (const name of ['authorization', 'content-type']) {
      const value = c.req.header(name);
      if (value) headers[name] = value;
    }
    const answer = await fetch(`${peer}${c.req.path}`, {
      method: c.req.method,
      headers,
      ...(body === undefined ? {} : { body }),
      signal: AbortSignal.timeout(PEER_TIMEOUT_MS),
    }).catch(() => undefined);
    if (!answer)
      return errorResponse(c, new LiveApiError(502, 'the live process holding this channel did not answer'));
    const passed: Record<string, string> = {};
    for (const name of ['content-type', 'location', 'etag', 'retry-after']) {
      const value = answer.headers.get(name);
      if (value) passed[name] = value;
    }
    return c.body(await answer.text(), answer.status as 201, passed);
  };

  app.use('/whep/*', sdpCors);
  app.post(`/whep/:channel{${CHANNEL}}`, sdpBodyLimit, async (c) => {
    const body = await sdpOffer(c);
    if ('refusal' in body) return body.refusal;
    const channelId = c.req.param('channel');
    const passedOn = await fromPeer(c, channelId, body.offer);
    if (passedOn) return passedOn;
    try {
      let answer = '';
      const token = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
      const viewer = await core.watch(channelId, 'whep', token, async (negotiating) => {
        answer = await negotiating.answer(body.offer);
      });
      return c.body(answer, 201, {
        'Content-Type': 'application/sdp',
        Location: `/whep/${channelId}/${viewer.id}`,
        ETag: `"${viewer.id}"`,
      });
    } catch (error) {
      return refuse(c, error);
    }
  });
  app.delete(`/whep/:channel{${CHANNEL}}/:viewer{[0-9a-f]{1,64}}`, async (c) => {
    const channelId = c.req.param('channel');
    if (await core.unwatch(channelId, c.req.param('viewer'))) return c.body(null, 200);
    return (await fromPeer(c, channelId)) ?? errorResponse(c, new LiveApiError(404, 'no such WHEP session'));
  });
  app.patch(`/whep/:channel{${CHANNEL}}/:viewer{[0-9a-f]{1,64}}`, refuseTrickle);
}
