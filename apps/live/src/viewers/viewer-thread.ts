import type { MessagePort } from 'node:worker_threads';
import { PublishError } from '../ingest/ingest.ts';
import type { Candidate, IceSettings, SoraOffer } from '../ingest/webrtc.ts';
import { ForwardedMedia, WebRtcViewer, type BroadcastDescription, type ViewerEnd } from './viewer.ts';

/** The thread tells the main thread it took this many more RTP packets (threads.ts bounds its backlog). */
export const PACKETS_TAKEN_EVERY = 64;

export interface ViewerThreadSettings {
  ice: IceSettings;
  iceGatheringTimeoutMs: number;
}

/** An operation on one viewer, run in its thread, and what it answers. */
export interface ViewerCalls {
  answer: { argument: string; result: string };
  offer: { argument: undefined; result: SoraOffer };
  accept: { argument: string; result: undefined };
  addCandidate: { argument: Candidate; result: undefined };
  close: { argument: ViewerEnd; result: undefined };
}

/** What the main thread (threads.ts) sends a viewer thread. */
export type ToViewerThread =
  /** A viewer of `broadcast` begins (its media kept while the thread has viewers of it). */
  | { type: 'open'; viewer: string; broadcast: BroadcastDescription }
  | { type: 'call'; call: number; viewer: string; method: keyof ViewerCalls; argument: unknown }
  /** One RTP packet of a broadcast this thread has viewers of. */
  | { type: 'rtp'; broadcast: string; kind: 'video' | 'audio'; bytes: Uint8Array };

/** What a viewer thread sends the main thread. */
export type FromViewerThread =
  /** A call's outcome; `status` is a PublishError's (the viewer's mistake), absent for ours. */
  | { type: 'reply'; call: number; result?: unknown; error?: { message: string; status?: number } }
  | { type: 'ended'; viewer: string; why: ViewerEnd }
  /** A viewer asks for a keyframe (joining, or its decoder lost pictures). */
  | { type: 'keyframe'; broadcast: string }
  /** PACKETS_TAKEN_EVERY more RTP packets taken off the port. */
  | { type: 'taken' }
  | { type: 'warn'; viewer: string; message: string; error: string };

/**
 * Serves WebRTC viewers on this thread, told what to do over `port`: peer connections, their
 * ICE, DTLS and SRTP, and the forwarding of the publisher's packets to them all run here. The
 * worker entry (viewer-thread.entry.ts) serves its parent port; with no worker threads
 * (LIVE_VIEWER_THREADS=0) the main thread serves one end of a MessageChannel.
 */
export function serveViewers(port: MessagePort, settings: ViewerThreadSettings): void {
  const media = new Map<string, { forwarded: ForwardedMedia; viewers: number }>();
  const viewers = new Map<string, WebRtcViewer>();
  const send = (message: FromViewerThread) => port.postMessage(message);
  let packetsTaken = 0;

  const open = (id: string, description: BroadcastDescription) => {
    let entry = media.get(description.id);
    if (!entry) {
      const requestKeyframe = () => send({ type: 'keyframe', broadcast: description.id });
      entry = { forwarded: new ForwardedMedia(description, requestKeyframe), viewers: 0 };
      media.set(description.id, entry);
    }
    entry.viewers++;
    const viewer = new WebRtcViewer(
      id,
      entry.forwarded,
      settings.ice,
      settings.iceGatheringTimeoutMs,
      (message, error) => send({ type: 'warn', viewer: id, message, error: String(error) }),
    );
    viewers.set(id, viewer);
    void viewer.ended.then((why) => {
      viewers.delete(id);
      if (--entry.viewers === 0) media.delete(description.id);
      send({ type: 'ended', viewer: id, why });
    });
  };

  const run = (viewer: WebRtcViewer, method: keyof ViewerCalls, argument: unknown): Promise<unknown> => {
    switch (method) {
      case 'answer':
        return viewer.answer(argument as string);
      case 'offer':
        return viewer.offer();
      case 'accept':
        return viewer.accept(argument as string);
      case 'addCandidate':
        return viewer.addCandidate(argument as Candidate);
      case 'close':
        return viewer.close(argument as ViewerEnd);
    }
  };

  port.on('message', (message: ToViewerThread) => {
    if (message.type === 'rtp') {
      const bytes = Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength);
      media.get(message.broadcast)?.forwarded.forward(message.kind, bytes);
      if (++packetsTaken % PACKETS_TAKEN_EVERY === 0) send({ type: 'taken' });
    } else if (message.type === 'open') {
      open(message.viewer, message.broadcast);
    } else {
      const viewer = viewers.get(message.viewer);
      // A viewer already gone: closing it again is done, anything else comes too late.
      const outcome = viewer
        ? run(viewer, message.method, message.argument)
        : message.method === 'close'
          ? Promise.resolve()
          : Promise.reject(new PublishError(404, 'the viewer has ended'));
      outcome.then(
        (result) => send({ type: 'reply', call: message.call, result }),
        (error: unknown) =>
          send({
            type: 'reply',
            call: message.call,
            error: {
              message: error instanceof Error ? error.message : String(error),
              ...(error instanceof PublishError ? { status: error.status } : {}),
            },
          }),
      );
    }
  });
}
