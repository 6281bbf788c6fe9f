// A child process of viewers (processes.ts starts them): WebRTC viewers and LL-HLS connections,
// serving the live process over its IPC channel, the settings the last argument.
import { Socket, type Socket as NetSocket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { HlsServing, isHlsMessage } from './hls-serving.ts';
import { FrameReader, MEDIA_PIPE_FD } from './media-pipe.ts';
import {
  LOAD_REPORT_MS,
  serveViewers,
  type FromViewerProcess,
  type ToViewerProcess,
  type ViewerProcessSettings,
} from './viewer-process.ts';

const send = (message: FromViewerProcess, socket?: NetSocket) => {
  if (process.connected) process.send!(message, socket);
};
const settings = JSON.parse(process.argv.at(-1)!) as ViewerProcessSettings;
const hls = new HlsServing(settings.hls, send, (head, socket) => send({ type: 'hls-return', head }, socket));
const media = new Socket({ fd: MEDIA_PIPE_FD, readable: true, writable: false });
const frames = new FrameReader();
serveViewers(
  {
    // The IPC channel's messages and the media pipe's (media-pipe.ts), to HLS serving or viewers.
    on: (event, listener: (message: ToViewerProcess) => void) => {
      const receive = (message: ToViewerProcess, socket?: NetSocket) => {
        if (isHlsMessage(message)) hls.receive(message, socket);
        else listener(message);
      };
      process.on(event, receive);
      media.on('data', (chunk: Buffer) => {
        for (const message of frames.push(chunk)) receive(message);
      });
    },
    postMessage: (message) => send(message),
  },
  settings,
);
// The live process reads this process's load from these: it cannot measure another's loop.
setInterval(() => send({ type: 'load', utilization: performance.eventLoopUtilization() }), LOAD_REPORT_MS);
// The live process gone (or closing), its viewers go with this process.
process.on('disconnect', () => process.exit(0));
// A stop signal sent to the whole process group (Ctrl-C, systemd stopping the unit) is the live
// process's to act on: it drains this process's LL-HLS connections first, then closes the IPC
// channel.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => {});
