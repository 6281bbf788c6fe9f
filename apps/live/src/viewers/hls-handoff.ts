import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { type HlsServedReport, renditionRequestOf } from './hls-serving.ts';
import type { ViewerProcesses } from './processes.ts';

const HEAD_END = Buffer.from('\r\n\r\n');
/** Larger first heads go to node:http. */
const MAX_HEAD_BYTES = 8 * 1024;

/**
 * Gives the viewer processes the LL-HLS connections (viewers/hls-serving.ts): `server`'s
 * connections are read before node:http sees them, and one whose first request is a file of a
 * rendition the processes mirror is handed to one of them (its client's), with the bytes read.
 * Every other connection, and each one a process gives back, goes to node:http with its bytes
 * put back. A connection that sends nothing is closed after the server's headersTimeout, as
 * node:http would close it.
 */
export function handOffHls(
  server: Server,
  processes: ViewerProcesses,
  {
    trustProxy,
    served,
    handedOff,
  }: {
    /** TRUST_PROXY: a request's client is X-Forwarded-For's last entry and its user agent. */
    trustProxy: boolean;
    served: (report: HlsServedReport) => void;
    /** Told of each connection handed to a process. */
    handedOff: () => void;
  },
): void {
  const [toHttp] = server.listeners('connection') as [(socket: Socket) => void];
  server.removeAllListeners('connection');
  const giveToHttp = (socket: Socket, head: Buffer) => {
    if (head.length > 0) socket.unshift(head);
    toHttp.call(server, socket);
    // Reading was paused to choose: node:http's listeners do not resume a paused socket.
    socket.resume();
  };
  processes.serveHls({ served, returned: giveToHttp });
  server.on('connection', (socket: Socket) => {
    if (!processes.servesHls) return toHttp.call(server, socket);
    const quiet = () => socket.destroy();
    const first = (chunk: Buffer) => {
      socket.off('error', quiet);
      socket.off('timeout', quiet);
      socket.off('end', quiet);
      socket.setTimeout(0);
      socket.pause();
      const end = chunk.indexOf(HEAD_END);
      const request =
        end >= 0 && end <= MAX_HEAD_BYTES
          ? renditionRequestOf(chunk.toString('latin1', 0, end), socket.remoteAddress, trustProxy)
          : undefined;
      if (request && processes.handOff(request.key, request.client, socket, chunk)) handedOff();
      else giveToHttp(socket, chunk);
    };
    socket.once('data', first);
    socket.once('error', quiet);
    socket.once('timeout', quiet);
    socket.once('end', quiet);
    socket.setTimeout(server.headersTimeout);
  });
}
