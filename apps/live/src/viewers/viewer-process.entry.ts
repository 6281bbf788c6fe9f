// A child process of WebRTC viewers (processes.ts starts them): serves the live process over its
// IPC channel, the settings the last argument.
import { performance } from 'node:perf_hooks';
import {
  LOAD_REPORT_MS,
  serveViewers,
  type FromViewerProcess,
  type ToViewerProcess,
  type ViewerProcessSettings,
} from './viewer-process.ts';

const send = (message: FromViewerProcess) => {
  if (process.connected) process.send!(message);
};
serveViewers(
  {
    on: (event, listener: (message: ToViewerProcess) => void) => process.on(event, listener),
    postMessage: send,
  },
  JSON.parse(process.argv.at(-1)!) as ViewerProcessSettings,
);
// The live process reads this process's load from these: it cannot measure another's loop.
setInterval(() => send({ type: 'load', utilization: performance.eventLoopUtilization() }), LOAD_REPORT_MS);
// The live process gone (or closing), its viewers go with this process.
process.on('disconnect', () => process.exit(0));
