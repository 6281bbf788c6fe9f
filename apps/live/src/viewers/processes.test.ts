import type { ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  MediaStreamTrack,
  RTCPeerConnection,
  RTCRtpCodecParameters,
  RtpHeader,
  RtpPacket,
  useH264,
} from 'werift';
import { TEST_VIEWER_SETTINGS } from '../testing/viewer-settings.ts';
import { Broadcast, viewerProcessCount, ViewerProcess, ViewerProcesses } from './processes.ts';

const H264 = new RTCRtpCodecParameters({
  mimeType: 'video/H264',
  clockRate: 90_000,
  payloadType: 96,
  parameters: 'level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f',
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A werift viewer of `processes`' broadcast, connected; counts the RTP packets it receives. */
async function connectViewer(processes: ViewerProcesses, broadcast: Broadcast) {
  const room = processes.admit()!;
  const viewer = room.process.open(broadcast);
  void viewer.ended.then(room.left);
  const pc = new RTCPeerConnection({
    codecs: { video: [useH264()] },
    iceAdditionalHostAddresses: ['127.0.0.1'],
  });
  cleanups.push(() => pc.close());
  let received = 0;
  pc.onTrack.subscribe((track) => track.onReceiveRtp.subscribe(() => void received++));
  pc.addTransceiver('video', { direction: 'recvonly' });
  await pc.setLocalDescription(await pc.createOffer());
  await pc.setRemoteDescription({ type: 'answer', sdp: await viewer.answer(pc.localDescription!.sdp) });
  await pc.connectionStateChange.watch((state) => state === 'connected', 10_000);
  return { viewer, process: room.process, received: () => received };
}

/** Viewer processes as the live process runs them, with a broadcast sending a keyframe every 20 ms. */
function publishing(loadWindowMs: number) {
  const children: ChildProcess[] = [];
  const processes = new ViewerProcesses(
    {
      processes: 1,
      maxLoad: 1,
      loadWindowMs,
      settings: TEST_VIEWER_SETTINGS,
    },
    pino({ level: 'silent' }),
    () => {},
    (child) => children.push(child),
  );
  cleanups.push(() => processes.close());
  const track = new MediaStreamTrack({ kind: 'video', codec: H264 });
  const broadcast = new Broadcast(
    { video: { track, codec: H264 }, audio: undefined, requestKeyframe: () => {} },
    'stream',
    { organizationId: 1, channelId: 'channel' },
    processes,
  );
  cleanups.push(async () => broadcast.close());
  // Every packet a keyframe's first (an SPS): a viewer starts at once.
  let sequenceNumber = 0;
  const timer = setInterval(() => {
    sequenceNumber++;
    const header = new RtpHeader({
      payloadType: 96,
      sequenceNumber,
      timestamp: sequenceNumber * 3000,
      ssrc: 7,
    });
    track.writeRtp(new RtpPacket(header, Buffer.from([0x67, 0x42, 0xe0, 0x1f])));
  }, 20);
  cleanups.push(async () => clearInterval(timer));
  return { processes, broadcast, children };
}

// Each test starts child processes (a second after one is killed) and connects viewers to them:
// more than the default 5 s on a loaded machine.
describe('ViewerProcesses', { timeout: 20_000 }, () => {
  it('forwards to a viewer in a child process; a process that dies ends its viewers and is replaced', async () => {
    const { processes, broadcast, children } = publishing(60_000);
    const first = await connectViewer(processes, broadcast);
    await expect.poll(first.received, { timeout: 5_000 }).toBeGreaterThan(5);

    children[0]!.kill('SIGKILL');
    await expect(first.viewer.ended).resolves.toBe('closed');

    const second = await connectViewer(processes, broadcast);
    expect(children).toHaveLength(2);
    expect(second.process).not.toBe(first.process);
    await expect.poll(second.received, { timeout: 5_000 }).toBeGreaterThan(5);
  });

  it("reads a child process's load as it reports it", async () => {
    const { processes, broadcast } = publishing(500);
    const viewer = await connectViewer(processes, broadcast);
    await expect.poll(viewer.received, { timeout: 5_000 }).toBeGreaterThan(5);
    await expect.poll(() => processes.load, { timeout: 5_000 }).toBeGreaterThan(0);
    expect(processes.load).toBeLessThan(1);
  });

  it('ends its child processes when closed, and they leave stop signals to it', async () => {
    const { processes, broadcast, children } = publishing(60_000);
    const viewer = await connectViewer(processes, broadcast);
    // As a stop signal to the process group (Ctrl-C, systemd) reaches them too: the live process
    // drains them before it closes them.
    children[0]!.kill('SIGTERM');
    children[0]!.kill('SIGINT');
    const before = viewer.received();
    await expect.poll(viewer.received, { timeout: 5_000 }).toBeGreaterThan(before + 5);
    expect(children[0]!.exitCode ?? children[0]!.signalCode).toBeNull();
    await processes.close();
    expect(children[0]!.exitCode ?? children[0]!.signalCode).not.toBeNull();
  });
});

describe('ViewerProcess', () => {
  it('sends a process that stops taking packets no more than its backlog allows', async () => {
    const options = {
      processes: 1,
      maxLoad: 1,
      loadWindowMs: 60_000,
      settings: TEST_VIEWER_SETTINGS,
    };
    const { port1, port2 } = new MessageChannel();
    const viewers = new ViewerProcess(
      port1,
      performance.eventLoopUtilization,
      options,
      new ViewerProcesses(options, pino({ level: 'silent' }), () => {}),
    );
    cleanups.push(async () => {
      viewers.fail(new Error('done'));
      port1.close();
    });
    const packet = Buffer.alloc(1_200);
    for (let sent = 0; sent < 3_000; sent++) viewers.postPacket('b', 'video', 0, packet);
    let received = 0;
    port2.on('message', () => void received++);
    await expect.poll(() => received).toBe(2_048);
    // The process took 64: that many more go.
    port2.postMessage({ type: 'taken' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (let sent = 0; sent < 100; sent++) viewers.postPacket('b', 'video', 0, packet);
    await expect.poll(() => received).toBe(2_048 + 64);
  });
});

describe('viewerProcessCount', () => {
  it('reads LIVE_VIEWER_PROCESSES, else its earlier name with a warning, else one per core', () => {
    const warnings: unknown[] = [];
    const log = { warn: (message: unknown) => void warnings.push(message) };
    expect(viewerProcessCount({ LIVE_VIEWER_PROCESSES: 0, LIVE_VIEWER_THREADS: 3 }, log)).toBe(0);
    expect(
      viewerProcessCount({ LIVE_VIEWER_PROCESSES: undefined, LIVE_VIEWER_THREADS: undefined }, log),
    ).toBe(availableParallelism());
    expect(warnings).toEqual([]);
    expect(viewerProcessCount({ LIVE_VIEWER_PROCESSES: undefined, LIVE_VIEWER_THREADS: 3 }, log)).toBe(3);
    expect(warnings).toEqual([expect.stringContaining('LIVE_VIEWER_PROCESSES')]);
  });
});
