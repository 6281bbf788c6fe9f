import type { Socket } from 'node:net';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { PublishError } from '../ingest/ingest.ts';
import type { Candidate, IceSettings, SoraOffer } from '../ingest/webrtc.ts';
import type { FromHlsServing, HlsServingSettings, ToHlsServing } from './hls-serving.ts';
import type * as ViewerCode from './viewer.ts';
import type { BroadcastDescription, ForwardedMedia, ViewerEnd, WebRtcViewer } from './viewer.ts';

/** The viewer process says it took this many more RTP packets (processes.ts bounds its backlog). */
export const PACKETS_TAKEN_EVERY = 64;

export interface ViewerProcessSettings {
  ice: IceSettings;
  iceGatheringTimeoutMs: number;
  /** LL-HLS served by a child process (hls-serving.ts). */
  hls: HlsServingSettings;
}

/** An operation on one viewer, run in its process, and what it answers. */
export interface ViewerCalls {
  answer: { argument: string; result: string };
  offer: { argument: undefined; result: SoraOffer };
  accept: { argument: string; result: undefined };
  addCandidate: { argument: Candidate; result: undefined };
  close: { argument: ViewerEnd; result: undefined };
}

/** What the live process (processes.ts) sends a viewer process. */
export type ToViewerProcess =
  /** A viewer of `broadcast` begins (its media kept while the process has viewers of it). */
  | { type: 'open'; viewer: string; broadcast: BroadcastDescription }
  | { type: 'call'; call: number; viewer: string; method: keyof ViewerCalls; argument: unknown }
  /** One RTP packet of a broadcast this process has viewers of (video: of a rung they watch). */
  | { type: 'rtp'; broadcast: string; kind: 'video' | 'audio'; rung: number; bytes: Uint8Array }
  /** LL-HLS, to a child process only (hls-serving.ts). */
  | ToHlsServing;

/** What a viewer process sends the live process. */
export type FromViewerProcess =
  /** A call's outcome; `status` is a PublishError's (the viewer's mistake), absent for ours. */
  | { type: 'reply'; call: number; result?: unknown; error?: { message: string; status?: number } }
  | { type: 'ended'; viewer: string; why: ViewerEnd }
  /** A viewer asks for a keyframe (joining, or its decoder lost pictures). */
  | { type: 'keyframe'; broadcast: string }
  /** The video rungs of a broadcast that viewers here watch or wait to start on, now. */
  | { type: 'rungs'; broadcast: string; rungs: number[] }
  /** PACKETS_TAKEN_EVERY more RTP packets taken off the port. */
  | { type: 'taken' }
  /** Its event loop's utilization so far (performance.eventLoopUtilization()), every LOAD_REPORT_MS. */
  | { type: 'load'; utilization: EventLoopUtilization }
  /** LL-HLS, from a child process only (hls-serving.ts). */
  | FromHlsServing;

/** How often a viewer child process reports its load (its guard reads it every few seconds). */
export const LOAD_REPORT_MS = 250;

/** Either end of a viewer process's channel: a MessagePort, or an IPC channel's adapter. */
export interface ViewerPort<Incoming, Outgoing> {
  /** `socket`: one sent with the message (a child process's IPC channel only). */
  on(event: 'message', listener: (message: Incoming, socket?: Socket) => void): void;
  postMessage(message: Outgoing, transfer?: ArrayBuffer[]): void;
  /** A child process's IPC channel only. */
  sendSocket?(message: Outgoing, socket: Socket): void;
  /** A child process's only: bytes of media written to it and not yet taken (media-pipe.ts). */
  readonly mediaBacklog?: number;
}

/**
 * Serves WebRTC viewers in this process, told what to do over `port`: peer connections, their
 * ICE, DTLS and SRTP, and the forwarding of the publisher's packets to them all run here. The
 * child process's entry (viewer-process.entry.ts) serves its IPC channel; with no viewer
 * processes (LIVE_VIEWER_PROCESSES=0) the live process serves one end of a MessageChannel.
 */
export function serveViewers(
  port: ViewerPort<ToViewerProcess, FromViewerProcess>,
  settings: ViewerProcessSettings,
): void {
  const media = new Map<string, { forwarded: ForwardedMedia; viewers: number }>();
  const viewers = new Map<string, WebRtcViewer>();
  const send = (message: FromViewerProcess) => port.postMessage(message);
  let packetsTaken = 0;

  const open = (webRtc: WebRtcCode, id: string, description: BroadcastDescription) => {
    let entry = media.get(description.id);
    if (!entry) {
      const requestKeyframe = () => send({ type: 'keyframe', broadcast: description.id });
      const onRungs = (rungs: number[]) => send({ type: 'rungs', broadcast: description.id, rungs });
      entry = { forwarded: new webRtc.ForwardedMedia(description, requestKeyframe, onRungs), viewers: 0 };
      media.set(description.id, entry);
    }
    entry.viewers++;
    const viewer = new webRtc.WebRtcViewer(id, entry.forwarded, settings.ice, settings.iceGatheringTimeoutMs);
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

  const handle = (webRtc: WebRtcCode, message: ToViewerProcess) => {
    if (message.type === 'rtp') {
      const bytes = Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength);
      media.get(message.broadcast)?.forwarded.forward(message.kind, message.rung, bytes);
      if (++packetsTaken % PACKETS_TAKEN_EVERY === 0) send({ type: 'taken' });
    } else if (message.type === 'open') {
      open(webRtc, message.viewer, message.broadcast);
    } else if (message.type === 'call') {
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
  };

  // The WebRTC code (werift, node-datachannel: most of a child's start) is loaded at the first
  // message, so that a process answering LL-HLS alone starts without it; messages wait in order.
  let webRtc: WebRtcCode | undefined;
  let waiting: ToViewerProcess[] | undefined;
  port.on('message', (message: ToViewerProcess) => {
    if (webRtc) return handle(webRtc, message);
    if (waiting) return void waiting.push(message);
    waiting = [message];
    void import('./viewer.ts').then((code) => {
      for (const queued of waiting!) handle(code, queued);
      waiting = undefined;
      webRtc = code;
    });
  });
}

type WebRtcCode = typeof ViewerCode;
